/* The GEMM reference (see gemm_ref.h): library products through cuBLAS and cuBLASLt, and the
 * fp64 product on the CPU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "gemm_ref.h"
#include "rng.h"

/* ---- handles, workspace, cuBLASLt plans ----------------------------------------------------- */

/* A cuBLASLt matmul set up for one FP8 shape: the descriptors and the algorithm cuBLASLt's
 * heuristic picked. Asking the heuristic costs host time that would show up in the library
 * row's timing if it ran before every launch, so it runs once per shape and the plan is kept. */
enum { PLAN_TENSOR, PLAN_BLOCK };
typedef struct {
    bool used, supported;
    int kind, M, N, K;
    unsigned align_a, align_b, align_d;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t lay_a, lay_b, lay_d; /* cuBLASLt's A (our B), B (our A), D */
    cublasLtMatmulAlgo_t algo;
    unsigned long last_use;
    char why[192];                              /* why not, when !supported */
} lt_plan;

#define NPLANS 16

static struct {
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    void *workspace;
    cudaStream_t stream;  /* the stream of the last call: the workspace is in use there */
    bool bound;           /* `stream` is set on the cuBLAS handle, with our workspace */
    bool atexit_done;
    lt_plan plans[NPLANS];
    unsigned long clock;
} G;

static void init(void) {
    if (G.blas) return;
    CUBLAS_CHECK(cublasCreate(&G.blas));
    /* fp32 stays fp32: no TF32 for cublasSgemm. The fp16 and bf16 products use the tensor
     * cores whatever the math mode (CUBLAS_COMPUTE_32F). */
    CUBLAS_CHECK(cublasSetMathMode(G.blas, CUBLAS_DEFAULT_MATH));
    CUBLASLT_CHECK(cublasLtCreate(&G.lt));
    G.workspace = gpu_alloc(GEMM_REF_WORKSPACE_BYTES);
    G.bound = false;
    if (!G.atexit_done) {
        atexit(gemm_ref_release);
        G.atexit_done = true;
    }
}

/* Every call uses the one workspace, so calls must run in order. On the same stream they do;
 * when the stream changes (setup() on the default stream, then the runner's stream), wait for
 * the GPU first. cublasSetStream() puts the handle back on cuBLAS's default workspace pool, so
 * ours is set again after it. */
static void bind_stream(cudaStream_t stream) {
    if (G.bound && stream == G.stream) return;
    if (G.bound) CUDA_CHECK(cudaDeviceSynchronize());
    CUBLAS_CHECK(cublasSetStream(G.blas, stream));
    CUBLAS_CHECK(cublasSetWorkspace(G.blas, G.workspace, GEMM_REF_WORKSPACE_BYTES));
    G.stream = stream;
    G.bound = true;
}

static void plan_destroy(lt_plan *p) {
    /* Called from atexit too: report, never exit. */
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS, s;
    if (p->lay_d && (s = cublasLtMatrixLayoutDestroy(p->lay_d)) != CUBLAS_STATUS_SUCCESS) st = s;
    if (p->lay_b && (s = cublasLtMatrixLayoutDestroy(p->lay_b)) != CUBLAS_STATUS_SUCCESS) st = s;
    if (p->lay_a && (s = cublasLtMatrixLayoutDestroy(p->lay_a)) != CUBLAS_STATUS_SUCCESS) st = s;
    if (p->desc && (s = cublasLtMatmulDescDestroy(p->desc)) != CUBLAS_STATUS_SUCCESS) st = s;
    if (st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "gemm_ref: destroying a cuBLASLt descriptor: %s\n",
                cublasLtGetStatusName(st));
    memset(p, 0, sizeof *p);
}

void gemm_ref_release(void) {
    if (!G.blas && !G.lt && !G.workspace) return;
    /* After an error that broke the CUDA context nothing can be freed, and trying only adds
     * noise to the message that matters. */
    if (cudaDeviceSynchronize() != cudaSuccess) {
        memset(G.plans, 0, sizeof G.plans);
        G.blas = NULL, G.lt = NULL, G.workspace = NULL, G.bound = false;
        return;
    }
    for (int i = 0; i < NPLANS; i++)
        if (G.plans[i].used) plan_destroy(&G.plans[i]);
    cublasStatus_t st;
    if (G.lt && (st = cublasLtDestroy(G.lt)) != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "gemm_ref: cublasLtDestroy: %s\n", cublasLtGetStatusName(st));
    if (G.blas && (st = cublasDestroy(G.blas)) != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "gemm_ref: cublasDestroy: %s\n", cublasGetStatusName(st));
    cudaError_t e;
    if (G.workspace && (e = cudaFree(G.workspace)) != cudaSuccess)
        fprintf(stderr, "gemm_ref: freeing the workspace: %s\n", cudaGetErrorString(e));
    G.blas = NULL, G.lt = NULL, G.workspace = NULL, G.bound = false;
}

