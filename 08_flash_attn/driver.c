/* Chapter 08 driver: attention forward, O = softmax(Q K^T / sqrt(D) [+ causal mask]) V, and the
 * log-sum-exp of every row (attn.h has the layouts).
 *
 * Sizes: --b (batch), --h (heads), --n (sequence length, queries = keys), --d (head dim, 64 or
 * 128). Each stage appears in four rows: fp16 and bf16 inputs, without and with the causal
 * mask (the row variant: V_BF16 and V_CAUSAL bits), so that one table puts the two stages of
 * one problem next to each other and --kernel picks one problem (f16_tiled_online_causal).
 *
 * Inputs: Q and K uniform in [-2, 2), V in [-1, 1), from the seed (separate seeds per operand;
 * the fp16 and bf16 inputs are the same draws rounded to each type). The scores then spread
 * with a standard deviation of 4/3, so the softmax is neither flat nor one-hot.
 *
 * The check (README, "Correctness"), for every row:
 *   1. against fp64 on the CPU at 64 sampled rows (b, h, query): the corners first (first and
 *      last batch, head and query), then rows drawn from the seed; all D outputs and the LSE;
 *   2. the whole O and LSE against the fp32 reference (reference.cu: stage 1 with nothing
 *      rounded in between, cuBLAS fp32), which is itself checked against the same fp64 samples
 *      first; a reference that fails fails every row. Where S does not fit the GPU (the
 *      reference needs it too) or with --no-library, the whole output is compared with fp64
 *      on the CPU instead when b h n^2 d <= 2^32, and otherwise with the samples only (a note
 *      says so).
 * Bounds, with u the input type's unit roundoff (fp16 2^-11, bf16 2^-8) and |V| <= 1:
 *   O:   |out - ref| <= 2u + 2u |ref| per element, rel L2 <= 4u;
 *   LSE: |out - ref| <= 2^-11 + 2^-20 |ref|;
 *   the reference against fp64: O within 2^-13 (1 + |ref|), LSE within 2^-13 + 2^-20 |ref|.
 *
 * The ratio column ("x naive") divides a row's TFLOPS by those of stage 1's row of the same
 * type and mask, timed in the same run: the runner finds the denominator by name among the rows
 * timed before, and stage rows run in table order. It shows "-" when that row did not run
 * (--kernel picked another, or stage 1 skipped the shape). There is no library row: cuBLAS has
 * no attention call, and cuDNN's is not a dependency of the course.
 *
 * FLOPs: 4 D per (query, key) pair (2 D for q.k, 2 D for p v), over all b h pairs: 4 b h n^2 D,
 * and for the causal rows 4 b h D n (n + 1) / 2, the pairs the mask keeps (the diagonal
 * included). Stages 1-3 compute the masked half too (stage 4 skips the tiles after the
 * diagonal): the causal TFLOPS count only the useful work. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "rng.h"
#include "runner.h"

#define NO_SPILLS "LDL STL"
#define NSAMPLES 64
#define VMAX 1.0

/* Row variants. */
enum { V_BF16 = 1, V_CAUSAL = 2 };
static attn_dtype dtype_of(int v) { return (v & V_BF16) ? ATTN_BF16 : ATTN_F16; }
static int causal_of(int v) { return (v & V_CAUSAL) != 0; }

typedef int (*attn_fn)(const attn_args *, cudaStream_t);

typedef enum { REF_NONE, REF_GPU32, REF_CPU64 } ref_kind;

