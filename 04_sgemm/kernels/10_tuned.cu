/* Stage 10 — the tuned kernel: every idea of stages 5-9 at once, deeper pipeline, bigger register
 * tiles where they pay, a block order that keeps the L2 warm, and edges for any M, N, K.
 *
 * Changes from stage 9:
 *  - Any shape. Tiles at the matrix edge load through cp.async's zero-fill form: a copy whose
 *    source is outside the matrix writes zeros to shared memory (src-size 0), so the main loop
 *    has no edge branches at all; zeros add nothing to the dot products. K need not be a multiple
 *    of BK for the same reason. B rows are 16-byte aligned only when N % 4 == 0; otherwise B is
 *    copied 4 bytes at a time (a second instantiation, N_VEC = false, picked by the launcher).
 *    The epilogue writes float4s for interior tiles and guarded scalars for edge tiles.
 *  - STAGES-deep cp.async pipeline (3 by default): tiles k+1 .. k+STAGES-1 are in flight while
 *    tile k is multiplied, with one __syncthreads per tile.
 *  - Register double buffering: the fragments of step k+1 are read from shared memory while the
 *    FFMAs of step k run, so the LDS latency hides behind 64-128 independent FFMAs.
 *  - Grouped block order ("rasterization"): consecutive blocks walk down GROUP_M tile rows of one
 *    tile column before moving right, so the blocks resident at one time share A row panels and
 *    B column panels in the L2 instead of streaming the whole of B from DRAM for each row.
 *  - Tile sizes per size class, chosen at run time from pre-instantiated configurations (table
 *    CONFIGS below). SGEMM_CONFIG=N in the environment forces configuration N (1..11) for every
 *    shape, so one GPU run per value compares them; unset (or 0) chooses by shape.
 *  - FAST configurations (7-11) compute this thread's copy offsets once per block and copy every
 *    slice that lies wholly inside K with one address add per copy; the clamped, zero-filling
 *    load_tile is left for the prologue and the last, partial slice.
 *
 * Why these tiles. Each thread owns a TM x TN register tile and, per k step, reads TM + TN
 * floats from shared memory (as TM/4 + TN/4 LDS.128) for TM * TN FFMAs. At 8x8 that is 4 LDS.128
 * per 64 FFMA; at 8x16, 6 per 128. H100 issues 128 FFMA lanes per SM per clock but reads only
 * 128 bytes of shared memory per clock, so the 8x16 tile leaves more of the shared-memory pipe
 * free; the 8x8 tile allows two 256-thread blocks per SM. The rest of the loop (copy addresses,
 * pipeline bookkeeping, the barrier) is paid once per BK-slice, so BK = 16 halves its share.
 * In the SASS of the main loop (cuobjdump, sm_90a) FFMAs are 88% of the instructions at
 * 128x256x8 and 90% at 128x256x16, against 82% at 128x128x8 with 8x8 thread tiles: every
 * non-FFMA instruction takes an issue slot an FFMA could have used, so this fraction bounds the
 * kernel's share of the FFMA peak. Look for LDS.128 every ~21 FFMAs, LDGSTS, no LDL/STL. */
#include <stdlib.h>

#include "ptx/cp_async.cuh"
#include "sgemm.h"
#include "stage.h"

#define A_PAD 4     /* floats added to each row of the transposed A tile: conflict-free stores */
#define GROUP_M 8   /* tile rows per group of the block order */

/* Copies the BK-wide k-slice starting at k0 of the A row panel (transposed into as[k][m]) and
 * of the B column panel (bs[k][n]) into one pipeline stage.
 * Edges: a row of A at or past M is read from row M-1 instead, a column of B at or past N from
 * the last column: valid memory, and those products only reach outputs that are never stored.
 * Past K, both A and B are zero-filled (src-size 0), so the extra products add exactly zero; the
 * address is clamped into the matrix all the same, so no copy ever names memory outside it.
 * This keeps the per-copy work to a clamp or two and a compare (few registers, no branches). */
