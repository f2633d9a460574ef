/* Stage 3 — mma.sync m16n8k16 through inline PTX, fragments loaded with ldmatrix.
 *
 * Change from stage 2: WMMA is replaced by what it compiles to, written out: each warp issues
 * mma.sync.m16n8k16 (common/ptx/mma.cuh) on fragments it loads itself with ldmatrix.x4
 * (common/ptx/ldmatrix.cuh). The fragment layout is documented, not opaque, so:
 *  - one ldmatrix.x4 loads a whole 16x16 A fragment or two 16x8 B fragments, from any
 *    shared-memory layout we choose (here rows padded by 16 bytes, so the 8 rows of one 8x8
 *    matrix fall in 8 different bank groups: 80-byte rows, 5 r mod 8 distinct);
 *  - the accumulators stay in registers to the end and are stored straight from them (the
 *    fp32 -> fp16 pair of each lane is one 4-byte store), without stage 2's trip through
 *    shared memory.
 * Global -> shared copies still go through registers (LDG then STS), with the barrier pair
 * around each k-tile: the warps wait for memory every iteration. Stage 4 fixes that.
 *
 * SASS: HMMA.16816.F32 and LDSM.16.M88.4; no LDL/STL. 128x128x32 tiles, 8 warps of 64x32. */
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

static __global__ void __launch_bounds__(THREADS)
    mma_ldmatrix_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B,
                        f16_t *__restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) f16_t As[BM][LDS];
    __shared__ __align__(16) f16_t Bs[BN][LDS];
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

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* each thread copies 2 chunks of A and 2 of B, 16 bytes each; zeros outside */
#pragma unroll
        for (int i = 0; i < BM * CHUNKS_PER_ROW / THREADS; i++) {
            int id = threadIdx.x + i * THREADS, row = id / CHUNKS_PER_ROW;
            int k = (id % CHUNKS_PER_ROW) * 8;
            uint4 a = make_uint4(0, 0, 0, 0), b = make_uint4(0, 0, 0, 0);
            if (block_m + row < M && k0 + k < K)
                a = *(const uint4 *)&A[(size_t)(block_m + row) * K + k0 + k];
            if (block_n + row < N && k0 + k < K)
                b = *(const uint4 *)&B[(size_t)(block_n + row) * K + k0 + k];
            *(uint4 *)&As[row][k] = a;
            *(uint4 *)&Bs[row][k] = b;
        }
        __syncthreads();
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
        __syncthreads();
    }

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

extern "C" int STAGE(hgemm_mma_ldmatrix)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                         int K, cudaStream_t stream) {
    dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    mma_ldmatrix_kernel<<<grid, THREADS, 0, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
