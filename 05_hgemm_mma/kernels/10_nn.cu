/* Stage 10 (the NN exercise in layouts) — B stored row-major K x N, fragments by
 * ldmatrix.trans.
 *
 * Builds on: 05_hgemm_mma/kernels/05_swizzle.cu (make diff-05 STAGE=10)
 *
 * Change from stage 5: B arrives k-major (row k holds B[k][0..N-1], ldb = N), the layout of
 * most framework weights. The mma still wants B's fragment "column-major" (each register holds
 * two consecutive k of one n). Stage 5 got that by ldmatrix on [n][k] rows; here the tile in
 * shared memory is [k][n] (BK = 64 rows of BN = 128 halves, 256 bytes) and ldmatrix.trans
 * transposes each 8x8 matrix on its way into registers: no transpose in memory, same speed.
 *
 * The B tile's rows are 256 bytes (16 chunks); the swizzle XORs the low 3 bits of the chunk
 * index with k & 7, so the 8 k-rows an ldmatrix.trans phase reads (same n chunk) land in 8
 * different bank groups, and each row's 16 chunks stay a permutation of the row.
 * cp.async copies of B are 16 bytes along n, so this stage needs N % 8 == 0 (the driver says
 * so); A is handled as in stage 5. */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

#define BM 128
#define BN 128
#define WARPS_M 2
#define WARPS_N 4
#define STAGES 3
#define THREADS (WARPS_M * WARPS_N * 32)
#define WM (BM / WARPS_M) /* 64 */
#define WN (BN / WARPS_N) /* 32 */
#define MT (WM / 16)
#define NT (WN / 8)
#define A_TILE (BM * BK * 2)
#define B_TILE (BN * BK * 2)
#define B_CHUNKS (BN / 8) /* 16-byte chunks per k-row of the B tile */

#define BK 64            /* k per pipeline stage: one 128-byte row per tile row */
#define CHUNKS_PER_ROW 8 /* 16-byte chunks in a 128-byte row */

/* Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a tile of 128-byte rows: the
 * chunk index is XORed with the row's low 3 bits. Rows r..r+7 (r a multiple of 8) hold logical
 * chunk c at 8 different physical chunks, hence 8 different groups of 4 banks. */
__device__ __forceinline__ unsigned swz(int row, int chunk) {
    return (unsigned)(row * 128 + ((chunk ^ (row & 7)) << 4));
}

/* Copy one BK-wide k-slice of a ROWS x K operand into a swizzled tile. Thread t copies chunk
 * t % 8 of rows t / 8, t / 8 + THREADS / 8, ...: `src` points at its first chunk for this
 * k-slice, `rows_left` counts the rows that remain in the matrix from its first row, and
 * `k_ok` says whether its chunk is inside K. Out-of-range chunks are zero-filled. Offsets from
 * `src` are recomputed per copy rather than kept in registers: the 64x64 warp tiles leave
 * few registers to spare. */
template <int ROWS, int NTHREADS>
__device__ __forceinline__ void load_tile(unsigned char *tile, const f16_t *src, int rows_left,
                                          bool k_ok, int K, const f16_t *matrix) {
    const int row = threadIdx.x / CHUNKS_PER_ROW, chunk = threadIdx.x % CHUNKS_PER_ROW;
#pragma unroll
    for (int i = 0; i < ROWS * CHUNKS_PER_ROW / NTHREADS; i++) {
        constexpr int STEP = NTHREADS / CHUNKS_PER_ROW;
        bool ok = k_ok && i * STEP < rows_left;
        /* a zero-byte copy reads nothing, but give it an address inside the matrix anyway */
        const f16_t *p = ok ? src + (size_t)(i * STEP) * K : matrix;
        cp_async_16_zfill(tile + swz(row + i * STEP, chunk), p, ok ? 16 : 0);
    }
}

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

/* Byte offset of chunk `chunk` (0..15) of k-row `k` of the B tile ([k][n], 256-byte rows). */
__device__ __forceinline__ unsigned swz_kn(int k, int chunk) {
    return (unsigned)(k * (B_CHUNKS * 16) + ((chunk ^ (k & 7)) << 4));
}