/* ---- cuBLAS ------------------------------------------------------------------------------- */

int gemm_ref_f32_nn(int m, int n, int k, float alpha, const float *a, const float *b, float beta,
                    float *c, cudaStream_t stream) {
    init();
    bind_stream(stream);
    /* cuBLAS is column-major. A row-major m x n C is a column-major n x m C^T, and
     * C^T = B^T A^T: pass B first, with the dimensions swapped, no transposes. */
    CUBLAS_CHECK(cublasSgemm(G.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta,
                             c, n));
    return LAUNCH_OK;
}

/* A row-major M x N C is a column-major N x M matrix C^T, and C^T = B A^T: B (N rows of K) read
 * as column-major K x N and transposed, A (M rows of K) read as column-major K x M as it is. So
 * the row-major TN product is cuBLAS's (OP_T, OP_N) with the operands swapped: no copy, no
 * transpose in memory. */
static void gemm_tn(const void *A, const void *B, void *C, cudaDataType_t type, int M, int N,
                    int K, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    init();
    bind_stream(stream);
    CUBLAS_CHECK(cublasGemmEx(G.blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, type, K, A,
                              type, K, &beta, C, type, N, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

int gemm_ref_f16_tn(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                    cudaStream_t stream) {
    gemm_tn(A, B, C, CUDA_R_16F, M, N, K, stream);
    return LAUNCH_OK;
}

int gemm_ref_bf16_tn(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                     cudaStream_t stream) {
    gemm_tn(A, B, C, CUDA_R_16BF, M, N, K, stream);
    return LAUNCH_OK;
}

/* ---- cuBLASLt, FP8 ------------------------------------------------------------------------ */

bool gemm_ref_e4m3_supports(long M, long N, long K, bool block_scaled, char *why, size_t len) {
    if (M < 1 || N < 1 || K < 1 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) {
        snprintf(why, len, "M, N and K must be in 1 .. 2^31-1");
        return false;
    }
    if (K % 16) {
        snprintf(why, len, "K %% 16 != 0: cuBLASLt's FP8 rows of A and B are whole 16 bytes");
        return false;
    }
    if (N % 16) {
        snprintf(why, len, "N %% 16 != 0: cuBLASLt's FP8 GEMM wants N (its m) in 16s");
        return false;
    }
    if (block_scaled && M % 4) {
        snprintf(why, len, "M %% 4 != 0: cuBLASLt's block scales need M and N in 4s");
        return false;
    }
    return true;
}

/* The largest power of two (up to 256) that divides the address: what the heuristic may assume. */
static unsigned alignment_of(const void *p) {
    uintptr_t a = (uintptr_t)p;
    unsigned al = 256;
    while (al > 1 && (a & (al - 1))) al >>= 1;
    return al;
}

static void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void *v,
                     size_t size) {
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(d, attr, v, size));
}

static lt_plan *plan_for(int kind, int M, int N, int K, const void *A, const void *B,
                         const void *D, const float *scale_a, const float *scale_b) {
    const unsigned aa = alignment_of(A), ab = alignment_of(B), ad = alignment_of(D);
    lt_plan *slot = NULL;
    for (int i = 0; i < NPLANS; i++) {
        lt_plan *p = &G.plans[i];
        if (p->used && p->kind == kind && p->M == M && p->N == N && p->K == K &&
            p->align_a == aa && p->align_b == ab && p->align_d == ad) {
            p->last_use = ++G.clock;
            return p;
        }
        if (!slot || !p->used || (slot->used && p->last_use < slot->last_use)) slot = p;
    }
    if (slot->used) plan_destroy(slot);
    lt_plan *p = slot;
    p->used = true;
    p->kind = kind, p->M = M, p->N = N, p->K = K;
    p->align_a = aa, p->align_b = ab, p->align_d = ad;
    p->last_use = ++G.clock;

    /* In cuBLASLt's column-major terms (gemm_ref.h): D^T (N x M) = op(B') op(A'), with its A
     * our B (a K x N matrix, ld K, transposed) and its B our A (K x M, ld K, as it is). */
    CUBLASLT_CHECK(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const int32_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t);
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n);
    if (kind == PLAN_BLOCK) {
        /* Our B's 128 x 128 blocks are cuBLASLt's A scales, our A's 1 x 128 slices its B's
         * (A/B = BLK128x128/VEC128 is one of the documented combinations). */
        const int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        const int32_t mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        set_desc(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a);
        set_desc(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b);
    }
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b);
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a);
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_a, CUDA_R_8F_E4M3, (uint64_t)K,
                                              (uint64_t)N, K));
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_b, CUDA_R_8F_E4M3, (uint64_t)K,
                                              (uint64_t)M, K));
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_d, CUDA_R_16BF, (uint64_t)N, (uint64_t)M,
                                              N));

    cublasLtMatmulPreference_t pref;
    CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = GEMM_REF_WORKSPACE_BYTES;
    const uint32_t al_a = ab, al_b = aa, al_d = ad; /* cuBLASLt's A is our B and vice versa */
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a));
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b));
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d, sizeof al_d));
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof al_d));
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(G.lt, p->desc, p->lay_a, p->lay_b,
                                                       p->lay_d, p->lay_d, pref, 1, &res, &found);
    CUBLASLT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    /* A configuration cuBLASLt cannot run (this GPU, this shape) is a skip of the row, with
     * cuBLASLt's word for it; any other failure of the query is an error. */
    const bool refused = st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
                         st == CUBLAS_STATUS_ARCH_MISMATCH;
    if (!refused) CUBLASLT_CHECK(st);
    if (refused || found < 1 || res.state != CUBLAS_STATUS_SUCCESS) {
        p->supported = false;
        snprintf(p->why, sizeof p->why,
                 "cuBLASLt has no %s-scaled FP8 algorithm for %dx%dx%d on this GPU (%s)",
                 kind == PLAN_BLOCK ? "block" : "tensor", M, N, K,
                 cublasLtGetStatusName(st != CUBLAS_STATUS_SUCCESS ? st
                                       : found < 1                 ? CUBLAS_STATUS_NOT_SUPPORTED
                                                                   : res.state));
        return p;
    }
    p->algo = res.algo;
    p->supported = true;
    return p;
}

