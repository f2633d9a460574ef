/* Tests of common/gemm_ref: the library references against a naive fp64 product on the CPU,
 * and the layout of cuBLASLt's FP8 block scales (gemm_ref.h), which nothing else pins down.
 *
 * Prints one line per test: "PASS <what>", "FAIL <what>: <why>" or "SKIP <what>: <why>", and
 * exits 0 (tests/run.sh counts the lines; a crash or a CUDA error exits non-zero and counts as
 * a failure). The host tests run anywhere. The GPU tests print SKIP without a GPU and on one
 * below compute capability 9.0, never PASS; the block-scaled ones need exactly 9.0 (cuBLASLt's
 * VEC128 and BLK128x128 modes are Hopper's).
 *
 * How the layout test can fail: every 1 x 128 slice of A and every 128 x 128 block of B gets its
 * own random scale in [0.5, 2), so cuBLASLt reading a scale from the wrong place changes the
 * product by up to 4x in the entries it touches; the CPU reference dequantizes A and B entry by
 * entry (no blocking tricks) and multiplies in fp64. Two negative controls upload the scales in
 * the transposed layouts and must NOT match, so a test that passes everything is caught. On a
 * mismatch the test says which other reading of the scale arrays the GPU's output matches, if
 * any, and the first entry that differs. Probe tests try shapes the documentation leaves open
 * (M not a multiple of 16, partial N and K blocks, poisoned padding); a shape cuBLASLt refuses
 * there is a SKIP that says so, for chapter 07's predicate. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"
#include "rng.h"

/* ---- reporting -------------------------------------------------------------------------------- */
static void line(const char *word, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void line(const char *word, const char *what, const char *fmt, ...) {
    printf("%s %s", word, what);
    if (fmt && fmt[0]) {
        va_list ap;
        va_start(ap, fmt);
        printf(": ");
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf("\n");
    fflush(stdout);
}

static void *xmalloc(size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test_gemm_ref: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- comparing a product with the fp64 reference ----------------------------------------------- */
typedef struct {
    long count, bad, nonfinite, first; /* first: index of the first entry outside its bound */
    double got, want, bound;           /* at `first` */
    double worst;                      /* largest |out - exact| / bound over finite entries */
    double rel_l2;
} comparison;

/* out (M x N of type t) against exact[], entry bound atol + rtol |exact| + sum_tol abs_sum[]. */
static comparison compare(const void *out, gemm_dtype t, const double *exact,
                          const double *abs_sum, long M, long N, const gemm_tolerance *tol) {
    comparison c;
    memset(&c, 0, sizeof c);
    c.first = -1;
    double sd = 0, sr = 0;
    for (long idx = 0; idx < M * N; idx++) {
        double o;
        switch (t) {
        case GEMM_F32: o = ((const float *)out)[idx]; break;
        case GEMM_F16: o = f16_to_f32(((const uint16_t *)out)[idx]); break;
        case GEMM_BF16: o = bf16_to_f32(((const uint16_t *)out)[idx]); break;
        default: o = ((const double *)out)[idx]; break;
        }
        const double e = exact[idx];
        const double bound = tol->atol + tol->rtol * fabs(e) + tol->sum_tol * abs_sum[idx];
        c.count++;
        sr += e * e;
        bool bad;
        if (!isfinite(o)) {
            c.nonfinite++;
            bad = true;
        } else {
            const double d = fabs(o - e);
            sd += d * d;
            if (bound > 0 && d / bound > c.worst) c.worst = d / bound;
            bad = !(d <= bound);
        }
        if (bad) {
            if (c.first < 0) c.first = idx, c.got = o, c.want = e, c.bound = bound;
            c.bad++;
        }
    }
    c.rel_l2 = sr > 0 ? sqrt(sd / sr) : sqrt(sd);
    return c;
}

static void describe(const comparison *c, long N, char *buf, size_t len) {
    if (c->bad == 0) {
        snprintf(buf, len, "all %ld entries within the bound (worst %.2f of it), rel L2 %.1e",
                 c->count, c->worst, c->rel_l2);
        return;
    }
    snprintf(buf, len,
             "%ld of %ld entries outside the bound (%ld not finite); first at [%ld][%ld]: got "
             "%.6g, want %.6g (bound %.3g); rel L2 %.2e",
             c->bad, c->count, c->nonfinite, c->first / N, c->first % N, c->got, c->want,
             c->bound, c->rel_l2);
}

/* exact[i][j] = alpha * sum_t Ad[i][t] Bd[j][t] (+ beta c0[i][j]), from dequantized fp64 copies:
 * the naive reference, written apart from gemm_ref.c's. */
static void naive_product(const double *Ad, const double *Bd, long M, long N, long K, double alpha,
                          double beta, const float *c0, double *exact, double *abs_sum) {
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double s = 0, as = 0;
            for (long t = 0; t < K; t++) {
                const double x = Ad[i * K + t] * Bd[j * K + t];
                s += x;
                as += fabs(x);
            }
            double v = alpha * s, av = fabs(alpha) * as;
            if (c0) {
                v += beta * c0[i * N + j];
                av += fabs(beta * c0[i * N + j]);
            }
            exact[i * N + j] = v;
            abs_sum[i * N + j] = av;
        }
}

/* ---- FP8 problems -------------------------------------------------------------------------------- */
/* Readings of the two scale arrays: the documented one (gemm_ref.h) and the mistakes a wrong
 * reading of the documentation would make. */
typedef enum {
    LAY_DOC,        /* A: scale_a[kb * M + i]; B: scale_b[nb * L4 + kb] */
    LAY_A_KMAJOR,   /* A: scale_a[i * L + kb] */
    LAY_B_NMAJOR,   /* B: scale_b[kb * NB + nb] */
    LAY_BOTH,       /* both of the above */
    LAY_B_UNPADDED, /* B: scale_b[nb * L + kb] (K blocks not padded to 4) */
    NLAYOUTS
} scale_layout;
static const char *const LAYOUT_NAMES[NLAYOUTS] = {
    "documented", "A's scales K-major", "B's scales N-major", "both transposed",
    "B's scales with stride L instead of L4"};

static long sa_at(scale_layout l, long M, long L, long i, long kb) {
    return (l == LAY_A_KMAJOR || l == LAY_BOTH) ? i * L + kb : kb * M + i;
}
static long sb_at(scale_layout l, long L, long L4, long NB, long nb, long kb) {
    if (l == LAY_B_NMAJOR || l == LAY_BOTH) return kb * NB + nb;
    if (l == LAY_B_UNPADDED) return nb * L + kb;
    return nb * L4 + kb;
}

typedef struct {
    long M, N, K, L, L4, NB;
    bool block;
    uint8_t *a, *b;         /* e4m3, A M x K, B N x K */
    double *sa, *sb;        /* logical scales: sa[i * L + kb], sb[nb * L + kb]; [0] per tensor */
    float *up_a, *up_b;     /* the arrays uploaded to the GPU */
    long up_a_n, up_b_n;
    double *exact, *abs_sum;
} fp8_problem;

static void fp8_make(fp8_problem *p, long M, long N, long K, bool block, uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->M = M, p->N = N, p->K = K, p->block = block;
    p->L = gemm_ref_k_blocks(K), p->L4 = gemm_ref_k_blocks4(K), p->NB = (N + 127) / 128;
    p->a = xmalloc((size_t)(M * K));
    p->b = xmalloc((size_t)(N * K));
    for (long x = 0; x < M * K; x++) p->a[x] = f32_to_e4m3(rng_uniform(seed, (uint64_t)x, -2, 2));
    for (long x = 0; x < N * K; x++)
        p->b[x] = f32_to_e4m3(rng_uniform(seed + 1, (uint64_t)x, -2, 2));
    const long na = block ? M * p->L : 1, nb = block ? p->NB * p->L : 1;
    p->sa = xmalloc(sizeof(double) * (size_t)na);
    p->sb = xmalloc(sizeof(double) * (size_t)nb);
    /* Scales are stored as fp32: draw them as floats so that the CPU uses exactly those values. */
    for (long x = 0; x < na; x++) p->sa[x] = rng_uniform(seed + 2, (uint64_t)x, 0.5f, 2.0f);
    for (long x = 0; x < nb; x++) p->sb[x] = rng_uniform(seed + 3, (uint64_t)x, 0.5f, 2.0f);
    p->up_a_n = block ? gemm_ref_scale_a_count(M, K) : 4;
    p->up_b_n = block ? gemm_ref_scale_b_count(N, K) : 4;
    p->up_a = xmalloc(sizeof(float) * (size_t)p->up_a_n);
    p->up_b = xmalloc(sizeof(float) * (size_t)p->up_b_n);
    p->exact = xmalloc(sizeof(double) * (size_t)(M * N));
    p->abs_sum = xmalloc(sizeof(double) * (size_t)(M * N));
}

static void fp8_free(fp8_problem *p) {
    free(p->a), free(p->b), free(p->sa), free(p->sb), free(p->up_a), free(p->up_b);
    free(p->exact), free(p->abs_sum);
    memset(p, 0, sizeof *p);
}

/* The upload arrays, written in layout l; B's padding entries (kb >= L) get `pad`. */
static void fp8_pack(fp8_problem *p, scale_layout l, float pad) {
    if (!p->block) {
        for (long x = 0; x < 4; x++) p->up_a[x] = (float)p->sa[0], p->up_b[x] = (float)p->sb[0];
        return;
    }
    for (long x = 0; x < p->up_a_n; x++) p->up_a[x] = 0;
    for (long x = 0; x < p->up_b_n; x++) p->up_b[x] = pad;
    for (long i = 0; i < p->M; i++)
        for (long kb = 0; kb < p->L; kb++)
            p->up_a[sa_at(l, p->M, p->L, i, kb)] = (float)p->sa[i * p->L + kb];
    for (long nb = 0; nb < p->NB; nb++)
        for (long kb = 0; kb < p->L; kb++)
            p->up_b[sb_at(l, p->L, p->L4, p->NB, nb, kb)] = (float)p->sb[nb * p->L + kb];
}

/* The naive reference: dequantize every entry of A and B, multiply in fp64. Scales come from
 * the uploaded arrays read in layout l (LAY_DOC and arrays packed in LAY_DOC: the intended
 * product), or from the logical scales when from_upload is false. */
static void fp8_reference(fp8_problem *p, bool from_upload, scale_layout l) {
    const long M = p->M, N = p->N, K = p->K;
    double *Ad = xmalloc(sizeof(double) * (size_t)(M * K));
    double *Bd = xmalloc(sizeof(double) * (size_t)(N * K));
    for (long i = 0; i < M; i++)
        for (long t = 0; t < K; t++) {
            double s;
            if (!p->block) s = p->sa[0];
            else if (from_upload) s = p->up_a[sa_at(l, M, p->L, i, t / 128)];
            else s = p->sa[i * p->L + t / 128];
            Ad[i * K + t] = (double)e4m3_to_f32(p->a[i * K + t]) * s;
        }
    for (long j = 0; j < N; j++)
        for (long t = 0; t < K; t++) {
            double s;
            if (!p->block) s = p->sb[0];
            else if (from_upload) s = p->up_b[sb_at(l, p->L, p->L4, p->NB, j / 128, t / 128)];
            else s = p->sb[(j / 128) * p->L + t / 128];
            Bd[j * K + t] = (double)e4m3_to_f32(p->b[j * K + t]) * s;
        }
    naive_product(Ad, Bd, M, N, K, 1.0, 0.0, NULL, p->exact, p->abs_sum);
    free(Ad), free(Bd);
}

/* bf16 output (2^-8 relative) plus the FP8 tensor cores' accumulation (a fraction of the sum of
 * |terms|, generous: Hopper's FP8 MMA keeps fewer bits than fp32 between promotions). */
static const gemm_tolerance FP8_TOL = {0.0, 0x1p-8, 0x1p-10};

typedef enum { RUN_OK, RUN_UNSUPPORTED } run_status;

/* Uploads A, B and the packed scales, runs cuBLASLt, downloads D (bf16) into out. */
static run_status fp8_run(const fp8_problem *p, uint16_t *out, char *why, size_t len) {
    const long M = p->M, N = p->N, K = p->K;
    e4m3_t *dA = gpu_alloc((size_t)(M * K)), *dB = gpu_alloc((size_t)(N * K));
    float *dsa = gpu_alloc(sizeof(float) * (size_t)p->up_a_n);
    float *dsb = gpu_alloc(sizeof(float) * (size_t)p->up_b_n);
    bf16_t *dD = gpu_alloc(sizeof(uint16_t) * (size_t)(M * N));
    CUDA_CHECK(cudaMemcpy(dA, p->a, (size_t)(M * K), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, p->b, (size_t)(N * K), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsa, p->up_a, sizeof(float) * (size_t)p->up_a_n,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsb, p->up_b, sizeof(float) * (size_t)p->up_b_n,
                          cudaMemcpyHostToDevice));
    poison(dD, sizeof(uint16_t) * (size_t)(M * N), 0);
    const int rc = p->block ? gemm_ref_e4m3_tn_block(dA, dB, dsa, dsb, dD, (int)M, (int)N, (int)K, 0)
                            : gemm_ref_e4m3_tn_tensor(dA, dB, dsa, dsb, dD, (int)M, (int)N,
                                                      (int)K, 0);
    run_status st = RUN_OK;
    if (rc == LAUNCH_UNSUPPORTED) {
        launch_unsupported_take(why, len);
        st = RUN_UNSUPPORTED;
    } else {
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(out, dD, sizeof(uint16_t) * (size_t)(M * N),
                              cudaMemcpyDeviceToHost));
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dsa));
    CUDA_CHECK(cudaFree(dsb));
    CUDA_CHECK(cudaFree(dD));
    return st;
}

