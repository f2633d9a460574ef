/* Stage 7 — grouped block order (rasterization) for L2 reuse.
 *
 * Change from stage 6: the grid is one-dimensional and each block computes which C tile it
 * owns. Blocks are numbered down GROUP_M = 8 block rows, then across, so the ~132 blocks
 * resident at a time (one per SM) cover ~8 block rows of A and ~17 block columns of B.
 * The kernel body is otherwise stage 6's.
 *
 * What it buys depends on the shape (README, "6 -> 7"). At 4096^3 and below, nothing: a row of
 * C has 16 tiles of 128x256, so stage 6's row-major order already keeps ~8 block rows x all 16
 * columns resident, the same patch as one group (H100: 440.3 against stage 6's 439.8 TFLOPS).
 * At 8192^3 (32 tiles a row) the patches differ, ~4 x 32 against 8 x 16.5; by our count both
 * orders read far fewer DRAM bytes per flop than would limit these kernels, and the two H100
 * runs disagree (450.7 against 451.1 TFLOPS in the chapter's, 468.7 against 453.2 in a later
 * one). It should pay where a row has 132 or more tiles (N >= 33,792): row-major then reads
 * 132 B panels for one A panel. Not measured.
 *
 * What to look for: ncu's lts__t_sector_hit_rate and dram__bytes_read against stage 6's at
 * 8192^3 and at a wide N; at 4096^3 they should match. */
#include <stdlib.h>

#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

#define BK 64            /* k per pipeline stage: one 128-byte row per tile row */
#define CHUNKS_PER_ROW 8 /* 16-byte chunks in a 128-byte row */
#define GROUP_M 8        /* block rows per rasterization group (stage 7) */

/* Byte offset of 16-byte chunk `chunk` of row `row` in a tile of 128-byte rows, XOR-swizzled
 * (stage 5): the 8 rows an ldmatrix phase reads land in 8 different bank groups. */
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

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS>
static __global__ void __launch_bounds__(WARPS_M *WARPS_N * 32, MIN_BLOCKS)
    raster_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B, f16_t *__restrict__ C,
                  int M, int N, int K) {
    constexpr int THREADS = WARPS_M * WARPS_N * 32;
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    constexpr int MT = WM / 16, NT = WN / 8;            /* mma tiles per warp */
    constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2;
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *a_tiles = smem, *b_tiles = smem + STAGES * A_TILE;

    /* Grouped rasterization (stage 7): consecutive blocks sweep GROUP_M block rows, so the
     * blocks resident together share A rows and B columns in the L2. */
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group, first_m = group * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = blockIdx.x % per_group;
    const int block_m = (first_m + in_group % group_rows) * BM;
    const int block_n = (in_group / group_rows) * BN;

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
    /* prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty ones too, so the
     * group count in cp_async_wait stays right) */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < k_tiles) {
            bool k_ok = s * BK + my_k < K;
            load_tile<BM, THREADS>(a_tiles + s * A_TILE, a_src + s * BK, a_rows_left, k_ok, K, A);
            load_tile<BN, THREADS>(b_tiles + s * B_TILE, b_src + s * BK, b_rows_left, k_ok, K, B);
        }
        cp_async_commit();
    }

    /* ldmatrix addresses: lane l reads row (l % 16) of A's 16x16 tile at k-chunk l / 16, and
     * row (l % 8) + 8 * (l / 16) of B's two 8-wide n tiles at k-chunk (l / 8) % 2. Both rows
     * have row & 7 == l & 7, so the swizzled chunk is (2 * kk + half) ^ (l & 7): one offset per
     * k16 step, computed once; the 16-row steps between tiles are immediate offsets. */
    const unsigned a_base = smem_addr(a_tiles), b_base = smem_addr(b_tiles);
    unsigned a_off[BK / 16], b_off[BK / 16];
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
        a_off[kk] =
            (unsigned)((warp_m + lane % 16) * 128 + (((2 * kk + lane / 16) ^ (lane & 7)) << 4));
        b_off[kk] = (unsigned)((warp_n + lane % 8 + 8 * (lane / 16)) * 128 +
                               (((2 * kk + (lane / 8) % 2) ^ (lane & 7)) << 4));
    }

    unsigned fa[2][MT][4], fb[2][NT][2]; /* fragments, double-buffered across k16 steps */

    auto load_frags = [&](int buf, int stage, int kk) {
        unsigned a_addr = a_base + stage * A_TILE + a_off[kk];
        unsigned b_addr = b_base + stage * B_TILE + b_off[kk];
#pragma unroll
        for (int i = 0; i < MT; i++)
            ldmatrix_x4(fa[buf][i][0], fa[buf][i][1], fa[buf][i][2], fa[buf][i][3],
                        a_addr + i * 16 * 128);
#pragma unroll
        for (int j = 0; j < NT; j += 2)
            ldmatrix_x4(fb[buf][j][0], fb[buf][j][1], fb[buf][j + 1][0], fb[buf][j + 1][1],
                        b_addr + j * 8 * 128);
    };

    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frags(0, 0, 0);

    int stage = 0; /* kt % STAGES, kept as a counter */
    for (int kt = 0; kt < k_tiles; kt++) {
        /* Tile kt + STAGES - 1 goes where tile kt - 1 was: every warp finished reading it
         * before the barrier that ended the previous iteration. */
        int next = kt + STAGES - 1;
        if (next < k_tiles) {
            int s = stage == 0 ? STAGES - 1 : stage - 1;
            bool k_ok = next * BK + my_k < K;
            load_tile<BM, THREADS>(a_tiles + s * A_TILE, a_src + next * BK, a_rows_left, k_ok, K,
                                   A);
            load_tile<BN, THREADS>(b_tiles + s * B_TILE, b_src + next * BK, b_rows_left, k_ok, K,
                                   B);
        }
        cp_async_commit();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            const int cur = kk % 2;
            /* Load the next k16 step's fragments before this step's mmas use the current ones:
             * the ldmatrix latency hides behind the tensor-core work. */
            if (kk < BK / 16 - 1) load_frags(cur ^ 1, stage, kk + 1);
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int j = 0; j < NT; j++) mma_m16n8k16_f32(acc[i][j], fa[cur][i], fb[cur][j]);
            if (kk == BK / 16 - 1) {
                /* tile kt + 1 has landed (at most STAGES - 2 younger groups pending), and every
                 * warp is done with tile kt's shared memory */
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                stage = stage == STAGES - 1 ? 0 : stage + 1;
                if (kt + 1 < k_tiles) load_frags(cur ^ 1, stage, 0);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads();

    /* Epilogue: each lane stores its accumulator pairs straight to C (stage 8 stages them
     * through shared memory for 16-byte stores). */
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

#define BM 128
#define BN 256
#define WARPS_M 2
#define WARPS_N 4
#define STAGES 3

extern "C" int STAGE(hgemm_raster)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                   cudaStream_t stream) {
    const int smem = (BM + BN) * BK * 2 * STAGES;
    static bool attr_set;
    if (!attr_set) {
        cudaFuncSetAttribute(raster_kernel<BM, BN, WARPS_M, WARPS_N, STAGES, 1>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        attr_set = true;
    }
    raster_kernel<BM, BN, WARPS_M, WARPS_N, STAGES, 1>
        <<<blocks_for(M, BM) * blocks_for(N, BN), WARPS_M * WARPS_N * 32, smem, stream>>>(A, B, C,
                                                                                          M, N, K);
    return LAUNCH_OK;
}
