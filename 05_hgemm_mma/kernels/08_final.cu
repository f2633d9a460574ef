/* Stage 8 — the tuned kernel: a tile configuration per size class, any M and N, an epilogue
 * through shared memory with 128-bit stores.
 *
 * Change from stage 7:
 *  - The configuration is a template (block tile, warps, pipeline depth, BK, where the k-tile
 *    barrier sits) instantiated eight times; the launcher picks one per problem size (a
 *    128x256 tile leaves most of the 132 SMs idle when there are few tiles, so small problems
 *    get 128x128 tiles and two blocks per SM), or the one named by the environment variable
 *    HGEMM_CONFIG (README, "Tuning notes"), read once. Configurations 4-7 were experiments;
 *    5 won, and is the size-class rule's choice for big tiles.
 *  - The epilogue: the fp32 accumulators are rounded to fp16 and written to shared memory (the
 *    pipeline's buffers, free by then), then each thread stores whole 16-byte chunks of C rows:
 *    full 128-byte lines per 8 threads instead of 4-byte scattered stores. SASS: STS, LDS.128,
 *    STG.E.128.
 *  - Edges: every 16-byte copy of A or B outside the matrix is zero-filled by cp.async (a zero
 *    row or column adds nothing), and the epilogue stores only rows < M and columns < N. K must
 *    be a multiple of 8, so a 16-byte chunk along k is entirely inside or outside.
 *
 * What to look for: -Xptxas -v should show no spill stores and about 200-255 registers for the
 * 64x64 warp tiles (128 fp32 accumulators + 2 x 32 fragment registers); ncu's
 * smsp__inst_executed_pipe_tensor, and derived__memory_l1_wavefronts_shared_excessive (zero:
 * bank_check.py enumerates every address pattern). The hardware counter
 * l1tex__data_bank_conflicts_pipe_lsu_mem_shared is not zero: it also counts cycles lost to
 * cp.async fills of the same banks (README, "The swizzle and the bank-conflict counts"). */
#include <stdlib.h>

#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

#define GROUP_M 8 /* block rows per rasterization group (stage 7) */

/* Byte offset of 16-byte chunk `chunk` of row `row` in a tile of BK-element rows (BK = 64:
 * 128-byte rows of 8 chunks; BK = 128: 256-byte rows of 16 chunks), XOR-swizzled (stage 5):
 * the low 3 bits of the chunk index are XORed with the row's low 3 bits. The bank group of a
 * 16-byte chunk is its physical chunk index mod 8, so the 8 rows r..r+7 (r a multiple of 8)
 * that an ldmatrix phase reads at one logical chunk land in 8 different bank groups, and the
 * 8 consecutive chunks of one row that a quarter-warp of cp.async writes are a permutation of
 * the 8 groups. README, "The swizzle and the bank-conflict counts", has the enumeration. */
template <int BK>
__device__ __forceinline__ unsigned swz(int row, int chunk) {
    return (unsigned)(row * (BK * 2) + ((chunk ^ (row & 7)) << 4));
}

/* Copy one BK-wide k-slice of a ROWS x K operand into a swizzled tile. Thread t copies chunk
 * t % CH of rows t / CH, t / CH + THREADS / CH, ... (CH = BK / 8 chunks per row): `src` points
 * at its first chunk for this k-slice, `rows_left` counts the rows that remain in the matrix
 * from its first row, and `k_ok` says whether its chunk is inside K. Out-of-range chunks are
 * zero-filled. Offsets from `src` are recomputed per copy rather than kept in registers: the
 * 64x64 warp tiles leave few registers to spare. */