template <int BM, int BN, int BK, int THREADS, bool N_VEC>
__device__ __forceinline__ void load_tile(float *as, float *bs, const float *A, const float *B,
                                          int M, int N, int K, int m0, int n0, int k0, int tid) {
    constexpr int AS = BM + A_PAD;
    static_assert((BM * BK) % THREADS == 0 && THREADS % 8 == 0 && BK % 8 == 0, "A tile split");
    /* A, 4 bytes per copy, in 8-wide k chunks: consecutive threads take consecutive k of one
     * row, so a warp reads 4 rows x 32 bytes (whole sectors), and its writes as[k][m] (rows
     * BM + 4 floats long) land in 32 different banks. With BK = 16 the slice is two such
     * chunks; 16 consecutive k per row would put k and k + 8 in the same bank. */
    constexpr int ROWS_PER_PASS = THREADS / 8, PASSES_PER_CHUNK = BM / ROWS_PER_PASS;
    static_assert(BM % ROWS_PER_PASS == 0, "A tile split");
#pragma unroll
    for (int i = 0; i < BM * BK / THREADS; i++) {
        const int m = tid / 8 + (i % PASSES_PER_CHUNK) * ROWS_PER_PASS;
        const int k = (i / PASSES_PER_CHUNK) * 8 + tid % 8;
        const int gm = min(m0 + m, M - 1), gk = k0 + k;
        cp_async_4_zfill(&as[k * AS + m], A + gm * K + min(gk, K - 1), gk < K ? 4 : 0);
    }
    if (N_VEC) {
        /* B, 16 bytes per copy; N % 4 == 0, so the clamped float4 is whole and aligned. */
        constexpr int PER_ROW = BN / 4;
        static_assert((BK * PER_ROW) % THREADS == 0 && THREADS % PER_ROW == 0, "B tile split");
        const int n = (tid % PER_ROW) * 4, gn = min(n0 + n, N - 4);
#pragma unroll
        for (int i = 0; i < BK * PER_ROW / THREADS; i++) {
            const int k = tid / PER_ROW + i * (THREADS / PER_ROW), gk = k0 + k;
            const bool ok = gk < K;
            cp_async_16_zfill(&bs[k * BN + n], B + min(gk, K - 1) * N + gn, ok ? 16 : 0);
        }
    } else {
        /* B rows are not 16-byte aligned (N % 4 != 0): 4 bytes per copy. */
        static_assert((BK * BN) % THREADS == 0, "B tile split");
#pragma unroll
        for (int i = 0; i < BK * BN / THREADS; i++) {
            const int e = tid + i * THREADS, k = e / BN, n = e % BN;
            const int gk = k0 + k, gn = min(n0 + n, N - 1);
            const bool ok = gk < K;
            cp_async_4_zfill(&bs[k * BN + n], B + min(gk, K - 1) * N + gn, ok ? 4 : 0);
        }
    }
}

/* The fast path of load_tile (configurations with FAST = true, N % 4 == 0), for every k-slice
 * that lies wholly inside K, i.e. all but the last slice when K % BK != 0. Nothing in it depends on the
 * slice except k0: the element offsets of this thread's copies (row clamped into the matrix as
 * above) are computed once per block into a_src / b_src, so each copy costs one address add and
 * no clamps or compares. The last (partial) slice still goes through load_tile's zero fill. */
template <int BM, int BN, int BK, int THREADS> struct copy_plan {
    static constexpr int NA = BM * BK / THREADS, NB = BK * BN / 4 / THREADS; /* N % 4 == 0 only */
    int a_src[NA], b_src[NB];

    __device__ __forceinline__ void init(int M, int N, int K, int m0, int n0, int tid) {
        constexpr int ROWS_PER_PASS = THREADS / 8, PASSES_PER_CHUNK = BM / ROWS_PER_PASS;
#pragma unroll
        for (int i = 0; i < NA; i++) {
            const int m = tid / 8 + (i % PASSES_PER_CHUNK) * ROWS_PER_PASS;
            const int k = (i / PASSES_PER_CHUNK) * 8 + tid % 8;
            a_src[i] = min(m0 + m, M - 1) * K + k;
        }
        constexpr int PER_ROW = BN / 4;
        const int n = (tid % PER_ROW) * 4, gn = min(n0 + n, N - 4);
#pragma unroll
        for (int i = 0; i < NB; i++) b_src[i] = (tid / PER_ROW + i * (THREADS / PER_ROW)) * N + gn;
    }

    /* One stage, k-slice k0 .. k0 + BK - 1, all of it below K. */
    __device__ __forceinline__ void load(float *as, float *bs, const float *A, const float *B,
                                         int N, int k0, int tid) const {
        constexpr int AS = BM + A_PAD;
        constexpr int ROWS_PER_PASS = THREADS / 8, PASSES_PER_CHUNK = BM / ROWS_PER_PASS;
        const float *a = A + k0, *b = B + k0 * N;
#pragma unroll
        for (int i = 0; i < NA; i++) {
            const int m = tid / 8 + (i % PASSES_PER_CHUNK) * ROWS_PER_PASS;
            const int k = (i / PASSES_PER_CHUNK) * 8 + tid % 8;
            cp_async_4(&as[k * AS + m], a + a_src[i]);
        }
        constexpr int PER_ROW = BN / 4;
        const int n = (tid % PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < NB; i++) {
            const int k = tid / PER_ROW + i * (THREADS / PER_ROW);
            cp_async_16(&bs[k * BN + n], b + b_src[i]);
        }
    }
};