static struct {
    long b, h, n, d, rows; /* rows = b * h * n */
    bool library_off;
    uint64_t seed;
    const gpu_report *gpu;
    void *q[2], *k[2], *v[2]; /* device, per dtype */
    void *o;
    float *lse;
    void *s;                  /* stage 1's S and the reference's, or NULL when it does not fit */
    size_t s_bytes;
    char s_why[200];
    float *v32, *o32, *lse32; /* device: the fp32 reference */
    /* host */
    int host_dtype;           /* which dtype hq, hk, hv hold (-1: none) */
    float *hq, *hk, *hv;
    uint16_t *ho;
    float *hlse;
    int ref_variant;          /* the variant ref_* and samp_* were computed for (-1: none) */
    ref_kind kind;
    float *ref_o, *ref_lse;   /* the whole reference (REF_GPU32, REF_CPU64) */
    bool ref_ok;
    char ref_why[256];
    long sample[NSAMPLES];    /* row indices (b * h + head) * n + query */
    double *samp_o, samp_lse[NSAMPLES];
    double *pbuf;             /* n doubles: one row of P on the CPU */
} A;

static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "08_flash_attn: out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_KERNEL_FAILED);
    }
    return p;
}

/* ---- rows ------------------------------------------------------------------------------------ */

static bool naive_supports(const shape *s, char *why, size_t len) {
    if (A.library_off) {
        snprintf(why, len, "stage 1 calls cuBLAS: left out with --no-library (the sanitizer "
                           "judges our kernels alone)");
        return false;
    }
    if (s->d[2] > ATTN_NAIVE_MAX_SEQ) {
        snprintf(why, len, "seq > %ld: a row of S does not fit one block's registers",
                 ATTN_NAIVE_MAX_SEQ);
        return false;
    }
    if (!A.s) {
        snprintf(why, len, "%s", A.s_why);
        return false;
    }
    return true;
}

#define ATTN_ROW_ARCH(nm, desc, arch, var, fn, sym, must, lib, sup, smem)                         \
    {{nm, desc, arch, sym, must, NO_SPILLS}, ROLE_STAGE, var, (any_fn)fn, (any_fn)ex_##fn,     \
     NULL, lib, sup, smem}
#define ATTN_ROW(nm, desc, var, fn, sym, must, lib, sup, smem)                                     \
    ATTN_ROW_ARCH(nm, desc, ARCH_ANY, var, fn, sym, must, lib, sup, smem)
#define NAIVE_ROW(nm, desc, var)                                                                    \
    ATTN_ROW(nm, desc, var, attn_naive, "attn_softmax_rows_kernel", "MUFU.EX2 SHFL.BFLY", NULL,     \
             naive_supports, 0)
#define TILED_ROW(nm, desc, var, lib)                                                              \
    ATTN_ROW(nm, desc, var, attn_tiled_online, "tiled_online_kernel", "MUFU.EX2 SHFL.BFLY BAR", lib, \
             NULL, ATTN_TILED_SMEM(128))
/* Stages 3 and 4: the tensor cores (HMMA: both products; LDSM: ldmatrix, .MT88 the V operand),
 * cp.async (LDGSTS), MUFU.EX2, the 4-lane shuffles, no local memory. */
#define FA2_MUST "HMMA.16816.F32 LDSM.16.M88.4 LDSM.16.MT88.4 LDGSTS MUFU.EX2 SHFL.BFLY BAR"
#define FA2_ROW(nm, desc, var, lib)                                                                \
    ATTN_ROW_ARCH(nm, desc, ARCH_SM80, var, attn_fa2, "fa2_mma_kernel", FA2_MUST, lib, NULL,     \
                  ATTN_FA2_SMEM(128))
#define FA2T_ROW(nm, desc, var, lib)                                                               \
    ATTN_ROW_ARCH(nm, desc, ARCH_SM80, var, attn_fa2_tuned, "fa2_tuned_kernel", FA2_MUST, lib,   \
                  NULL, ATTN_FA2T_SMEM(128))
/* Stage 5 (sm_90a only): wgmma (HGMMA), TMA (UTMALDG), the mbarriers (SYNCS), setmaxnreg
 * (USETMAXREG: ptxas did not drop it), MUFU.EX2, no local memory. */
