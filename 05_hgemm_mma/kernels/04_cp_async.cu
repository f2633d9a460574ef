/* Stage 4 — cp.async global -> shared copies and a multi-stage pipeline (2, 3, 4 stages).
 *
 * Change from stage 3: copies go global -> shared with cp.async (SASS: LDGSTS), which does not
 * pass through registers and does not block the thread. So a block keeps STAGES - 1 k-tiles in
 * flight while it computes on the current one: the prologue issues tiles 0 .. STAGES-2, and
 * each iteration waits for the oldest (cp.async.wait_group STAGES-2), issues the next one into
 * the buffer freed by the previous iteration, and computes. One barrier per k-tile instead of
 * two, and the DRAM latency (~1 us) hides behind STAGES - 1 tiles of mma work.
 * Edges: cp.async's src-size operand zero-fills chunks outside the matrix.
 *
 * Three rows, one template: cp_async2 (double buffering), cp_async3, cp_async4. More stages
 * hide more latency but take more shared memory (20 KiB per stage here), which can cost
 * resident blocks; the README's table says which wins on our GPU. */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

#define BM 128
#define BN 128
#define BK 32
#define PAD 8          /* halves of padding per shared-memory row */
#define LDS (BK + PAD) /* row stride in halves: 80 bytes */
#define WARPS_M 2
#define WARPS_N 4
#define THREADS (WARPS_M * WARPS_N * 32)
#define WM (BM / WARPS_M) /* 64 */
#define WN (BN / WARPS_N) /* 32 */
#define MT (WM / 16)
#define NT (WN / 8)
#define CHUNKS_PER_ROW (BK / 8)

/* Stores two neighbouring fp32 results of row r, columns c and c+1, as fp16, inside the matrix.
 * A half2 store needs a 4-byte aligned address: c is even, so N must be even too. */
__device__ __forceinline__ void store_pair(f16_t *C, int M, int N, int r, int c, float v0,
                                           float v1) {
    if (r >= M) return;
    f16_t *dst = C + (size_t)r * N + c;
    if (N % 2 == 0 && c < N) {
        *(__half2 *)dst = __floats2half2_rn(v0, v1);
    } else {
        if (c < N) dst[0] = __float2half_rn(v0);
        if (c + 1 < N) dst[1] = __float2half_rn(v1);
    }
}

template <int STAGES>
static __global__ void __launch_bounds__(THREADS)
    cp_async_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B, f16_t *__restrict__ C,
                    int M, int N, int K) {
    extern __shared__ __align__(16) unsigned char smem[];
    f16_t(*a_tiles)[BM][LDS] = (f16_t(*)[BM][LDS])smem;
    f16_t(*b_tiles)[BN][LDS] = (f16_t(*)[BN][LDS])(smem + STAGES * BM * LDS * 2);
    const int block_m = blockIdx.y * BM, block_n = blockIdx.x * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = (warp / WARPS_N) * WM, warp_n = (warp % WARPS_N) * WN;
    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;

    const int k_tiles = (K + BK - 1) / BK;
    /* Issue the copies of k-tile t into buffer t % STAGES. */
    auto load = [&](int t) {
        int s = t % STAGES, k0 = t * BK;
#pragma unroll
        for (int i = 0; i < BM * CHUNKS_PER_ROW / THREADS; i++) {
            int id = threadIdx.x + i * THREADS, row = id / CHUNKS_PER_ROW;
            int k = (id % CHUNKS_PER_ROW) * 8;
            bool a_ok = block_m + row < M && k0 + k < K, b_ok = block_n + row < N && k0 + k < K;
            cp_async_16_zfill(&a_tiles[s][row][k],
                              a_ok ? &A[(size_t)(block_m + row) * K + k0 + k] : A, a_ok ? 16 : 0);
            cp_async_16_zfill(&b_tiles[s][row][k],
                              b_ok ? &B[(size_t)(block_n + row) * K + k0 + k] : B, b_ok ? 16 : 0);
        }
    };
#pragma unroll
    for (int t = 0; t < STAGES - 1; t++) {
        if (t < k_tiles) load(t);
        cp_async_commit(); /* empty groups too: wait_group counts groups */
    }
    for (int kt = 0; kt < k_tiles; kt++) {
        cp_async_wait<STAGES - 2>(); /* k-tile kt has landed (for this thread's copies) */
        __syncthreads();             /* for everyone's; and k-tile kt-1's buffer is free */
        if (kt + STAGES - 1 < k_tiles) load(kt + STAGES - 1);
        cp_async_commit();
        f16_t(*As)[LDS] = a_tiles[kt % STAGES];
        f16_t(*Bs)[LDS] = b_tiles[kt % STAGES];
        /* A: lane l gives row l % 16 of the 16x16 tile, k-chunk l / 16 (a0..a3 in order).
         * B: lane l gives n-row (l % 8) + 8 * (l / 16), k-chunk (l / 8) % 2: b0, b1 of n tile
         * j, then of n tile j+1. */
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            unsigned fa[MT][4], fb[NT][2];
#pragma unroll
            for (int i = 0; i < MT; i++)
                ldmatrix_x4(fa[i][0], fa[i][1], fa[i][2], fa[i][3],
                            smem_addr(&As[warp_m + i * 16 + lane % 16][kk * 16 + (lane / 16) * 8]));
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_x4(fb[j][0], fb[j][1], fb[j + 1][0], fb[j + 1][1],
                            smem_addr(&Bs[warp_n + j * 8 + lane % 8 + 8 * (lane / 16)]
                                         [kk * 16 + ((lane / 8) % 2) * 8]));
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int j = 0; j < NT; j++) mma_m16n8k16_f32(acc[i][j], fa[i], fb[j]);
        }
    }
    cp_async_wait<0>();

    const int g = lane / 4, p = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) {
            int r = block_m + warp_m + i * 16 + g, c = block_n + warp_n + j * 8 + p;
            store_pair(C, M, N, r, c, acc[i][j][0], acc[i][j][1]);
            store_pair(C, M, N, r + 8, c, acc[i][j][2], acc[i][j][3]);
        }
}

template <int STAGES>
static int launch_stages(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                         cudaStream_t stream) {
    const int smem = HGEMM_SMEM_CP_ASYNC(STAGES);
    static bool attr_set;
    if (!attr_set) {
        cudaFuncSetAttribute(cp_async_kernel<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem);
        attr_set = true;
    }
    dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    cp_async_kernel<STAGES><<<grid, THREADS, smem, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}

extern "C" int STAGE(hgemm_cp_async_2stage)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                            int K, cudaStream_t stream) {
    return launch_stages<2>(A, B, C, M, N, K, stream);
}
extern "C" int STAGE(hgemm_cp_async_3stage)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                            int K, cudaStream_t stream) {
    return launch_stages<3>(A, B, C, M, N, K, stream);
}
extern "C" int STAGE(hgemm_cp_async_4stage)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                            int K, cudaStream_t stream) {
    return launch_stages<4>(A, B, C, M, N, K, stream);
}