/* The fragments of one k step: TM floats of A and TN of B, in float4 groups spaced so that a
 * warp's LDS.128 reads TRM (or TRN) consecutive float4s: conflict-free, broadcast to the rest. */
template <int TM, int TN, int TRM, int TRN>
__device__ __forceinline__ void load_frags(float *a, float *b, const float *as_k,
                                           const float *bs_k) {
#pragma unroll
    for (int g = 0; g < TM / 4; g++) {
        float4 v = *(const float4 *)&as_k[g * TRM * 4];
        a[4 * g] = v.x, a[4 * g + 1] = v.y, a[4 * g + 2] = v.z, a[4 * g + 3] = v.w;
    }
#pragma unroll
    for (int g = 0; g < TN / 4; g++) {
        float4 v = *(const float4 *)&bs_k[g * TRN * 4];
        b[4 * g] = v.x, b[4 * g + 1] = v.y, b[4 * g + 2] = v.z, b[4 * g + 3] = v.w;
    }
}

/* BM x BN block tile, BK k-slice per pipeline stage, WM x WN warp tile, TM x TN thread tile;
 * FAST: slices wholly inside K are copied through copy_plan (no per-copy clamps). */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MIN_BLOCKS,
          bool FAST, bool N_VEC>
static __global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MIN_BLOCKS)
    sgemm_tuned_kernel(int M, int N, int K, float alpha, const float *__restrict__ A,
                       const float *__restrict__ B, float beta, float *__restrict__ C) {
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int TRM = WM / TM, TRN = WN / TN; /* a warp's threads along m and along n */
    static_assert(TRM * TRN == 32 && TM % 4 == 0 && TN % 4 == 0 && BK % 2 == 0, "bad tiling");
    constexpr int AS = BM + A_PAD;
    constexpr int A_STAGE = BK * AS, B_STAGE = BK * BN;
    extern __shared__ float4 smem4[];
    float *As = (float *)smem4;
    float *Bs = As + STAGES * A_STAGE;

    /* Grouped block order: GROUP_M tile rows per group, column by column inside a group. */
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group, in_group = blockIdx.x % per_group;
    const int first_m = group * GROUP_M;
    const int rows = min(tiles_m - first_m, GROUP_M);
    const int m0 = (first_m + in_group % rows) * BM;
    const int n0 = (in_group / rows) * BN;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int tr_m = lane / TRN, tr_n = lane % TRN;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    const int a_off = wm + tr_m * 4, b_off = wn + tr_n * 4; /* this thread's first float4 */
    const int ktiles = (K + BK - 1) / BK;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

    /* Prologue: STAGES-1 tiles in flight (always commit, so the group count stays regular). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles)
            load_tile<BM, BN, BK, THREADS, N_VEC>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, M, N,
                                                  K, m0, n0, s * BK, tid);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();

    float a_frag[2][TM], b_frag[2][TN];
    load_frags<TM, TN, TRM, TRN>(a_frag[0], b_frag[0], As + a_off, Bs + b_off);
    int read_stage = 0, write_stage = STAGES - 1;

    /* FAST only where B is copied 16 bytes at a time: the 4-byte B path would need BK * BN /
     * THREADS offsets in registers, and it only serves N % 4 != 0. */
    constexpr bool FAST_COPY = FAST && N_VEC;
    copy_plan<BM, BN, BK, THREADS> plan;
    if (FAST_COPY) plan.init(M, N, K, m0, n0, tid);
#ifdef SGEMM_SASS_FAST_ONLY /* SASS counting only: drop the zero-fill path from the loop */
    const int kfull = FAST_COPY ? ktiles + STAGES : K / BK;
#else
    const int kfull = K / BK; /* slices wholly inside K */
#endif

    for (int kt = 0; kt < ktiles; kt++) {
        /* The stage written now was last read before the __syncthreads that ended tile kt-1. */
        if (FAST_COPY && kt + STAGES - 1 < kfull)
            plan.load(As + write_stage * A_STAGE, Bs + write_stage * B_STAGE, A, B, N,
                      (kt + STAGES - 1) * BK, tid);
        else if (kt + STAGES - 1 < ktiles)
            load_tile<BM, BN, BK, THREADS, N_VEC>(As + write_stage * A_STAGE,
                                                  Bs + write_stage * B_STAGE, A, B, M, N, K, m0,
                                                  n0, (kt + STAGES - 1) * BK, tid);
        cp_async_commit();
        const float *as = As + read_stage * A_STAGE + a_off;
        const float *bs = Bs + read_stage * B_STAGE + b_off;
#pragma unroll
        for (int k = 0; k < BK; k++) {
            if (k == BK - 1) {
                /* Tile kt+1 has landed (at most STAGES-2 younger groups still in flight). */
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                load_frags<TM, TN, TRM, TRN>(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2],
                                             As + read_stage * A_STAGE + a_off,
                                             Bs + read_stage * B_STAGE + b_off);
            } else {
                load_frags<TM, TN, TRM, TRN>(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2],
                                             as + (k + 1) * AS, bs + (k + 1) * BN);
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fmaf(a_frag[k % 2][i], b_frag[k % 2][j], acc[i][j]);
        }
    }
    cp_async_wait<0>(); /* nothing useful is left in flight, but leave no copy behind */

    /* Epilogue: C = alpha * acc + beta * C. beta == 0 does not read C (BLAS semantics). */
    const bool interior = m0 + BM <= M && n0 + BN <= N && N_VEC;