/* Copy k-rows k0 .. k0+BK-1, columns block_n .. block_n+BN-1 of B (K x N, row-major). */
__device__ __forceinline__ void load_b_kn(unsigned char *tile, const f16_t *B, int K, int N, int k0,
                                          int block_n) {
    const int chunk = threadIdx.x % B_CHUNKS, n = block_n + chunk * 8;
#pragma unroll
    for (int i = 0; i < BK * B_CHUNKS / THREADS; i++) {
        int k = threadIdx.x / B_CHUNKS + i * (THREADS / B_CHUNKS);
        bool ok = k0 + k < K && n < N;
        const f16_t *src = ok ? B + (size_t)(k0 + k) * N + n : B;
        cp_async_16_zfill(tile + swz_kn(k, chunk), src, ok ? 16 : 0);
    }
}

static __global__ void __launch_bounds__(THREADS)
    nn_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B, f16_t *__restrict__ C,
              int M, int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *a_tiles = smem, *b_tiles = smem + STAGES * A_TILE;
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
    const int my_row = threadIdx.x / CHUNKS_PER_ROW, my_k = (threadIdx.x % CHUNKS_PER_ROW) * 8;
    const int a_rows_left = M - block_m - my_row;
    const f16_t *a_src = A + (size_t)(block_m + my_row) * K + my_k;

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < k_tiles) {
            bool k_ok = s * BK + my_k < K;
            load_tile<BM, THREADS>(a_tiles + s * A_TILE, a_src + s * BK, a_rows_left, k_ok, K, A);
            load_b_kn(b_tiles + s * B_TILE, B, K, N, s * BK, block_n);
        }
        cp_async_commit();
    }

    const unsigned a_base = smem_addr(a_tiles), b_base = smem_addr(b_tiles);
    for (int kt = 0; kt < k_tiles; kt++) {
        cp_async_wait<STAGES - 2>(); /* tile kt has landed */
        __syncthreads();             /* ... for every thread, and tile kt-1 is no longer read */
        int next = kt + STAGES - 1;
        if (next < k_tiles) {
            int s = next % STAGES;
            bool k_ok = next * BK + my_k < K;
            load_tile<BM, THREADS>(a_tiles + s * A_TILE, a_src + next * BK, a_rows_left, k_ok, K,
                                   A);
            load_b_kn(b_tiles + s * B_TILE, B, K, N, next * BK, block_n);
        }
        cp_async_commit();
        const unsigned a_stage = a_base + (kt % STAGES) * A_TILE;
        const unsigned b_stage = b_base + (kt % STAGES) * B_TILE;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            unsigned fa[MT][4], fb[NT][2];
            /* A: lane l gives row l % 16 of the 16x16 tile, k-chunk 2*kk + l / 16.
             * B: lane l gives k-row 16*kk + (l % 8) + 8 * ((l / 8) % 2), n-chunk of column
             * n0 + 8 * (l / 16); matrices 0..3 = (k 0-7, n 0-7), (k 8-15, n 0-7),
             * (k 0-7, n 8-15), (k 8-15, n 8-15): b0, b1 of n tile j, then of n tile j+1. */
#pragma unroll
            for (int i = 0; i < MT; i++)
                ldmatrix_x4(fa[i][0], fa[i][1], fa[i][2], fa[i][3],
                            a_stage + swz(warp_m + i * 16 + lane % 16, 2 * kk + lane / 16));
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_x4_trans(fb[j][0], fb[j][1], fb[j + 1][0], fb[j + 1][1],
                                  b_stage + swz_kn(16 * kk + lane % 8 + 8 * ((lane / 8) % 2),
                                                   (warp_n + j * 8) / 8 + lane / 16));
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

extern "C" int STAGE(hgemm_nn)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                               cudaStream_t stream) {
    /* B here is the K x N row-major copy (the driver passes it for this row) */
    const int smem = (A_TILE + B_TILE) * STAGES;
    static bool attr_set;
    if (!attr_set) {
        cudaFuncSetAttribute(nn_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        attr_set = true;
    }
    dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    nn_kernel<<<grid, THREADS, smem, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