/* Which reading of the uploaded (documented-layout) arrays the output matches, if any. */
static void fp8_diagnose(fp8_problem *p, const uint16_t *out, char *buf, size_t len) {
    snprintf(buf, len, "; it matches no other reading of the scale arrays either");
    if (!p->block) return;
    for (int l = LAY_A_KMAJOR; l < NLAYOUTS; l++) {
        fp8_reference(p, true, (scale_layout)l);
        comparison c = compare(out, GEMM_BF16, p->exact, p->abs_sum, p->M, p->N, &FP8_TOL);
        if (c.bad == 0) {
            snprintf(buf, len, "; it DOES match cuBLASLt reading the arrays as '%s'",
                     LAYOUT_NAMES[l]);
            break;
        }
    }
    fp8_reference(p, false, LAY_DOC);
}

typedef enum {
    CASE_PLAIN,      /* documented layout: must match */
    CASE_A_KMAJOR,   /* A's scales uploaded K-major: must NOT match */
    CASE_B_NMAJOR,   /* B's scales uploaded N-major: must NOT match */
    CASE_PAD_NAN,    /* documented layout, B's padding NaN: probe, does cuBLASLt read it? */
    CASE_REUSE       /* a second problem of the same shape: the cached plan takes new scales */
} fp8_case;