#pragma unroll
    for (int gm = 0; gm < TM / 4; gm++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int row = m0 + a_off + gm * TRM * 4 + i;
#pragma unroll
            for (int gn = 0; gn < TN / 4; gn++) {
                const int col = n0 + b_off + gn * TRN * 4;
                const float *v = &acc[4 * gm + i][4 * gn];
                if (interior) {
                    float4 *p = (float4 *)&C[row * N + col];
                    float4 o = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
                    if (beta != 0.f) {
                        float4 c = *p;
                        o.x = fmaf(beta, c.x, o.x), o.y = fmaf(beta, c.y, o.y);
                        o.z = fmaf(beta, c.z, o.z), o.w = fmaf(beta, c.w, o.w);
                    }
                    *p = o;
                } else if (row < M) {
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        if (col + j < N) {
                            float *p = &C[row * N + col + j];
                            *p = beta != 0.f ? fmaf(beta, *p, alpha * v[j]) : alpha * v[j];
                        }
                }
            }
        }
}

/* ---- configurations ----------------------------------------------------------------------- */
typedef void (*tuned_kernel)(int, int, int, float, const float *, const float *, float, float *);

typedef struct {
    const char *what;
    tuned_kernel vec, scalar; /* N % 4 == 0 (16-byte copies of B) and any N */
    int bm, bn, threads, smem_bytes;
} tuned_config;

#define CONFIG(BM, BN, BK, WM, WN, TM, TN, ST, MINB, FAST, what)                                   \
    {what,                                                                                         \
     sgemm_tuned_kernel<BM, BN, BK, WM, WN, TM, TN, ST, MINB, FAST, true>,                         \
     sgemm_tuned_kernel<BM, BN, BK, WM, WN, TM, TN, ST, MINB, false, false>,                       \
     BM,                                                                                           \
     BN,                                                                                           \
     (BM / WM) * (BN / WN) * 32,                                                                   \
     ST * BK * ((BM + A_PAD) + BN) * (int)sizeof(float)}

/* Index 0 is unused: SGEMM_CONFIG=0 (or unset) means "choose by shape". The N % 4 != 0 kernel
 * never uses the fast copies (see FAST_COPY), so it is instantiated with FAST = false: 7 and 8
 * share theirs with 2 and 3 instead of compiling the same code twice. */
