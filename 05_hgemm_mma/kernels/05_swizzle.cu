/* Stage 5 — XOR-swizzled shared memory: ldmatrix and cp.async both free of bank conflicts.
 *
 * Change from stage 4: the k-slice per stage doubles to BK = 64, so a tile row is 128 bytes
 * (8 chunks of 16 bytes), and rows are stored unpadded with chunk c of row r at physical chunk
 * c ^ (r & 7). Why: an ldmatrix phase reads one 16-byte chunk from each of 8 consecutive rows.
 * Unpadded 128-byte rows put those 8 chunks in the same 4 banks (an 8-way conflict); padding
 * (stage 4) fixes that but wastes shared memory and makes the rows of a cp.async warp land
 * unevenly. With the XOR, the 8 rows' chunks are 8 distinct bank groups (conflict-free), and a
 * cp.async row of 8 chunks is still a permutation of one 128-byte line (also conflict-free).
 * Nothing is wasted, and the same layout is what TMA and wgmma call the 128-byte swizzle
 * (chapter 06).
 *
 * Proof: `python3 05_hgemm_mma/bank_check.py` enumerates every 8-address phase of every
 * ldmatrix and cp.async here (and in stages 4-10): one wavefront each. On the GPU, ncu's
 * derived__memory_l1_wavefronts_shared_excessive (per instruction, from the addresses) should
 * be 0. The hardware counter l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld is not: most
 * likely it also counts ldmatrix wavefronts that lost the banks to cp.async fills (H100,
 * 4096^3, the ncu counts in NOTES.md: 203,132, 0.4% of the 50.3M ldmatrix wavefronts; a real 8-way
 * conflict would add 352M). Stage 4's padded layout is conflict-free for ldmatrix too, but
 * this one needs no padding. The README has the bank arithmetic.
 *
 * 128x128x64 tiles, 8 warps of 64x32, 3 stages: 96 KiB of shared memory. */
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

static __global__ void __launch_bounds__(THREADS)
    swizzle_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B, f16_t *__restrict__ C,
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
    const int a_rows_left = M - block_m - my_row, b_rows_left = N - block_n - my_row;
    const f16_t *a_src = A + (size_t)(block_m + my_row) * K + my_k;
    const f16_t *b_src = B + (size_t)(block_n + my_row) * K + my_k;

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < k_tiles) {
            bool k_ok = s * BK + my_k < K;
            load_tile<BM, THREADS>(a_tiles + s * A_TILE, a_src + s * BK, a_rows_left, k_ok, K, A);
            load_tile<BN, THREADS>(b_tiles + s * B_TILE, b_src + s * BK, b_rows_left, k_ok, K, B);
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
            load_tile<BN, THREADS>(b_tiles + s * B_TILE, b_src + next * BK, b_rows_left, k_ok, K,
                                   B);
        }
        cp_async_commit();
        const unsigned a_stage = a_base + (kt % STAGES) * A_TILE;
        const unsigned b_stage = b_base + (kt % STAGES) * B_TILE;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            unsigned fa[MT][4], fb[NT][2];
            /* A: lane l gives row l % 16 of the 16x16 tile, k-chunk 2*kk + l / 16.
             * B: lane l gives n-row (l % 8) + 8 * (l / 16), k-chunk 2*kk + (l / 8) % 2. */
#pragma unroll
            for (int i = 0; i < MT; i++)
                ldmatrix_x4(fa[i][0], fa[i][1], fa[i][2], fa[i][3],
                            a_stage + swz(warp_m + i * 16 + lane % 16, 2 * kk + lane / 16));
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_x4(fb[j][0], fb[j][1], fb[j + 1][0], fb[j + 1][1],
                            b_stage + swz(warp_n + j * 8 + lane % 8 + 8 * (lane / 16),
                                          2 * kk + (lane / 8) % 2));
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

extern "C" int STAGE(hgemm_swizzle)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                    cudaStream_t stream) {
    const int smem = (A_TILE + B_TILE) * STAGES;
    static bool attr_set;
    if (!attr_set) {
        cudaFuncSetAttribute(swizzle_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        attr_set = true;
    }
    dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    swizzle_kernel<<<grid, THREADS, smem, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