static void test_fp8(const char *skip, bool block, long M, long N, long K, fp8_case kind,
                     bool probe, const char *note) {
    char what[256], why[512], diag[256];
    snprintf(what, sizeof what, "gpu: e4m3 %s %ldx%ldx%ld%s%s%s",
             block ? "block-scaled (VEC128 x BLK128x128)" : "per-tensor", M, N, K,
             kind == CASE_A_KMAJOR   ? ", negative control: A's scales uploaded K-major must not match"
             : kind == CASE_B_NMAJOR ? ", negative control: B's scales uploaded N-major must not match"
             : kind == CASE_PAD_NAN  ? ", probe: NaN in the padding of B's scales is never read"
             : kind == CASE_REUSE    ? ", second problem of the same shape (cached cuBLASLt plan)"
                                     : "",
             note ? " " : "", note ? note : "");
    if (skip) {
        line("SKIP", what, "%s", skip);
        return;
    }
    fp8_problem p;
    uint16_t *out = xmalloc(sizeof(uint16_t) * (size_t)(M * N));
    uint64_t seed = 0x5EED0000ull + (uint64_t)(M * 131 + N * 7 + K);
    if (kind == CASE_REUSE) {
        /* The first problem leaves a plan behind; its result is not what this test judges. */
        fp8_make(&p, M, N, K, block, seed);
        fp8_pack(&p, LAY_DOC, 0.0f);
        if (fp8_run(&p, out, why, sizeof why) == RUN_UNSUPPORTED) {
            line(probe ? "SKIP" : "FAIL", what, "%s", why);
            fp8_free(&p), free(out);
            return;
        }
        fp8_free(&p);
        seed += 1000;
    }
    fp8_make(&p, M, N, K, block, seed);
    const scale_layout up = kind == CASE_A_KMAJOR ? LAY_A_KMAJOR
                            : kind == CASE_B_NMAJOR ? LAY_B_NMAJOR
                                                    : LAY_DOC;
    fp8_pack(&p, up, kind == CASE_PAD_NAN ? NAN : 0.0f);
    fp8_reference(&p, false, LAY_DOC); /* the intended product, from the logical scales */
    if (fp8_run(&p, out, why, sizeof why) == RUN_UNSUPPORTED) {
        line(probe ? "SKIP" : "FAIL", what, "%s", why);
        fp8_free(&p), free(out);
        return;
    }
    comparison c = compare(out, GEMM_BF16, p.exact, p.abs_sum, M, N, &FP8_TOL);
    describe(&c, N, why, sizeof why);
    if (kind == CASE_A_KMAJOR || kind == CASE_B_NMAJOR) {
        if (c.bad > c.count / 10)
            line("PASS", what, "rejected as it must be: %s", why);
        else
            line("FAIL", what,
                 "the wrong layout was accepted, so this test cannot tell layouts apart: %s", why);
    } else if (c.bad == 0) {
        /* The same product through gemm_ref's own fp64 code (the spot check chapters use). */
        gemm_problem gp = {.layout = GEMM_TN, .type = GEMM_E4M3, .M = M, .N = N, .K = K,
                           .a = p.a, .b = p.b, .alpha = 1.0,
                           .scaling = block ? GEMM_SCALE_BLOCK : GEMM_SCALE_TENSOR,
                           .scale_a = p.up_a, .scale_b = p.up_b};
        error_metrics m;
        gemm_ref_spot_check(&gp, out, GEMM_BF16, seed, &FP8_TOL, &m);
        if (metrics_pass(&m, 1e-2))
            line("PASS", what, "%s", why);
        else {
            char d[256];
            metrics_describe(&m, d, sizeof d);
            line("FAIL", what, "matches the naive reference, but gemm_ref_spot_check says %s", d);
        }
    } else if (kind == CASE_PAD_NAN) {
        line("SKIP", what,
             "cuBLASLt DOES read the padding (not a failure of gemm_ref: chapter 07 must zero "
             "it): %s", why);
    } else {
        fp8_diagnose(&p, out, diag, sizeof diag);
        line(probe ? "SKIP" : "FAIL", what, "%s%s%s", probe ? "probe ran but differs: " : "", why,
             diag);
    }
    fp8_free(&p);
    free(out);
}