template <int ROWS, int NTHREADS, int BK>
__device__ __forceinline__ void load_tile(unsigned char *tile, const f16_t *src, int rows_left,
                                          bool k_ok, int K, const f16_t *matrix) {
    constexpr int CHUNKS_PER_ROW = BK / 8;
    const int row = threadIdx.x / CHUNKS_PER_ROW, chunk = threadIdx.x % CHUNKS_PER_ROW;
#pragma unroll
    for (int i = 0; i < ROWS * CHUNKS_PER_ROW / NTHREADS; i++) {
        constexpr int STEP = NTHREADS / CHUNKS_PER_ROW;
        bool ok = k_ok && i * STEP < rows_left;
        /* a zero-byte copy reads nothing, but give it an address inside the matrix anyway */
        const f16_t *p = ok ? src + (size_t)(i * STEP) * K : matrix;
        cp_async_16_zfill(tile + swz<BK>(row + i * STEP, chunk), p, ok ? 16 : 0);
    }
}

/* EARLY: where the per-k-tile barrier sits. false: after the last k16 step's mmas, then the
 * next tile's first fragments are loaded, and the first mmas of the next tile wait for them.
 * true: before the last k16 step's mmas (its fragments are already in registers), so the next
 * tile's first ldmatrix runs under those 32 mmas and the warp reaches the barrier with the
 * previous step's mmas still in the tensor pipe. */