static int e4m3_tn(int kind, const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                   const float *scale_b, bf16_t *D, int M, int N, int K, cudaStream_t stream) {
    char why[192];
    if (!gemm_ref_e4m3_supports(M, N, K, kind == PLAN_BLOCK, why, sizeof why))
        return launch_unsupported("%s", why);
    if (((uintptr_t)scale_a | (uintptr_t)scale_b) & 15)
        return launch_unsupported("cuBLASLt's scale arrays must be 16-byte aligned");
    init();
    bind_stream(stream);
    lt_plan *p = plan_for(kind, M, N, K, A, B, D, scale_a, scale_b);
    if (!p->supported) return launch_unsupported("%s", p->why);
    /* The plan may come from other buffers of the same shape: point it at this call's scales. */
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b);
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a);
    const float one = 1.0f, zero = 0.0f;
    CUBLASLT_CHECK(cublasLtMatmul(G.lt, p->desc, &one, B, p->lay_a, A, p->lay_b, &zero, D,
                                  p->lay_d, D, p->lay_d, &p->algo, G.workspace,
                                  GEMM_REF_WORKSPACE_BYTES, stream));
    return LAUNCH_OK;
}

int gemm_ref_e4m3_tn_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                            const float *scale_b, bf16_t *D, int M, int N, int K,
                            cudaStream_t stream) {
    return e4m3_tn(PLAN_TENSOR, A, B, scale_a, scale_b, D, M, N, K, stream);
}

int gemm_ref_e4m3_tn_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                           const float *scale_b, bf16_t *D, int M, int N, int K,
                           cudaStream_t stream) {
    return e4m3_tn(PLAN_BLOCK, A, B, scale_a, scale_b, D, M, N, K, stream);
}

/* ---- the fp64 product on the CPU ---------------------------------------------------------- */

