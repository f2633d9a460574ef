/* Stage 9 — fp16 accumulation: mma.sync m16n8k16 f16.f16.f16.f16.
 *
 * Change from stage 8: the accumulators are fp16 (two per register) instead of fp32, with the
 * 128x256x64, 3-stage configuration. Half the accumulator registers (64 instead of 128 per
 * thread), no conversion in the epilogue, and on Hopper the f16-accumulating mma runs at about
 * the same rate as the f32 one (docs/anchors.md, "Ceilings": 652 vs 644 TFLOPS register-only), so any gain
 * comes from the freed registers, not from the tensor cores.
 *
 * The cost is accuracy: the running sum is rounded to fp16 (11 significant bits) after every
 * mma, K/16 times. With inputs uniform in [-1, 1) the sum grows like sqrt(K/9) (about 30 at
 * K = 8192), so late additions of terms of size ~0.3 to a sum of ~30 lose the low bits of each
 * term: the relative error grows like sqrt(K/16) * 2^-12 instead of staying at the one final
 * rounding of fp32 accumulation. The driver checks this row against a looser bound (rel L2
 * 1e-2 instead of 1e-3; README, "Correctness"); compare its rel err column with stage 8's.
 * Large K with sums that grow (all-positive data) can also overflow fp16's 65504. */
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

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS>
static __global__ void __launch_bounds__(WARPS_M *WARPS_N * 32, MIN_BLOCKS)
    f16_accum_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B,
                     f16_t *__restrict__ C, int M, int N, int K) {
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

    unsigned acc[MT][NT][2]; /* half2 pairs: (g, p..p+1) and (g+8, p..p+1) */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = 0u;

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
                for (int j = 0; j < NT; j++) mma_m16n8k16_f16(acc[i][j], fa[cur][i], fb[cur][j]);
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

    /* Epilogue (stage 8's): the accumulators are fp16 already; C tile in shared memory, rows padded
     * by 16 bytes (a row of 8 lanes' half2 stores then hits 32 different banks), then 16-byte
     * coalesced stores. */
    constexpr int C_STRIDE = BN + 8;
    f16_t *c_tile = (f16_t *)smem;
    const int g = lane / 4, p = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) {
            int r = warp_m + i * 16 + g, c = warp_n + j * 8 + p;
            *(unsigned *)&c_tile[r * C_STRIDE + c] = acc[i][j][0];
            *(unsigned *)&c_tile[(r + 8) * C_STRIDE + c] = acc[i][j][1];
        }
    __syncthreads();
    const bool vec_ok = N % 8 == 0; /* rows of C start 16-byte aligned */
#pragma unroll 1
    for (int i = 0; i < BM * BN / 8 / THREADS; i++) {
        int id = threadIdx.x + i * THREADS;
        int r = id / (BN / 8), c = (id % (BN / 8)) * 8;
        int grow = block_m + r, gcol = block_n + c;
        if (grow >= M) continue;
        uint4 v = *(const uint4 *)&c_tile[r * C_STRIDE + c];
        f16_t *dst = C + (size_t)grow * N + gcol;
        if (vec_ok && gcol + 8 <= N) {
            *(uint4 *)dst = v;
        } else {
            const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 8; e++)
                if (gcol + e < N)
                    dst[e] = __ushort_as_half((unsigned short)(w[e / 2] >> (16 * (e % 2))));
        }
    }
}

#define CFG_BM 128
#define CFG_BN 256
#define CFG_STAGES 3
#define KERNEL f16_accum_kernel<CFG_BM, CFG_BN, 2, 4, CFG_STAGES, 1>

extern "C" int STAGE(hgemm_f16_accum)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                      cudaStream_t stream) {
    const int smem = (CFG_BM + CFG_BN) * BK * 2 * CFG_STAGES;
    static bool attr_set;
    if (!attr_set) {
        cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        attr_set = true;
    }
    unsigned blocks = blocks_for(M, CFG_BM) * blocks_for(N, CFG_BN);
    KERNEL<<<blocks, 256, smem, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