template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS, int BK, bool EARLY>
static __global__ void __launch_bounds__(WARPS_M *WARPS_N * 32, MIN_BLOCKS)
    final_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B, f16_t *__restrict__ C,
                 int M, int N, int K) {
    static_assert(BK == 64 || BK == 128, "rows of 128 or 256 bytes: at least 8 chunks");
    constexpr int CHUNKS_PER_ROW = BK / 8;
    constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static_assert((BM * CHUNKS_PER_ROW) % THREADS == 0 && (BN * CHUNKS_PER_ROW) % THREADS == 0,
                  "whole copy rounds");
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
            load_tile<BM, THREADS, BK>(a_tiles + s * A_TILE, a_src + s * BK, a_rows_left, k_ok,
                                       K, A);
            load_tile<BN, THREADS, BK>(b_tiles + s * B_TILE, b_src + s * BK, b_rows_left, k_ok,
                                       K, B);
        }
        cp_async_commit();
    }

    /* ldmatrix addresses: lane l reads row (l % 16) of A's 16x16 tile at k-chunk l / 16, and
     * row (l % 8) + 8 * (l / 16) of B's two 8-wide n tiles at k-chunk (l / 8) % 2. Both rows
     * have row & 7 == l & 7, so the swizzled chunk is (2 * kk + half) ^ (l & 7): one offset per
     * k16 step, computed once; the 16-row steps between tiles are immediate offsets.
     * LEAN (a 128-register cap: 512 threads per SM) keeps only the kk = 0 offsets: chunk
     * 2 * kk + half = (2 * kk) ^ half, so the offset of step kk is off0 ^ (kk << 5) (the row
     * term is a multiple of the power-of-two row size, above those bits): one LOP instead of
     * BK / 16 - 1 live registers per operand. */
    constexpr bool LEAN = THREADS * MIN_BLOCKS >= 512;
    constexpr int KSTEPS = LEAN ? 1 : BK / 16;
    const unsigned a_base = smem_addr(a_tiles), b_base = smem_addr(b_tiles);
    unsigned a_off[KSTEPS], b_off[KSTEPS];
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        a_off[kk] = (unsigned)((warp_m + lane % 16) * (BK * 2) +
                               (((2 * kk + lane / 16) ^ (lane & 7)) << 4));
        b_off[kk] = (unsigned)((warp_n + lane % 8 + 8 * (lane / 16)) * (BK * 2) +
                               (((2 * kk + (lane / 8) % 2) ^ (lane & 7)) << 4));
    }

    /* fragments, double-buffered across k16 steps; LEAN: one set (its 16 warps per SM hide the
     * ldmatrix latency instead) */
    static_assert(!(LEAN && EARLY), "the early barrier loads into the second fragment set");
    constexpr int NBUF = LEAN ? 1 : 2;
    unsigned fa[NBUF][MT][4], fb[NBUF][NT][2];

    auto load_frags = [&](int buf, int stage, int kk) {
        unsigned a_addr, b_addr;
        if constexpr (LEAN) {
            a_addr = a_base + stage * A_TILE + (a_off[0] ^ (unsigned)(kk << 5));
            b_addr = b_base + stage * B_TILE + (b_off[0] ^ (unsigned)(kk << 5));
        } else {
            a_addr = a_base + stage * A_TILE + a_off[kk];
            b_addr = b_base + stage * B_TILE + b_off[kk];
        }
#pragma unroll
        for (int i = 0; i < MT; i++)
            ldmatrix_x4(fa[buf][i][0], fa[buf][i][1], fa[buf][i][2], fa[buf][i][3],
                        a_addr + i * 16 * (BK * 2));
#pragma unroll
        for (int j = 0; j < NT; j += 2)
            ldmatrix_x4(fb[buf][j][0], fb[buf][j][1], fb[buf][j + 1][0], fb[buf][j + 1][1],
                        b_addr + j * 8 * (BK * 2));
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
            load_tile<BM, THREADS, BK>(a_tiles + s * A_TILE, a_src + next * BK, a_rows_left,
                                       k_ok, K, A);
            load_tile<BN, THREADS, BK>(b_tiles + s * B_TILE, b_src + next * BK, b_rows_left,
                                       k_ok, K, B);
        }
        cp_async_commit();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            const int cur = kk % NBUF, nxt = (kk + 1) % NBUF;
            /* Load the next k16 step's fragments before this step's mmas use the current ones:
             * the ldmatrix latency hides behind the tensor-core work. */
            if (!LEAN && kk < BK / 16 - 1) load_frags(nxt, stage, kk + 1);
            if (EARLY && kk == BK / 16 - 1) {
                /* Every ldmatrix of tile kt was issued (this step's fragments came in during
                 * the previous step), so the barrier can come before these mmas: bar.sync
                 * waits for each thread's earlier shared-memory reads to complete. */
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                stage = stage == STAGES - 1 ? 0 : stage + 1;
                if (kt + 1 < k_tiles) load_frags(nxt, stage, 0);
            }
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int j = 0; j < NT; j++) mma_m16n8k16_f32(acc[i][j], fa[cur][i], fb[cur][j]);
            if (LEAN && kk < BK / 16 - 1) load_frags(nxt, stage, kk + 1); /* after the mmas */
            if (!EARLY && kk == BK / 16 - 1) {
                /* tile kt + 1 has landed (at most STAGES - 2 younger groups pending), and every
                 * warp is done with tile kt's shared memory */
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                stage = stage == STAGES - 1 ? 0 : stage + 1;
                if (kt + 1 < k_tiles) load_frags(nxt, stage, 0);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads();

    /* Epilogue: fp16 C tile in shared memory, rows padded by 16 bytes (a row of 8 lanes' half2
     * stores then hits 32 different banks), then 16-byte coalesced stores. */
    constexpr int C_STRIDE = BN + 8;
    f16_t *c_tile = (f16_t *)smem;
    const int g = lane / 4, p = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) {
            int r = warp_m + i * 16 + g, c = warp_n + j * 8 + p;
            *(__half2 *)&c_tile[r * C_STRIDE + c] = __floats2half2_rn(acc[i][j][0], acc[i][j][1]);
            *(__half2 *)&c_tile[(r + 8) * C_STRIDE + c] =
                __floats2half2_rn(acc[i][j][2], acc[i][j][3]);
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

/* ---- configurations ------------------------------------------------------------------------ */
typedef struct {
    const void *kernel;
    void (*launch)(const f16_t *, const f16_t *, f16_t *, int, int, int, cudaStream_t);
    int bm, bn, threads, smem;
} hgemm_config;

template <int BM, int BN, int WM_, int WN_, int S, int MINB, int BK, bool EARLY>
static void launch_config(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                          cudaStream_t stream) {
    unsigned blocks = blocks_for(M, BM) * blocks_for(N, BN);
    final_kernel<BM, BN, WM_, WN_, S, MINB, BK, EARLY>
        <<<blocks, WM_ * WN_ * 32, (BM + BN) * BK * 2 * S, stream>>>(A, B, C, M, N, K);
}

#define CONFIG(BM, BN, WM_, WN_, S, MINB, BK, EARLY)                                               \
    {                                                                                              \
        (const void *)final_kernel<BM, BN, WM_, WN_, S, MINB, BK, EARLY>,                          \
            launch_config<BM, BN, WM_, WN_, S, MINB, BK, EARLY>, BM, BN, WM_ *WN_ * 32,            \
            (BM + BN) * BK * 2 * S                                                                 \
    }

/* HGEMM_CONFIG=0..7 (README, "Tuning notes"). 3 is the smallest: the fallback on GPUs with less
 * shared memory (sm_89: 99 KiB per block). 4-7 were experiments, each against one hypothesis
 * (README; the sweep's ratios in NOTES.md); the size-class rule picks 5, 0 or 3. */
static const hgemm_config CONFIGS[] = {
    CONFIG(128, 256, 2, 4, 3, 1, 64, false), /* 0: 128x256x64, 8 warps of 64x64, 3 st, 144 KiB */
    CONFIG(256, 128, 4, 2, 3, 1, 64, false), /* 1: 256x128x64, 8 warps of 64x64, 3 st, 144 KiB */
    CONFIG(128, 256, 2, 4, 4, 1, 64, false), /* 2: 128x256x64, 4 stages, 192 KiB */
    CONFIG(128, 128, 2, 2, 3, 2, 64, false), /* 3: 128x128x64, 4 warps of 64x64, 96 KiB, 2/SM */
    CONFIG(128, 256, 2, 4, 3, 1, 64, true),  /* 4: 0 with the early barrier */
    CONFIG(128, 256, 2, 4, 2, 1, 128, true), /* 5: 128x256x128, 2 stages, 192 KiB, early */
    CONFIG(128, 128, 2, 4, 3, 2, 64, false), /* 6: 128x128x64, 8 warps of 64x32, 2/SM, lean */
    CONFIG(256, 128, 4, 2, 3, 1, 64, true),  /* 7: 1 with the early barrier */
};
#define NCONFIGS (int)(sizeof CONFIGS / sizeof CONFIGS[0])
#define FALLBACK 3 /* the smallest: 96 KiB */

extern "C" int STAGE(hgemm_final)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                  cudaStream_t stream) {
    static int forced = -2, optin, sms, attr_set[NCONFIGS];
    if (forced == -2) {
        const char *e = getenv("HGEMM_CONFIG");
        forced = -1;
        if (e && e[0] >= '0' && e[0] < '0' + NCONFIGS && !e[1]) forced = e[0] - '0';
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    }
    int pick = forced;
    if (pick < 0) {
        /* Size class: big tiles when they fill at least 3/4 of a wave, else 128x128. Among the
         * big ones, 5 (BK = 128, 2 stages) measured fastest on the H100 at 2048-8192 (NOTES.md,
         * the sweep); where its 192 KiB do not fit (A100: 164 KiB), 0; on sm_89, the fallback. */
        long big_tiles = (long)blocks_for(M, 128) * blocks_for(N, 256);
        pick = 4 * big_tiles >= 3L * sms ? (CONFIGS[5].smem <= optin ? 5 : 0) : 3;
    }
    if (CONFIGS[pick].smem > optin) pick = FALLBACK;
    const hgemm_config *c = &CONFIGS[pick];
    if (!attr_set[pick]) {
        cudaFuncSetAttribute(c->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c->smem);
        attr_set[pick] = 1;
    }
    c->launch(A, B, C, M, N, K, stream);
    return LAUNCH_OK;
}