/* Every fp16, bf16 and e4m3 value as a float, looked up instead of converted in the loops. */
static float T_F16[65536], T_BF16[65536], T_E4M3[256];
static bool tables_ready;

static void tables(void) {
    if (tables_ready) return;
    for (int v = 0; v < 65536; v++) {
        T_F16[v] = f16_to_f32((uint16_t)v);
        T_BF16[v] = bf16_to_f32((uint16_t)v);
    }
    for (int v = 0; v < 256; v++) T_E4M3[v] = e4m3_to_f32((uint8_t)v);
    tables_ready = true;
}

static double load(gemm_dtype t, const void *p, long idx) {
    switch (t) {
    case GEMM_F32: return ((const float *)p)[idx];
    case GEMM_F16: return T_F16[((const uint16_t *)p)[idx]];
    case GEMM_BF16: return T_BF16[((const uint16_t *)p)[idx]];
    case GEMM_E4M3: return T_E4M3[((const uint8_t *)p)[idx]];
    case GEMM_F64: return ((const double *)p)[idx];
    }
    return NAN;
}

static void store(gemm_dtype t, void *p, long idx, double v) {
    switch (t) {
    case GEMM_F64: ((double *)p)[idx] = v; break;
    case GEMM_F32: ((float *)p)[idx] = (float)v; break;
    case GEMM_F16: ((uint16_t *)p)[idx] = f32_to_f16((float)v); break;
    case GEMM_BF16: ((uint16_t *)p)[idx] = f32_to_bf16((float)v); break;
    case GEMM_E4M3: ((uint8_t *)p)[idx] = f32_to_e4m3((float)v); break;
    }
}

/* sum over t in [t0, t1) of A[i][t] * B(t, j), and of |A[i][t] * B(t, j)|, where B(t, j) is
 * B[t][j] (NN) or B[j][t] (TN). The type switch sits outside the loops. */
#define DOT_LOOP(TA, CONV)                                                                         \
    do {                                                                                           \
        const TA *a_ = (const TA *)p->a + i * p->K, *b_ = (const TA *)p->b + b0;                   \
        for (long t = t0; t < t1; t++) {                                                           \
            double x = (double)CONV(a_[t]) * (double)CONV(b_[t * bs]);                             \
            s += x;                                                                                \
            as += fabs(x);                                                                         \
        }                                                                                          \
    } while (0)
#define AS_IS(v) (v)
#define VIA_F16(v) T_F16[v]
#define VIA_BF16(v) T_BF16[v]
#define VIA_E4M3(v) T_E4M3[v]

static double range_dot(const gemm_problem *p, long i, long j, long t0, long t1, double *abs_sum) {
    const long b0 = p->layout == GEMM_NN ? j : j * p->K;
    const long bs = p->layout == GEMM_NN ? p->N : 1;
    double s = 0, as = 0;
    switch (p->type) {
    case GEMM_F32: DOT_LOOP(float, AS_IS); break;
    case GEMM_F16: DOT_LOOP(uint16_t, VIA_F16); break;
    case GEMM_BF16: DOT_LOOP(uint16_t, VIA_BF16); break;
    case GEMM_E4M3: DOT_LOOP(uint8_t, VIA_E4M3); break;
    case GEMM_F64: DOT_LOOP(double, AS_IS); break;
    }
    *abs_sum = as;
    return s;
}

double gemm_ref_exact(const gemm_problem *p, long i, long j, double *abs_sum) {
    tables();
    double sum = 0, asum = 0;
    if (p->scaling == GEMM_SCALE_BLOCK) {
        const long kb_count = gemm_ref_k_blocks(p->K), nb = j / 128;
        for (long kb = 0; kb < kb_count; kb++) {
            const double scale = (double)p->scale_a[gemm_ref_scale_a_index(p->M, i, kb)] *
                                 (double)p->scale_b[gemm_ref_scale_b_index(p->K, nb, kb)];
            const long t1 = (kb + 1) * 128 < p->K ? (kb + 1) * 128 : p->K;
            double part_abs;
            const double part = range_dot(p, i, j, kb * 128, t1, &part_abs);
            sum += scale * part;
            asum += fabs(scale) * part_abs;
        }
    } else {
        sum = range_dot(p, i, j, 0, p->K, &asum);
        if (p->scaling == GEMM_SCALE_TENSOR) {
            const double scale = (double)p->scale_a[0] * (double)p->scale_b[0];
            sum *= scale;
            asum *= fabs(scale);
        }
    }
    double v = p->alpha * sum;
    asum *= fabs(p->alpha);
    if (p->c0) {
        const double c = p->beta * (double)p->c0[i * p->N + j];
        v += c;
        asum += fabs(c);
    }
    if (abs_sum) *abs_sum = asum;
    return v;
}