/* ---- fp32, fp16 and bf16 references ----------------------------------------------------------- */
static void test_dense(const char *skip, gemm_dtype t, long M, long N, long K) {
    char what[160], why[512];
    const char *name = t == GEMM_F32 ? "fp32 NN (cublasSgemm, alpha 1.5, beta -0.75)"
                       : t == GEMM_F16 ? "fp16 TN (cublasGemmEx)"
                                       : "bf16 TN (cublasGemmEx)";
    snprintf(what, sizeof what, "gpu: %s %ldx%ldx%ld against fp64", name, M, N, K);
    if (skip) {
        line("SKIP", what, "%s", skip);
        return;
    }
    const uint64_t seed = 0xDE5E0000ull + (uint64_t)t;
    const size_t es = t == GEMM_F32 ? 4 : 2;
    void *ha = xmalloc(es * (size_t)(M * K)), *hb = xmalloc(es * (size_t)(K * N)),
         *hout = xmalloc(es * (size_t)(M * N));
    float *hc0 = xmalloc(sizeof(float) * (size_t)(M * N));
    double *Ad = xmalloc(sizeof(double) * (size_t)(M * K)), *Bd = xmalloc(sizeof(double) * (size_t)(N * K));
    double *exact = xmalloc(sizeof(double) * (size_t)(M * N));
    double *abs_sum = xmalloc(sizeof(double) * (size_t)(M * N));
    for (long x = 0; x < M * K; x++) {
        const float v = rng_uniform(seed, (uint64_t)x, -1, 1);
        if (t == GEMM_F32) ((float *)ha)[x] = v, Ad[x] = v;
        else if (t == GEMM_F16) ((uint16_t *)ha)[x] = f32_to_f16(v), Ad[x] = f16_to_f32(f32_to_f16(v));
        else ((uint16_t *)ha)[x] = f32_to_bf16(v), Ad[x] = bf16_to_f32(f32_to_bf16(v));
    }
    for (long x = 0; x < N * K; x++) {
        const float v = rng_uniform(seed + 1, (uint64_t)x, -1, 1);
        /* x indexes B as stored: K x N for NN (then Bd[j][t] = B[t][j]), N x K for TN */
        const long j = t == GEMM_F32 ? x % N : x / K, tt = t == GEMM_F32 ? x / N : x % K;
        if (t == GEMM_F32) ((float *)hb)[x] = v, Bd[j * K + tt] = v;
        else if (t == GEMM_F16) ((uint16_t *)hb)[x] = f32_to_f16(v), Bd[j * K + tt] = f16_to_f32(f32_to_f16(v));
        else ((uint16_t *)hb)[x] = f32_to_bf16(v), Bd[j * K + tt] = bf16_to_f32(f32_to_bf16(v));
    }
    for (long x = 0; x < M * N; x++) hc0[x] = rng_uniform(seed + 2, (uint64_t)x, -1, 1);
    const double alpha = t == GEMM_F32 ? 1.5 : 1.0, beta = t == GEMM_F32 ? -0.75 : 0.0;
    naive_product(Ad, Bd, M, N, K, alpha, beta, t == GEMM_F32 ? hc0 : NULL, exact, abs_sum);

    void *da = gpu_alloc(es * (size_t)(M * K)), *db = gpu_alloc(es * (size_t)(N * K)),
         *dc = gpu_alloc(es * (size_t)(M * N));
    CUDA_CHECK(cudaMemcpy(da, ha, es * (size_t)(M * K), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, hb, es * (size_t)(N * K), cudaMemcpyHostToDevice));
    if (t == GEMM_F32)
        CUDA_CHECK(cudaMemcpy(dc, hc0, 4 * (size_t)(M * N), cudaMemcpyHostToDevice));
    else
        poison(dc, es * (size_t)(M * N), 0);
    if (t == GEMM_F32)
        gemm_ref_f32_nn((int)M, (int)N, (int)K, 1.5f, da, db, -0.75f, dc, 0);
    else if (t == GEMM_F16)
        gemm_ref_f16_tn(da, db, dc, (int)M, (int)N, (int)K, 0);
    else
        gemm_ref_bf16_tn(da, db, dc, (int)M, (int)N, (int)K, 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hout, dc, es * (size_t)(M * N), cudaMemcpyDeviceToHost));

    /* Chapter 04's bound for fp32; fp16 and bf16: the output's rounding plus fp32 accumulation. */
    gemm_tolerance tol;
    if (t == GEMM_F32) tol = (gemm_tolerance){16 * 0x1p-24 * K * 1.5 + 4 * 0x1p-24 * 0.75, 1e-5, 0};
    else if (t == GEMM_F16) tol = (gemm_tolerance){1e-4 * sqrt((double)K), 0x1p-10, 0};
    else tol = (gemm_tolerance){1e-4 * sqrt((double)K), 0x1p-8, 0};
    comparison c = compare(hout, t, exact, abs_sum, M, N, &tol);
    describe(&c, N, why, sizeof why);
    gemm_problem gp = {.layout = t == GEMM_F32 ? GEMM_NN : GEMM_TN, .type = t, .M = M, .N = N,
                       .K = K, .a = ha, .b = hb, .alpha = alpha, .beta = beta,
                       .c0 = t == GEMM_F32 ? hc0 : NULL};
    error_metrics m;
    gemm_ref_spot_check(&gp, hout, t, seed, &tol, &m);
    if (c.bad)
        line("FAIL", what, "%s", why);
    else if (!metrics_pass(&m, t == GEMM_BF16 ? 1e-2 : 1e-3)) { /* bf16 rounding alone: ~2e-3 */
        char d[256];
        metrics_describe(&m, d, sizeof d);
        line("FAIL", what, "matches the naive reference, but gemm_ref_spot_check says %s", d);
    } else
        line("PASS", what, "%s", why);
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dc));
    free(ha), free(hb), free(hout), free(hc0), free(Ad), free(Bd), free(exact), free(abs_sum);
}