#define WGMMA_MUST "HGMMA UTMALDG SYNCS USETMAXREG MUFU.EX2 SHFL.BFLY"
#define WGMMA_ROW(nm, desc, var, lib)                                                              \
    ATTN_ROW_ARCH(nm, desc, ARCH_SM90A, var, attn_wgmma, "wgmma_attn_kernel", WGMMA_MUST, lib,   \
                  NULL, ATTN_WGMMA_SMEM(128))
/* Stage 6 (sm_90a only): stage 5's opcodes, and the named barriers of the ping-pong (BAR.SYNC,
 * BAR.ARV). */
#define FA3_MUST WGMMA_MUST " BAR.SYNC BAR.ARV UTMASTG STSM"
#define FA3_ROW(nm, desc, var, lib)                                                                \
    ATTN_ROW_ARCH(nm, desc, ARCH_SM90A, var, attn_fa3, "fa3_attn_kernel", FA3_MUST, lib, NULL,    \
                  ATTN_FA3_SMEM(128))

static const row_entry ROWS[] = {
    NAIVE_ROW("f16_naive", "1: S = QK^T (cuBLAS, fp32 S), row softmax over S, O = PV (cuBLAS)", 0),
    TILED_ROW("f16_tiled_online", "2: 64-query tiles, K/V tiles in smem, online softmax, CUDA cores",
              0, "f16_naive"),
    FA2_ROW("f16_fa2", "3: mma.sync for QK^T and PV, P in registers, 4 warps x 16 queries", 0,
            "f16_naive"),
    FA2T_ROW("f16_fa2_tuned",
             "4: 4 warps x 32 queries, 2 blocks/SM, double-buffered K/V, swizzle, exp2, causal skip",
             0, "f16_naive"),
    WGMMA_ROW("f16_wgmma",
              "5: TMA producer + 2 consumer warpgroups, wgmma for QK^T and PV (P in registers)", 0,
              "f16_naive"),
    FA3_ROW("f16_fa3", "6: 5 + ping-pong of the consumers (named barriers), softmax under P V", 0,
            "f16_naive"),
    NAIVE_ROW("f16_naive_causal", "1, causal: the mask in the softmax; the GEMMs compute all of S",
              V_CAUSAL),
    TILED_ROW("f16_tiled_online_causal", "2, causal: every tile computed, keys after the query masked",
              V_CAUSAL, "f16_naive_causal"),
    FA2_ROW("f16_fa2_causal", "3, causal: every tile computed and masked", V_CAUSAL,
            "f16_naive_causal"),
    FA2T_ROW("f16_fa2_tuned_causal", "4, causal: tiles after the diagonal skipped", V_CAUSAL,
             "f16_naive_causal"),
    WGMMA_ROW("f16_wgmma_causal", "5, causal: tiles after the block's last query skipped",
              V_CAUSAL, "f16_naive_causal"),
    FA3_ROW("f16_fa3_causal", "6, causal: only the block's last key tile masked", V_CAUSAL,
            "f16_naive_causal"),
    NAIVE_ROW("bf16_naive", "1 on bf16 inputs", V_BF16),
    TILED_ROW("bf16_tiled_online", "2 on bf16 inputs", V_BF16, "bf16_naive"),
    FA2_ROW("bf16_fa2", "3 on bf16 inputs", V_BF16, "bf16_naive"),
    FA2T_ROW("bf16_fa2_tuned", "4 on bf16 inputs", V_BF16, "bf16_naive"),
    WGMMA_ROW("bf16_wgmma", "5 on bf16 inputs", V_BF16, "bf16_naive"),
    FA3_ROW("bf16_fa3", "6 on bf16 inputs", V_BF16, "bf16_naive"),
    NAIVE_ROW("bf16_naive_causal", "1 on bf16 inputs, causal", V_BF16 | V_CAUSAL),
    TILED_ROW("bf16_tiled_online_causal", "2 on bf16 inputs, causal", V_BF16 | V_CAUSAL,
              "bf16_naive_causal"),
    FA2_ROW("bf16_fa2_causal", "3 on bf16 inputs, causal", V_BF16 | V_CAUSAL, "bf16_naive_causal"),
    FA2T_ROW("bf16_fa2_tuned_causal", "4 on bf16 inputs, causal", V_BF16 | V_CAUSAL,
             "bf16_naive_causal"),
    WGMMA_ROW("bf16_wgmma_causal", "5 on bf16 inputs, causal", V_BF16 | V_CAUSAL,
              "bf16_naive_causal"),
    FA3_ROW("bf16_fa3_causal", "6 on bf16 inputs, causal", V_BF16 | V_CAUSAL, "bf16_naive_causal"),
};