void gemm_ref_spot_check(const gemm_problem *p, const void *out, gemm_dtype out_type,
                         uint64_t seed, const gemm_tolerance *tol, error_metrics *m) {
    tables();
    metrics_init(m);
    const long rows = p->M, cols = p->N;
    for (int s = 0; s < GEMM_REF_SPOT_SAMPLES; s++) {
        long i, j;
        if (s < 4) { /* the corners: the first and last rows and columns */
            i = (s & 1) ? rows - 1 : 0;
            j = (s & 2) ? cols - 1 : 0;
        } else {
            i = (long)(rng_mix(seed ^ (2ull * (uint64_t)s)) % (uint64_t)rows);
            j = (long)(rng_mix(seed ^ (2ull * (uint64_t)s + 1)) % (uint64_t)cols);
        }
        double abs_sum;
        const double exact = gemm_ref_exact(p, i, j, &abs_sum);
        metrics_add(m, i * cols + j, load(out_type, out, i * cols + j), exact,
                    tol->atol + tol->sum_tol * abs_sum, tol->rtol);
    }
    metrics_finish(m);
}

void gemm_ref_cpu(const gemm_problem *p, void *out, gemm_dtype out_type) {
    tables();
    const long M = p->M, N = p->N, K = p->K;
    if (p->layout == GEMM_TN || p->scaling == GEMM_SCALE_BLOCK) {
        /* Both operands run along k: one contiguous dot product per entry. */
        for (long i = 0; i < M; i++)
            for (long j = 0; j < N; j++) store(out_type, out, i * N + j, gemm_ref_exact(p, i, j, NULL));
        return;
    }
    /* NN: row i of the product as sum_t A[i][t] * (row t of B), in row order, so that B is read
     * along its rows rather than down its columns. */
    double *row = malloc(sizeof(double) * (size_t)N);
    if (!row) {
        fprintf(stderr, "gemm_ref: out of host memory for a %ld-wide row\n", N);
        exit(EXIT_KERNEL_FAILED);
    }
    const double scale =
        p->scaling == GEMM_SCALE_TENSOR ? (double)p->scale_a[0] * (double)p->scale_b[0] : 1.0;
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++) row[j] = 0;
        for (long t = 0; t < K; t++) {
            const double a = load(p->type, p->a, i * K + t);
            if (p->type == GEMM_F32) {
                const float *b = (const float *)p->b + t * N;
                for (long j = 0; j < N; j++) row[j] += a * (double)b[j];
            } else {
                for (long j = 0; j < N; j++) row[j] += a * load(p->type, p->b, t * N + j);
            }
        }
        for (long j = 0; j < N; j++) {
            double v = p->alpha * scale * row[j];
            if (p->c0) v += p->beta * (double)p->c0[i * N + j];
            store(out_type, out, i * N + j, v);
        }
    }
    free(row);
}

/* ---- the exact reference ---------------------------------------------------------------------- */

void gemm_exact_free(gemm_exact *x) {
    free(x->value);
    free(x->spread);
    memset(x, 0, sizeof *x);
}

static void *host_array(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "gemm_ref: out of host memory (%zu bytes for the exact reference)\n",
                bytes);
        exit(EXIT_KERNEL_FAILED);
    }
    return p;
}