/* ---- the exact reference (gemm_exact) ----------------------------------------------------------
 * Its GPU kernel against this file's naive fp64 product at odd shapes, for every input type,
 * both layouts and both kinds of scales: every entry within 2^-40 of sum|terms| (two fp64 sums
 * in different orders), and the spread within fp32 rounding of sqrt(sum of squared terms).
 * The negative control reads the same bytes with the other layout and must not match. */
static void test_exact(const char *skip, gemm_dtype t, gemm_layout layout, gemm_scaling sc,
                       long M, long N, long K) {
    char what[200];
    static const char *const TYPE[] = {"fp32", "fp16", "bf16", "e4m3", "fp64"};
    snprintf(what, sizeof what, "gpu: exact reference, %s %s%s %ldx%ldx%ld against the naive "
             "fp64 product", TYPE[t], layout == GEMM_NN ? "NN" : "TN",
             sc == GEMM_SCALE_BLOCK ? " block-scaled" : sc == GEMM_SCALE_TENSOR ? " per tensor" : "",
             M, N, K);
    if (skip) {
        line("SKIP", what, "%s", skip);
        return;
    }
    const uint64_t seed = 0xE8AC7000ull + (uint64_t)t * 16 + (uint64_t)layout * 4 + (uint64_t)sc;
    const size_t es = t == GEMM_F32 ? 4 : t == GEMM_E4M3 ? 1 : 2;
    fp8_problem f; /* for e4m3: the bytes and the scales; otherwise only its sizes are used */
    fp8_make(&f, M, N, K, sc == GEMM_SCALE_BLOCK, seed);
    fp8_pack(&f, LAY_DOC, NAN);
    void *ha = t == GEMM_E4M3 ? (void *)f.a : xmalloc(es * (size_t)(M * K));
    void *hb = t == GEMM_E4M3 ? (void *)f.b : xmalloc(es * (size_t)(N * K));
    float *hc0 = xmalloc(sizeof(float) * (size_t)(M * N));
    for (long x = 0; x < M * K && t != GEMM_E4M3; x++) {
        const float v = rng_uniform(seed, (uint64_t)x, -1, 1);
        if (t == GEMM_F32) ((float *)ha)[x] = v;
        else ((uint16_t *)ha)[x] = t == GEMM_F16 ? f32_to_f16(v) : f32_to_bf16(v);
    }
    for (long x = 0; x < N * K && t != GEMM_E4M3; x++) {
        const float v = rng_uniform(seed + 1, (uint64_t)x, -1, 1);
        if (t == GEMM_F32) ((float *)hb)[x] = v;
        else ((uint16_t *)hb)[x] = t == GEMM_F16 ? f32_to_f16(v) : f32_to_bf16(v);
    }
    for (long x = 0; x < M * N; x++) hc0[x] = rng_uniform(seed + 2, (uint64_t)x, -1, 1);
    const bool with_c = t == GEMM_F32;
    gemm_problem hp = {.layout = layout, .type = t, .M = M, .N = N, .K = K, .a = ha, .b = hb,
                       .alpha = with_c ? 1.5 : 1.0, .beta = with_c ? -0.75 : 0.0,
                       .c0 = with_c ? hc0 : NULL, .scaling = sc,
                       .scale_a = f.up_a, .scale_b = f.up_b};
    /* value and sum|terms| from gemm_ref_exact (the CPU's fp64 product), spread term by term */
    double *exact = xmalloc(sizeof(double) * (size_t)(M * N));
    double *abs_sum = xmalloc(sizeof(double) * (size_t)(M * N));
    double *spread = xmalloc(sizeof(double) * (size_t)(M * N));
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double sq = 0;
            exact[i * N + j] = gemm_ref_exact(&hp, i, j, &abs_sum[i * N + j]);
            for (long tt = 0; tt < K; tt++) {
                const double a = t == GEMM_F32 ? ((float *)ha)[i * K + tt]
                                 : t == GEMM_F16 ? f16_to_f32(((uint16_t *)ha)[i * K + tt])
                                 : t == GEMM_BF16 ? bf16_to_f32(((uint16_t *)ha)[i * K + tt])
                                                  : e4m3_to_f32(f.a[i * K + tt]);
                const long bat = layout == GEMM_NN ? tt * N + j : j * K + tt;
                const double b = t == GEMM_F32 ? ((float *)hb)[bat]
                                 : t == GEMM_F16 ? f16_to_f32(((uint16_t *)hb)[bat])
                                 : t == GEMM_BF16 ? bf16_to_f32(((uint16_t *)hb)[bat])
                                                  : e4m3_to_f32(f.b[bat]);
                const double s_a = sc == GEMM_SCALE_NONE ? 1
                                   : sc == GEMM_SCALE_TENSOR ? f.up_a[0]
                                   : f.up_a[gemm_ref_scale_a_index(M, i, tt / 128)];
                const double s_b = sc == GEMM_SCALE_NONE ? 1
                                   : sc == GEMM_SCALE_TENSOR ? f.up_b[0]
                                   : f.up_b[gemm_ref_scale_b_index(K, j / 128, tt / 128)];
                const double term = hp.alpha * a * s_a * b * s_b;
                sq += term * term;
            }
            if (with_c) sq += (hp.beta * hc0[i * N + j]) * (hp.beta * hc0[i * N + j]);
            spread[i * N + j] = sqrt(sq);
        }
    void *da = gpu_alloc(es * (size_t)(M * K)), *db = gpu_alloc(es * (size_t)(N * K));
    float *dc0 = gpu_alloc(sizeof(float) * (size_t)(M * N));
    float *dsa = gpu_alloc(sizeof(float) * (size_t)f.up_a_n), *dsb = gpu_alloc(sizeof(float) * (size_t)f.up_b_n);
    double *dv = gpu_alloc(sizeof(double) * (size_t)(M * N));
    float *ds = gpu_alloc(sizeof(float) * (size_t)(M * N));
    CUDA_CHECK(cudaMemcpy(da, ha, es * (size_t)(M * K), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, hb, es * (size_t)(N * K), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc0, hc0, sizeof(float) * (size_t)(M * N), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsa, f.up_a, sizeof(float) * (size_t)f.up_a_n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dsb, f.up_b, sizeof(float) * (size_t)f.up_b_n, cudaMemcpyHostToDevice));
    gemm_problem dp = hp;
    dp.a = da, dp.b = db, dp.c0 = with_c ? dc0 : NULL, dp.scale_a = dsa, dp.scale_b = dsb;
    double *value = xmalloc(sizeof(double) * (size_t)(M * N));
    float *got_spread = xmalloc(sizeof(float) * (size_t)(M * N));
    char why[512] = "";
    bool ok = true;
    for (int control = 0; control < 2 && ok; control++) {
        gemm_problem run = dp;
        if (control) run.layout = layout == GEMM_NN ? GEMM_TN : GEMM_NN;
        poison(dv, sizeof(double) * (size_t)(M * N), 0);
        poison(ds, sizeof(float) * (size_t)(M * N), 0);
        gemm_exact_launch(&run, dv, ds, 0);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(value, dv, sizeof(double) * (size_t)(M * N), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(got_spread, ds, sizeof(float) * (size_t)(M * N), cudaMemcpyDeviceToHost));
        const gemm_tolerance tol = {0, 0, 0x1p-40};
        comparison c = compare(value, GEMM_F64, exact, abs_sum, M, N, &tol);
        if (control) {
            if (c.bad == 0 && M > 1 && N > 1) {
                ok = false;
                snprintf(why, sizeof why, "the other layout's product matched too: the check "
                         "cannot tell layouts apart");
            }
            continue;
        }
        describe(&c, N, why, sizeof why);
        if (c.bad) ok = false;
        for (long x = 0; x < M * N && ok; x++)
            if (!(fabs(got_spread[x] - spread[x]) <= 0x1p-22 * spread[x])) {
                ok = false;
                snprintf(why, sizeof why, "spread of [%ld][%ld] is %.9g, want %.9g", x / N, x % N,
                         got_spread[x], spread[x]);
            }
    }
    line(ok ? "PASS" : "FAIL", what, "%s", why);
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dc0));
    CUDA_CHECK(cudaFree(dsa));
    CUDA_CHECK(cudaFree(dsb));
    CUDA_CHECK(cudaFree(dv));
    CUDA_CHECK(cudaFree(ds));
    if (t != GEMM_E4M3) free(ha), free(hb);
    free(hc0), free(exact), free(abs_sum), free(spread), free(value), free(got_spread);
    fp8_free(&f);
}