/* ---- setup ----------------------------------------------------------------------------------- */

static int no_room(char *err, size_t len, const char *what, double need, const gpu_report *g) {
    char want[32], have[32];
    fmt_size(want, sizeof want, need);
    fmt_size(have, sizeof have, (double)g->free_bytes);
    snprintf(err, len, "%s needs %s of GPU memory; %s is free", what, want, have);
    return EXIT_BAD_USAGE;
}

/* The sampled rows: corners (first and last batch, head, query), then draws from the seed. */
static void choose_samples(void) {
    int k = 0;
    const long bs[2] = {0, A.b - 1}, hs[2] = {0, A.h - 1}, qs[2] = {0, A.n - 1};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int l = 0; l < 2; l++) A.sample[k++] = (bs[i] * A.h + hs[j]) * A.n + qs[l];
    for (; k < NSAMPLES; k++)
        A.sample[k] = (long)(rng_mix(A.seed * 0x9E3779B97F4A7C15ull + 0xA77E + (uint64_t)k) %
                             (uint64_t)A.rows);
}

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const long b = s->d[0], h = s->d[1], n = s->d[2], d = s->d[3];
    if (d != 64 && d != 128) {
        snprintf(err, len, "--d %ld: the head dimension must be 64 or 128", d);
        return EXIT_BAD_USAGE;
    }
    const double elems = (double)b * (double)h * (double)n * (double)d;
    if (n > INT_MAX || b > INT_MAX || h > INT_MAX || (double)b * (double)h > INT_MAX ||
        elems > 0x1p40) {
        snprintf(err, len, "b=%ld h=%ld n=%ld d=%ld: too large for this chapter's int sizes and "
                 "GPU memory", b, h, n, d);
        return EXIT_BAD_USAGE;
    }
    char what[96];
    snprintf(what, sizeof what, "b=%ld h=%ld n=%ld d=%ld", b, h, n, d);
    const double rows = (double)b * (double)h * (double)n;
    /* Q, K, V in both types, O, LSE; the reference's V and O in fp32 and its LSE. */
    const double base = 6 * 2 * elems + 2 * elems + 4 * rows;
    const double ref = env->library_off ? 0 : 8 * elems + 4 * rows;
    if (!gpu_fits(env->gpu, base)) return no_room(err, len, what, base, env->gpu);

    memset(&A, 0, sizeof A);
    A.b = b, A.h = h, A.n = n, A.d = d, A.rows = b * h * n;
    A.library_off = env->library_off, A.seed = env->seed, A.gpu = env->gpu;
    A.host_dtype = -1, A.ref_variant = -1;
    const double s_need = attn_naive_scratch_bytes(b, h, n);
    if (gpu_fits(env->gpu, base + ref + s_need)) {
        A.s_bytes = (size_t)s_need;
        A.s = gpu_alloc(A.s_bytes);
    } else {
        char want[32], have[32];
        fmt_size(want, sizeof want, s_need);
        fmt_size(have, sizeof have, (double)env->gpu->free_bytes);
        snprintf(A.s_why, sizeof A.s_why, "S needs %s (4 b h n^2 bytes) besides the inputs; %s "
                 "is free", want, have);
    }
    const size_t e = (size_t)A.rows * (size_t)d;
    for (int t = 0; t < 2; t++) {
        A.q[t] = gpu_alloc(e * 2), A.k[t] = gpu_alloc(e * 2), A.v[t] = gpu_alloc(e * 2);
    }
    fill_uniform_f16(A.q[0], (long)e, env->seed, -2, 2, 0);
    fill_uniform_f16(A.k[0], (long)e, env->seed + 1, -2, 2, 0);
    fill_uniform_f16(A.v[0], (long)e, env->seed + 2, -1, 1, 0);
    fill_uniform_bf16(A.q[1], (long)e, env->seed, -2, 2, 0);
    fill_uniform_bf16(A.k[1], (long)e, env->seed + 1, -2, 2, 0);
    fill_uniform_bf16(A.v[1], (long)e, env->seed + 2, -1, 1, 0);
    A.o = gpu_alloc(e * 2);
    A.lse = gpu_alloc((size_t)A.rows * 4);
    if (A.s && !A.library_off) {
        A.v32 = gpu_alloc(e * 4), A.o32 = gpu_alloc(e * 4);
        A.lse32 = gpu_alloc((size_t)A.rows * 4);
    }
    A.hq = host_alloc(e * 4), A.hk = host_alloc(e * 4), A.hv = host_alloc(e * 4);
    A.ho = host_alloc(e * 2);
    A.hlse = host_alloc((size_t)A.rows * 4);
    A.samp_o = host_alloc(sizeof(double) * NSAMPLES * (size_t)d);
    A.pbuf = host_alloc(sizeof(double) * (size_t)n);
    choose_samples();
    CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
}