void gemm_exact_compute(const gemm_problem *on_device, const gemm_problem *on_host,
                        uint64_t seed, gemm_exact *x) {
    const long M = on_device->M, N = on_device->N;
    const size_t n = (size_t)M * (size_t)N;
    if (x->value && (x->M != M || x->N != N)) gemm_exact_free(x);
    if (!x->value) {
        x->value = host_array(n * sizeof(double));
        x->spread = host_array(n * sizeof(float));
    }
    x->M = M, x->N = N;
    x->terms = on_device->K + (on_device->c0 ? 1 : 0);
    double *value = gpu_alloc(n * sizeof(double));
    float *spread = gpu_alloc(n * sizeof(float));
    gemm_exact_launch(on_device, value, spread, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(x->value, value, n * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(x->spread, spread, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(value));
    CUDA_CHECK(cudaFree(spread));
    double vv = 0, ss = 0;
    for (size_t e = 0; e < n; e++)
        vv += x->value[e] * x->value[e], ss += (double)x->spread[e] * x->spread[e];
    x->rms_value = sqrt(vv / (double)(n ? n : 1));
    x->rms_spread = sqrt(ss / (double)(n ? n : 1));
    /* Two fp64 sums of the same terms in different orders: within 2 K 2^-53 sum|terms|; 2^-40
     * leaves room for K up to 2^11 times larger than any chapter uses, and is still 2^16 below
     * fp32's unit roundoff. */
    const gemm_tolerance tol = {0.0, 0.0, 0x1p-40};
    error_metrics m;
    gemm_ref_spot_check(on_host, x->value, GEMM_F64, seed, &tol, &m);
    if (!metrics_pass(&m, 0x1p-40)) {
        const long at = m.first_bad >= 0 ? m.first_bad : 0;
        fprintf(stderr,
                "gemm_ref: the exact reference disagrees with the CPU's fp64 product at "
                "[%ld][%ld] (M=%ld N=%ld K=%ld): GPU %.17g, CPU %.17g. This is a bug of the "
                "harness (common/gemm_exact.cu), not of a kernel.\n",
                at / N, at % N, M, N, on_device->K, m.first_bad_out, m.first_bad_ref);
        exit(EXIT_KERNEL_FAILED);
    }
}

double gemm_unit_roundoff(gemm_dtype t) {
    switch (t) {
    case GEMM_F64: return 0x1p-53;
    case GEMM_F32: return 0x1p-24;
    case GEMM_F16: return 0x1p-11;
    case GEMM_BF16: return 0x1p-8;
    case GEMM_E4M3: return 0x1p-4;
    }
    return NAN;
}

gemm_bound gemm_bound_of(gemm_dtype out_type, double unit, double steps) {
    return (gemm_bound){gemm_unit_roundoff(out_type), GEMM_BOUND_SIGMAS * unit * sqrt(steps)};
}

/* One unit in the last place of out_type at |v| (normal range). */
static double ulp_at(gemm_dtype t, double v) {
    const int bits = t == GEMM_F32 ? 23 : t == GEMM_F16 ? 10 : t == GEMM_BF16 ? 7 : 52;
    int e;
    frexp(v == 0 ? 1.0 : v, &e); /* |v| in [2^(e-1), 2^e) */
    return ldexp(1.0, e - 1 - bits);
}

double gemm_check(const gemm_exact *x, const void *out, gemm_dtype out_type,
                  const gemm_bound *b, error_metrics *m) {
    tables();
    const long n = x->M * x->N;
    /* GEMM_CHECK_PERTURB (tests only): one entry made wrong on purpose, see gemm_ref.h */
    const char *perturb = getenv("GEMM_CHECK_PERTURB");
    long bent = -1;
    double bend = 0;
    if (perturb && *perturb && n > 0) {
        const bool term = strcmp(perturb, "term") == 0;
        if (!term && strcmp(perturb, "ulp2") != 0) {
            fprintf(stderr, "GEMM_CHECK_PERTURB=%s: use term or ulp2\n", perturb);
            exit(EXIT_BAD_USAGE);
        }
        bent = 0;
        for (long e = 1; e < n; e++)
            if (term ? fabs(x->value[e]) < fabs(x->value[bent])
                     : fabs(x->value[e]) > fabs(x->value[bent]))
                bent = e;
        bend = term ? x->spread[bent] / sqrt((double)(x->terms ? x->terms : 1))
                    : 2 * ulp_at(out_type, x->value[bent]);
    }
    metrics_init(m);
    for (long e = 0; e < n; e++) {
        double got = load(out_type, out, e);
        if (e == bent) got += bend;
        metrics_add(m, e, got, x->value[e], b->accumulate * x->spread[e], b->round);
    }
    metrics_finish(m);
    return 1.001 * (b->round + (x->rms_value > 0 ? b->accumulate * x->rms_spread / x->rms_value
                                                  : b->accumulate));
}