/* ---- host tests ------------------------------------------------------------------------------- */
static void host_layout_sizes(void) {
    const char *what = "host: block-scale array sizes and indices";
    struct {
        long got, want;
        const char *name;
    } c[] = {
        {gemm_ref_scale_a_count(256, 512), 256 * 4, "scale_a count 256x512"},
        {gemm_ref_scale_b_count(384, 512), 4 * 3, "scale_b count 384x512"},
        {gemm_ref_k_blocks(384), 3, "L at K=384"},
        {gemm_ref_k_blocks4(384), 4, "L4 at K=384"},
        {gemm_ref_scale_b_count(144, 320), 4 * 2, "scale_b count 144x320"},
        {gemm_ref_scale_a_index(144, 5, 2), 2 * 144 + 5, "scale_a index M=144 i=5 kb=2"},
        {gemm_ref_scale_b_index(384, 1, 2), 1 * 4 + 2, "scale_b index K=384 nb=1 kb=2"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i].got != c[i].want) {
            line("FAIL", what, "%s is %ld, want %ld", c[i].name, c[i].got, c[i].want);
            return;
        }
    line("PASS", what, NULL);
}

static void host_small_products(void) {
    const char *what = "host: fp64 products of hand-computed 2x3 examples (NN fp32, TN fp16/bf16)";
    /* A = [1 2; 3 4] (2x2 would be too kind: K = 2, M = 2, N = 3), B (NN) = [1 0 -1; 2 1 0] */
    const float a[4] = {1, 2, 3, 4}, bnn[6] = {1, 0, -1, 2, 1, 0}, c0[6] = {1, 1, 1, 2, 2, 2};
    /* A B = [5 2 -1; 11 4 -3]; 2 AB - 1 C0 = [9 3 -3; 20 6 -8] */
    const double want_nn[6] = {9, 3, -3, 20, 6, -8};
    gemm_problem nn = {.layout = GEMM_NN, .type = GEMM_F32, .M = 2, .N = 3, .K = 2, .a = a,
                       .b = bnn, .alpha = 2, .beta = -1, .c0 = c0};
    double out[6];
    gemm_ref_cpu(&nn, out, GEMM_F64);
    for (int x = 0; x < 6; x++)
        if (out[x] != want_nn[x] || gemm_ref_exact(&nn, x / 3, x % 3, NULL) != want_nn[x]) {
            line("FAIL", what, "NN entry [%d][%d] is %g (exact() %g), want %g", x / 3, x % 3,
                 out[x], gemm_ref_exact(&nn, x / 3, x % 3, NULL), want_nn[x]);
            return;
        }
    /* TN: B stored N x K = the transpose of bnn: rows (1 2), (0 1), (-1 0). */
    const float btn[6] = {1, 2, 0, 1, -1, 0};
    const double want_tn[6] = {5, 2, -1, 11, 4, -3};
    for (int bf = 0; bf < 2; bf++) {
        uint16_t ah[4], bh[6], o16[6];
        for (int x = 0; x < 4; x++) ah[x] = bf ? f32_to_bf16(a[x]) : f32_to_f16(a[x]);
        for (int x = 0; x < 6; x++) bh[x] = bf ? f32_to_bf16(btn[x]) : f32_to_f16(btn[x]);
        gemm_problem tn = {.layout = GEMM_TN, .type = bf ? GEMM_BF16 : GEMM_F16, .M = 2, .N = 3,
                           .K = 2, .a = ah, .b = bh, .alpha = 1};
        gemm_ref_cpu(&tn, o16, bf ? GEMM_BF16 : GEMM_F16);
        for (int x = 0; x < 6; x++) {
            const double got = bf ? bf16_to_f32(o16[x]) : f16_to_f32(o16[x]);
            if (got != want_tn[x]) {
                line("FAIL", what, "TN %s entry [%d][%d] is %g, want %g", bf ? "bf16" : "fp16",
                     x / 3, x % 3, got, want_tn[x]);
                return;
            }
        }
    }
    line("PASS", what, NULL);
}