static const tuned_config CONFIGS[] = {
    {"auto", NULL, NULL, 0, 0, 0, 0},
    /*          BM   BN  BK  WM  WN TM  TN ST MINB FAST */
    /* 1 */ CONFIG(128, 128, 8, 64, 32, 8, 8, 3, 2, false, "128x128x8, 256 thr, 8x8"),
    /* 2 */ CONFIG(128, 256, 8, 64, 64, 8, 16, 3, 1, false, "128x256x8, 256 thr, 8x16"),
    /* 3 */ CONFIG(128, 128, 8, 64, 64, 8, 16, 3, 2, false, "128x128x8, 128 thr, 8x16"),
    /* 4 */ CONFIG(64, 64, 8, 32, 32, 4, 8, 3, 4, false, "64x64x8, 128 thr, 4x8"),
    /* 5 */ CONFIG(128, 256, 16, 64, 64, 8, 16, 3, 1, false, "128x256x16, 256 thr, 8x16"),
    /* 6 */ CONFIG(128, 128, 16, 64, 64, 8, 16, 3, 2, false, "128x128x16, 128 thr, 8x16"),
    /* Hypotheses after the first sweep (README, "Tuning the final stage"). */
    /* 7 */ CONFIG(128, 256, 8, 64, 64, 8, 16, 3, 1, true, "2 with fast copies"),
    /* 8 */ CONFIG(128, 128, 8, 64, 64, 8, 16, 3, 2, true, "3 with fast copies"),
    /* 9 */ CONFIG(128, 256, 8, 64, 32, 8, 8, 3, 1, true, "128x256x8, 512 thr, 8x8, fast"),
    /* 10 */ CONFIG(128, 128, 16, 64, 32, 8, 8, 3, 2, true, "128x128x16, 256 thr, 8x8, fast"),
    /* 11 */ CONFIG(128, 256, 16, 64, 32, 8, 8, 3, 1, true, "128x256x16, 512 thr, 8x8, fast"),
};
#define NCONFIGS ((int)(sizeof CONFIGS / sizeof CONFIGS[0]))
/* Size classes for SGEMM_CONFIG=0 (or unset): the first configuration in this order whose tile
 * count still gives every SM at least one block; a tile count below the SM count leaves SMs
 * idle. The order is the measured one (H100, second sweep): 10 (128x128x16, 256 threads of 8x8,
 * fast copies, two blocks per SM) was best at 4096^2 and 8192^2 and within 0.01 of the best
 * (11) at 2048^2; below ~1536^2, 64x64 tiles. */
static const int AUTO_ORDER[] = {10, 4};
/* SGEMM_CONFIG, read once: 0 (auto) or a forced configuration 1..NCONFIGS-1; any other
 * value means auto. */
static int forced_config(void) {
    static int cached = -1;
    if (cached < 0) {
        const char *env = getenv("SGEMM_CONFIG");
        int v = env ? atoi(env) : 0;
        cached = (v >= 1 && v < NCONFIGS) ? v : 0;
    }
    return cached;
}

static int sm_count(void) {
    static int sms;
    if (!sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (sms < 1) sms = 1;
    }
    return sms;
}

extern "C" int STAGE(sgemm_tuned)(int m, int n, int k, float alpha, const float *a, const float *b,
                                  float beta, float *c, cudaStream_t stream) {
    static bool attributes_set[NCONFIGS][2];
    int id = forced_config();
    if (!id) {
        const int count = (int)(sizeof AUTO_ORDER / sizeof AUTO_ORDER[0]);
        for (int i = 0; i < count && !id; i++) {
            const tuned_config *c = &CONFIGS[AUTO_ORDER[i]];
            long tiles = (long)blocks_for(m, c->bm) * blocks_for(n, c->bn);
            if (tiles >= sm_count() || i == count - 1) id = AUTO_ORDER[i];
        }
    }
    const tuned_config *cf = &CONFIGS[id];
    const int vec = n % 4 == 0;
    tuned_kernel kernel = vec ? cf->vec : cf->scalar;
    if (!attributes_set[id][vec]) {
        cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             cf->smem_bytes);
        attributes_set[id][vec] = true;
    }
    unsigned int blocks = blocks_for(m, cf->bm) * blocks_for(n, cf->bn);
    kernel<<<blocks, cf->threads, cf->smem_bytes, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