static void teardown(void) {
    void *dev[] = {A.q[0], A.q[1], A.k[0], A.k[1], A.v[0], A.v[1], A.o, A.lse, A.s, A.v32, A.o32,
                   A.lse32};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i]) CUDA_CHECK(cudaFree(dev[i]));
    free(A.hq), free(A.hk), free(A.hv), free(A.ho), free(A.hlse), free(A.ref_o), free(A.ref_lse);
    free(A.samp_o), free(A.pbuf);
    memset(&A, 0, sizeof A);
}

/* ---- the references ---------------------------------------------------------------------------- */

static attn_args args_of(int variant) {
    const attn_dtype t = dtype_of(variant);
    attn_args a = {A.q[t], A.k[t], A.v[t], A.o, A.lse, (int)A.b, (int)A.h, (int)A.n, (int)A.d, t,
                   causal_of(variant), (float)(1.0 / sqrt((double)A.d)), A.s, A.s_bytes};
    return a;
}

static void download_inputs(attn_dtype t) {
    if (A.host_dtype == (int)t) return;
    const size_t e = (size_t)A.rows * (size_t)A.d;
    uint16_t *tmp = host_alloc(e * 2);
    const void *src[3] = {A.q[t], A.k[t], A.v[t]};
    float *dst[3] = {A.hq, A.hk, A.hv};
    for (int x = 0; x < 3; x++) {
        CUDA_CHECK(cudaMemcpy(tmp, src[x], e * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < e; i++) dst[x][i] = t == ATTN_F16 ? f16_to_f32(tmp[i]) : bf16_to_f32(tmp[i]);
    }
    free(tmp);
    A.host_dtype = (int)t;
}

/* Row r = (b * h + head) * n + query in fp64: its D outputs into o, the LSE returned. The scale
 * is the fp32 one the kernels use. */
static double cpu_row(long r, int causal, float scale, double *o) {
    const long n = A.n, d = A.d, pair = r / n, query = r % n;
    const long last = causal ? query : n - 1;
    const float *q = A.hq + r * d, *k = A.hk + pair * n * d, *v = A.hv + pair * n * d;
    double m = -INFINITY;
    for (long j = 0; j <= last; j++) {
        double dot = 0;
        for (long t = 0; t < d; t++) dot += (double)q[t] * k[j * d + t];
        A.pbuf[j] = dot * (double)scale;
        if (A.pbuf[j] > m) m = A.pbuf[j];
    }
    double l = 0;
    for (long j = 0; j <= last; j++) l += A.pbuf[j] = exp(A.pbuf[j] - m);
    for (long t = 0; t < d; t++) o[t] = 0;
    for (long j = 0; j <= last; j++)
        for (long t = 0; t < d; t++) o[t] += A.pbuf[j] * v[j * d + t];
    for (long t = 0; t < d; t++) o[t] /= l;
    return m + log(l);
}

#define O_TOL(u) (2 * (u) * VMAX)
#define LSE_ATOL 0x1p-11
#define LSE_RTOL 0x1p-20
#define REF_TOL 0x1p-13
#define CPU_MAX_WORK 4294967296.0

/* The references of one variant: fp64 at the samples, and the whole output (fp32 on the GPU,
 * else fp64 on the CPU where it is small enough, else none). */
static void ensure_reference(int variant) {
    if (A.ref_variant == variant) return;
    const attn_args a = args_of(variant);
    download_inputs(a.dtype);
    for (int k = 0; k < NSAMPLES; k++)
        A.samp_lse[k] = cpu_row(A.sample[k], a.causal, a.scale, A.samp_o + (size_t)k * A.d);
    const size_t e = (size_t)A.rows * (size_t)A.d;
    if (!A.ref_o) {
        A.ref_o = host_alloc(e * 4);
        A.ref_lse = host_alloc((size_t)A.rows * 4);
    }
    A.kind = REF_NONE;
    A.ref_ok = true;
    A.ref_why[0] = 0;
    char why[256] = "";
    if (A.v32) {
        if (attn_reference_f32(&a, A.v32, A.o32, A.lse32, 0) == LAUNCH_OK) {
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpy(A.ref_o, A.o32, e * 4, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(A.ref_lse, A.lse32, (size_t)A.rows * 4, cudaMemcpyDeviceToHost));
            A.kind = REF_GPU32;
        } else {
            launch_unsupported_take(why, sizeof why);
        }
    }
    if (A.kind == REF_NONE && (double)A.rows * (double)A.n * (double)A.d <= CPU_MAX_WORK) {
        double *o = host_alloc(sizeof(double) * (size_t)A.d);
        for (long r = 0; r < A.rows; r++) {
            A.ref_lse[r] = (float)cpu_row(r, a.causal, a.scale, o);
            for (long t = 0; t < A.d; t++) A.ref_o[r * A.d + t] = (float)o[t];
        }
        free(o);
        A.kind = REF_CPU64;
    }
    if (A.kind == REF_NONE)
        runner_note("%s: the whole output is not compared (no fp32 reference: %s; fp64 on the "
                    "CPU only up to b h n^2 d = 2^32): rows checked at %d sampled rows only",
                    dtype_of(variant) == ATTN_F16 ? "fp16" : "bf16",
                    A.library_off ? "--no-library" : A.s ? why : A.s_why, NSAMPLES);
    if (A.kind == REF_GPU32) { /* the reference against fp64 */
        for (int k = 0; k < NSAMPLES && A.ref_ok; k++) {
            const long r = A.sample[k];
            const double lse = A.samp_lse[k];
            if (!(fabs(A.ref_lse[r] - lse) <= REF_TOL + LSE_RTOL * fabs(lse))) {
                snprintf(A.ref_why, sizeof A.ref_why, "the fp32 reference's LSE of row %ld is %.9g, "
                         "fp64 says %.9g", r, A.ref_lse[r], lse);
                A.ref_ok = false;
            }
            for (long t = 0; t < A.d && A.ref_ok; t++) {
                const double want = A.samp_o[(size_t)k * A.d + t], got = A.ref_o[r * A.d + t];
                if (!(fabs(got - want) <= REF_TOL * (VMAX + fabs(want)))) {
                    snprintf(A.ref_why, sizeof A.ref_why, "the fp32 reference's O[row %ld][%ld] "
                             "is %.9g, fp64 says %.9g", r, t, got, want);
                    A.ref_ok = false;
                }
            }
        }
        if (!A.ref_ok) runner_note("%s", A.ref_why);
    }
    A.ref_variant = variant;
}

/* ---- callbacks ----------------------------------------------------------------------------- */

static void prepare(const row_entry *r, const shape *s) {
    (void)r, (void)s;
    poison(A.o, (size_t)A.rows * (size_t)A.d * 2, 0);
    poison(A.lse, (size_t)A.rows * 4, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    const attn_args a = args_of(r->variant);
    attn_fn fn = (attn_fn)(exercise ? r->ex_launch : r->launch);
    return fn(&a, st);
}

/* Folds a part of the check (other) into m: its failures count as m's; first_bad names the
 * part's own first failure in a line on stderr. */
static void fold(error_metrics *m, const error_metrics *other, const char *row, const char *what,
                 bool rel_fails) {
    if (other->bad == 0 && !rel_fails) return;
    fprintf(stderr, "08_flash_attn %s: %s: %ld bad, first at %ld: got %.9g, want %.9g, rel L2 "
            "%.3g\n", row, what, other->bad, other->first_bad, other->first_bad_out,
            other->first_bad_ref, other->rel_l2);
    if (m->first_bad < 0) {
        m->first_bad = other->first_bad;
        m->first_bad_out = other->first_bad_out;
        m->first_bad_ref = other->first_bad_ref;
    }
    m->bad += other->bad ? other->bad : 1;
    m->nonfinite += other->nonfinite;
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    ensure_reference(r->variant);
    const double u = dtype_of(r->variant) == ATTN_F16 ? 0x1p-11 : 0x1p-8;
    const double atol = O_TOL(u), rtol = 2 * u;
    *bound = 4 * u;
    const size_t e = (size_t)A.rows * (size_t)A.d;
    CUDA_CHECK(cudaMemcpy(A.ho, A.o, e * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(A.hlse, A.lse, (size_t)A.rows * 4, cudaMemcpyDeviceToHost));
    float (*cvt)(uint16_t) = dtype_of(r->variant) == ATTN_F16 ? f16_to_f32 : bf16_to_f32;

    /* The samples against fp64: O, then the LSE. */
    error_metrics so, sl;
    metrics_init(&so);
    metrics_init(&sl);
    for (int k = 0; k < NSAMPLES; k++) {
        const long row = A.sample[k];
        for (long t = 0; t < A.d; t++)
            metrics_add(&so, row * A.d + t, cvt(A.ho[row * A.d + t]), A.samp_o[(size_t)k * A.d + t],
                        atol, rtol);
        metrics_add(&sl, row, A.hlse[row], A.samp_lse[k], LSE_ATOL, LSE_RTOL);
    }
    metrics_finish(&so);
    metrics_finish(&sl);

    metrics_init(m);
    if (A.kind == REF_NONE) {
        *m = so;
    } else {
        for (size_t i = 0; i < e; i++) metrics_add(m, (long)i, cvt(A.ho[i]), A.ref_o[i], atol, rtol);
        metrics_finish(m);
        error_metrics fl;
        metrics_init(&fl);
        for (long i = 0; i < A.rows; i++)
            metrics_add(&fl, i, A.hlse[i], A.ref_lse[i], LSE_ATOL, LSE_RTOL);
        metrics_finish(&fl);
        fold(m, &fl, r->info.name, "LSE against the reference (index: row)", false);
        fold(m, &so, r->info.name, "O against fp64 at the samples (index: row * D + d)",
             !metrics_pass(&so, *bound));
    }
    fold(m, &sl, r->info.name, "LSE against fp64 at the samples (index: row)", false);
    if (!A.ref_ok) {
        error_metrics bad;
        metrics_init(&bad);
        bad.bad = 1, bad.first_bad = 0;
        fold(m, &bad, r->info.name, A.ref_why, false);
    }
    return true;
}

static double work(const row_entry *r, const shape *s) {
    const double b = (double)s->d[0], h = (double)s->d[1], n = (double)s->d[2], d = (double)s->d[3];
    const double pairs = causal_of(r->variant) ? n * (n + 1) / 2 : n * n;
    return 4.0 * b * h * pairs * d;
}

static const char *dtype_label(const row_entry *r) {
    return dtype_of(r->variant) == ATTN_F16 ? "fp16" : "bf16";
}

/* b h n d. Quick ones first (--quick, make sanitize-08): seq 1; seq 17 with D = 128; a partial
 * tile with D = 64; two tiles and a bit. Then seq 1000 (not a multiple of 64) at both D, the
 * issue's 4097 at both D, and b * h above and below an H100's 132 SMs. */
static const shape TEST_SHAPES[] = {
    {{1, 1, 1, 64}},     {{2, 3, 17, 128}},  {{1, 2, 100, 64}},  {{3, 1, 130, 128}},
    {{1, 4, 1000, 64}},  {{2, 2, 1000, 128}}, {{1, 2, 4097, 64}}, {{1, 1, 4097, 128}},
    {{4, 35, 200, 64}},  {{8, 20, 129, 128}}, {{2, 8, 512, 128}}};
/* The (B, H, N): 16 K tokens in every batch, at D = 64 and 128. */
static const shape BENCH_SHAPES[] = {
    {{16, 16, 1024, 64}},  {{8, 16, 2048, 64}},  {{4, 16, 4096, 64}},  {{2, 16, 8192, 64}},
    {{1, 16, 16384, 64}},  {{16, 16, 1024, 128}}, {{8, 16, 2048, 128}}, {{4, 16, 4096, 128}},
    {{2, 16, 8192, 128}},  {{1, 16, 16384, 128}}};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "08_flash_attn",
        .summary =
            "Chapter 08: attention forward, O = softmax(Q K^T / sqrt(D) [causal]) V with the\n"
            "log-sum-exp of each row; Q, K, V, O [b, h, n, d] in fp16 or bf16, fp32 statistics.\n"
            "Stage 1 materializes S (cuBLAS, row softmax, cuBLAS); stage 2 streams K and V\n"
            "tiles through shared memory with the online softmax (FlashAttention's algorithm);\n"
            "stage 3 runs both products on mma.sync with P in registers (FlashAttention-2);\n"
            "stage 4 double-buffers K/V, swizzles, uses exp2 and skips causal tiles; stage 5\n"
            "(sm_90a) loads K/V by TMA into an mbarrier ring and runs both products on wgmma;\n"
            "stage 6 (sm_90a) adds FlashAttention-3's ping-pong and intra-warpgroup overlap.",
        .ndims = 4,
        .dim_names = {"b", "h", "n", "d"},
        .dim_help = {"batch (default 4)", "heads (default 16)",
                     "sequence length, queries = keys (default 4096)",
                     "head dimension: 64 or 128 (default 128)"},
        .default_shape = {{4, 16, 4096, 128}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 4,
        .bench_shapes = BENCH_SHAPES,
        .nbench_shapes = sizeof BENCH_SHAPES / sizeof BENCH_SHAPES[0],
        .unit = UNIT_TFLOPS,
        .ceiling_col = NULL,
        .library_col = "x naive",
        .flush_l2 = true,
        .rows = ROWS,
        .nrows = sizeof ROWS / sizeof ROWS[0],
        .setup = setup,
        .teardown = teardown,
        .supports = NULL,
        .prepare = prepare,
        .launch = launch,
        .check = check,
        .work = work,
        .dtype = dtype_label,
    };
    return run_chapter(&ch, argc, argv);
}