/* gemm_ref's block-scaled fp64 product against this file's naive dequantize-and-multiply, with
 * partial N and K blocks and padding that must not be read (NaN). */
static void host_block_product(void) {
    const char *what = "host: gemm_ref_cpu block-scaled (8x144x320) against the naive reference";
    fp8_problem p;
    fp8_make(&p, 8, 144, 320, true, 77);
    fp8_pack(&p, LAY_DOC, NAN);
    fp8_reference(&p, false, LAY_DOC);
    double *out = xmalloc(sizeof(double) * 8 * 144);
    gemm_problem gp = {.layout = GEMM_TN, .type = GEMM_E4M3, .M = 8, .N = 144, .K = 320,
                       .a = p.a, .b = p.b, .alpha = 1.0, .scaling = GEMM_SCALE_BLOCK,
                       .scale_a = p.up_a, .scale_b = p.up_b};
    gemm_ref_cpu(&gp, out, GEMM_F64);
    const gemm_tolerance tol = {0, 1e-12, 1e-14};
    comparison c = compare(out, GEMM_F64, p.exact, p.abs_sum, 8, 144, &tol);
    char why[512];
    describe(&c, 144, why, sizeof why);
    if (c.bad) line("FAIL", what, "%s", why);
    else line("PASS", what, NULL);
    free(out);
    fp8_free(&p);
}

static void host_spot_check(void) {
    const char *what = "host: spot check passes the fp64 product and catches a wrong corner";
    const long M = 40, N = 24, K = 50;
    float *a = xmalloc(sizeof(float) * M * K), *b = xmalloc(sizeof(float) * K * N);
    float *out = xmalloc(sizeof(float) * M * N);
    for (long x = 0; x < M * K; x++) a[x] = rng_uniform(5, (uint64_t)x, -1, 1);
    for (long x = 0; x < K * N; x++) b[x] = rng_uniform(6, (uint64_t)x, -1, 1);
    gemm_problem p = {.layout = GEMM_NN, .type = GEMM_F32, .M = M, .N = N, .K = K, .a = a, .b = b,
                      .alpha = 1};
    gemm_ref_cpu(&p, out, GEMM_F32);
    const gemm_tolerance tol = {1e-6, 1e-6, 0};
    error_metrics m;
    gemm_ref_spot_check(&p, out, GEMM_F32, 42, &tol, &m);
    char d[256];
    if (!metrics_pass(&m, 1e-6) || m.count != GEMM_REF_SPOT_SAMPLES) {
        metrics_describe(&m, d, sizeof d);
        line("FAIL", what, "the exact product failed (%ld samples): %s", m.count, d);
    } else {
        out[M * N - 1] += 0.01f; /* the last corner, always sampled */
        gemm_ref_spot_check(&p, out, GEMM_F32, 42, &tol, &m);
        if (metrics_pass(&m, 1e-6) || m.first_bad != M * N - 1)
            line("FAIL", what, "a wrong corner went unnoticed (first bad %ld)", m.first_bad);
        else
            line("PASS", what, NULL);
    }
    free(a), free(b), free(out);
}

/* gemm_check on a hand-made exact product: one rounding of each entry to bf16 passes, two
 * units in the last place at one entry fail with that entry named, and the accumulation term
 * lets an entry near zero move by a fraction of its spread but not by a whole term. */
static void host_check_bound(void) {
    const char *what = "host: gemm_check passes one rounding, fails two ulps and a dropped term";
    enum { M = 4, N = 8, K = 1024 };
    double value[M * N];
    float spread[M * N];
    uint16_t out[M * N];
    for (int e = 0; e < M * N; e++) {
        value[e] = (e - 13) * 1.37 + 0.001 * e; /* entry 13 is 0.013: near zero */
        spread[e] = 10.0f;                      /* sqrt(K) terms of about 0.3 */
        out[e] = f32_to_bf16((float)value[e]);
    }
    gemm_exact x = {.M = M, .N = N, .terms = K, .value = value, .spread = spread};
    double vv = 0;
    for (int e = 0; e < M * N; e++) vv += value[e] * value[e];
    x.rms_value = sqrt(vv / (M * N)), x.rms_spread = 10;
    const gemm_bound b = gemm_bound_of(GEMM_BF16, 0x1p-23, K);
    error_metrics m;
    const double l2 = gemm_check(&x, out, GEMM_BF16, &b, &m);
    if (!metrics_pass(&m, l2)) {
        char d[256];
        metrics_describe(&m, d, sizeof d);
        line("FAIL", what, "one rounding failed: %s", d);
        return;
    }
    const uint16_t keep = out[31];
    out[31] = (uint16_t)(out[31] + 2); /* two ulps up at the largest entry */
    gemm_check(&x, out, GEMM_BF16, &b, &m);
    out[31] = keep;
    if (m.bad != 1 || m.first_bad != 31) {
        line("FAIL", what, "two ulps at entry 31: %ld bad, first %ld", m.bad, m.first_bad);
        return;
    }
    out[13] = f32_to_bf16((float)(value[13] + 10.0 / 32)); /* one typical term more */
    gemm_check(&x, out, GEMM_BF16, &b, &m);
    if (m.bad != 1 || m.first_bad != 13) {
        line("FAIL", what, "a term dropped at entry 13: %ld bad, first %ld", m.bad, m.first_bad);
        return;
    }
    line("PASS", what, "bound at entry 13: %.2e, a term %.2e", b.round * fabs(value[13]) +
         b.accumulate * spread[13], 10.0 / 32);
}

static void host_rules(void) {
    const char *what = "host: FP8 shape rules";
    char why[256];
    const bool ok = gemm_ref_e4m3_supports(256, 384, 512, true, why, sizeof why) &&
                    gemm_ref_e4m3_supports(102, 384, 512, false, why, sizeof why) &&
                    !gemm_ref_e4m3_supports(102, 384, 512, true, why, sizeof why) &&
                    !gemm_ref_e4m3_supports(256, 384, 520, false, why, sizeof why) &&
                    !gemm_ref_e4m3_supports(256, 392, 512, false, why, sizeof why);
    line(ok ? "PASS" : "FAIL", what, ok ? NULL : "a rule answered wrong (last message: %s)", why);
}

int main(void) {
    host_layout_sizes();
    host_small_products();
    host_block_product();
    host_spot_check();
    host_rules();
    host_check_bound();

    gpu_report g;
    char err[512], skip_all[640] = "", skip_block[640] = "";
    if (gpu_open(&g, err, sizeof err) != 0) {
        fprintf(stderr, "test_gemm_ref: %s\n", err);
        snprintf(skip_all, sizeof skip_all, "no GPU");
    }
    else if (g.cc < 90)
        snprintf(skip_all, sizeof skip_all, "needs compute capability 9.0; %s is %d.%d", g.name,
                 g.cc / 10, g.cc % 10);
    else if (g.cc != 90)
        snprintf(skip_block, sizeof skip_block,
                 "cuBLASLt's VEC128 / BLK128x128 scales are for compute capability 9.0 only; %s "
                 "is %d.%d", g.name, g.cc / 10, g.cc % 10);
    const char *all = skip_all[0] ? skip_all : NULL;
    const char *blk = all ? all : skip_block[0] ? skip_block : NULL;

    test_exact(all, GEMM_F32, GEMM_NN, GEMM_SCALE_NONE, 77, 65, 129);
    test_exact(all, GEMM_F16, GEMM_TN, GEMM_SCALE_NONE, 77, 65, 129);
    test_exact(all, GEMM_BF16, GEMM_TN, GEMM_SCALE_NONE, 1, 130, 72);
    test_exact(all, GEMM_BF16, GEMM_NN, GEMM_SCALE_NONE, 70, 3, 200);
    test_exact(all, GEMM_E4M3, GEMM_TN, GEMM_SCALE_TENSOR, 65, 144, 320);
    test_exact(all, GEMM_E4M3, GEMM_TN, GEMM_SCALE_BLOCK, 100, 272, 400);
    test_exact(all, GEMM_E4M3, GEMM_TN, GEMM_SCALE_BLOCK, 1, 129, 16);

    test_dense(all, GEMM_F32, 77, 65, 129);
    test_dense(all, GEMM_F16, 77, 65, 129);
    test_dense(all, GEMM_BF16, 77, 65, 129);

    test_fp8(all, false, 256, 384, 512, CASE_PLAIN, false, NULL);
    test_fp8(all, false, 144, 256, 384, CASE_PLAIN, false, NULL);
    test_fp8(all, false, 256, 384, 512, CASE_REUSE, false, NULL);
    test_fp8(blk, true, 256, 384, 512, CASE_PLAIN, false, NULL);
    test_fp8(blk, true, 144, 256, 384, CASE_PLAIN, false, "(M not a multiple of 128, L4 > L)");
    test_fp8(blk, true, 256, 384, 512, CASE_REUSE, false, NULL);
    test_fp8(blk, true, 256, 384, 512, CASE_A_KMAJOR, false, NULL);
    test_fp8(blk, true, 256, 384, 512, CASE_B_NMAJOR, false, NULL);
    test_fp8(blk, true, 144, 256, 384, CASE_PAD_NAN, true, NULL);
    test_fp8(all, false, 100, 144, 320, CASE_PLAIN, true, "(probe: M % 16 != 0)");
    test_fp8(blk, true, 100, 256, 384, CASE_PLAIN, true, "(probe: M % 16 != 0)");
    test_fp8(blk, true, 128, 144, 320, CASE_PLAIN, true, "(probe: partial N and K blocks)");
    gemm_ref_release();
    return 0;
}
