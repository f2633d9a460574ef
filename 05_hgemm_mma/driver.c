/* Chapter 05 driver: C = A * B in fp16 on the tensor cores with mma.sync, against cuBLAS.
 *
 * The problem: A is M x K row-major, B is K x N column-major (stored as N rows of K: the "TN"
 * layout, both operands contiguous along k), C is M x N row-major; inputs fp16, products
 * accumulated in fp32, C rounded to fp16. 2*M*N*K flops on 2*(M*K + N*K + M*N) bytes: at
 * 4096^3 that is 1365 flops per byte, far above the ~150-200 flops per byte where the
 * tensor cores outrun DRAM, so the floor is the flops over the mma.sync ceiling
 * (ANCHORS.md: 644 TFLOPS for m16n8k16 f16 -> f32 on our H200).
 *
 * The check: A and B are fresh uniform random values in [-1, 1) (seed printed). setup()
 * computes a reference C with cuBLAS (cublasGemmEx, fp16 in and out, fp32 compute) into its own
 * buffer and spot-checks that reference against fp64 dot products on the CPU at sampled
 * entries; every row's output (poisoned with NaN first) is then compared with the whole
 * reference. Bounds (README, "Correctness"):
 *   fp32 accumulation: per element |out - ref| <= 2^-9 |ref| + 2^-10 sqrt(K), rel L2 <= 1e-3;
 *   fp16 accumulation: per element |out - ref| <= 2^-5 |ref| + 2^-6 sqrt(K),  rel L2 <= 1e-2. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "hgemm.h"
#include "runner.h"

typedef enum { V_TN, V_NN, V_F16_ACCUM } hgemm_variant;

typedef int (*hgemm_fn)(const f16_t *, const f16_t *, f16_t *, int, int, int, cudaStream_t);

#define NO_SPILLS "LDL STL"
#define LIBRARY "cublas"

/* A stage row: name, description, variant, launcher, kernel symbol, must / must-not opcodes. */
#define STAGE_ROW(nm, desc, var, fn, sym, must, must_not)                                          \
    {{nm, desc, ARCH_SM80, sym, must, must_not}, ROLE_STAGE, var, (any_fn)fn, (any_fn)ex_##fn,    \
     NULL, LIBRARY}

static cublasHandle_t g_handle;
static void *g_workspace;
#define WORKSPACE_BYTES ((size_t)32 << 20)

/* cuBLAS is column-major. A row-major M x N C is a column-major N x M matrix C^T, and
 * C^T = B^T A^T: B (N rows of K) read as column-major K x N and transposed, A (M rows of K) read
 * as column-major K x M as it is. So the row-major TN product is cuBLAS's (OP_T, OP_N) with the
 * operands swapped: no copy, no transpose in memory. */
static int cublas_hgemm(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                        cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasSetStream(g_handle, stream));
    CUBLAS_CHECK(cublasGemmEx(g_handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F,
                              K, A, CUDA_R_16F, K, &beta, C, CUDA_R_16F, N, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
    return LAUNCH_OK;
}

static const row_entry ROWS[] = {
    {{LIBRARY, "cublasGemmEx, fp16 in and out, CUBLAS_COMPUTE_32F (wgmma on Hopper)", ARCH_ANY,
      NULL, NULL, NULL},
     ROLE_LIBRARY, V_TN, (any_fn)cublas_hgemm, NULL, NULL, NULL},
    STAGE_ROW("wmma_global", "WMMA 16x16x16, one warp per 16x16 tile, operands from global",
              V_TN, hgemm_wmma_global, "wmma_global_kernel", "HMMA", NO_SPILLS),
    STAGE_ROW("wmma_smem", "WMMA, 128x128x32 block tiles in shared memory, 64x32 per warp",
              V_TN, hgemm_wmma_smem, "wmma_smem_kernel", "HMMA", NO_SPILLS),
    STAGE_ROW("mma_ldmatrix", "mma.sync m16n8k16 (inline PTX), fragments by ldmatrix.x4",
              V_TN, hgemm_mma_ldmatrix, "mma_ldmatrix_kernel", "HMMA.16816.F32 LDSM.16.M88.4",
              NO_SPILLS),
    STAGE_ROW("cp_async2", "cp.async global->shared, 2-stage pipeline (double buffer)", V_TN,
              hgemm_cp_async_2stage, "cp_async_kernelILi2E", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("cp_async3", "cp.async, 3-stage pipeline", V_TN, hgemm_cp_async_3stage,
              "cp_async_kernelILi3E", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("cp_async4", "cp.async, 4-stage pipeline", V_TN, hgemm_cp_async_4stage,
              "cp_async_kernelILi4E", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("swizzle", "XOR-swizzled shared memory, BK=64: conflict-free ldmatrix and cp.async",
              V_TN, hgemm_swizzle, "swizzle_kernel", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("warp_tile", "128x256 block, 64x64 warp tiles, fragments double-buffered", V_TN,
              hgemm_warp_tile, "warp_tile_kernel", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("raster", "grouped block order (rasterization) for L2 reuse", V_TN, hgemm_raster,
              "raster_kernel", "HMMA LDSM LDGSTS", NO_SPILLS),
    STAGE_ROW("final", "tuned: config per size class (HGEMM_CONFIG), smem epilogue, any M, N",
              V_TN, hgemm_final, "final_kernel", "HMMA.16816.F32 LDSM LDGSTS LDS.128 STG.E.128",
              NO_SPILLS),
    STAGE_ROW("f16_accum", "the final kernel with fp16 accumulators (mma f16.f16.f16.f16)",
              V_F16_ACCUM, hgemm_f16_accum, "f16_accum_kernel", "HMMA.16816.F16 LDSM LDGSTS",
              NO_SPILLS),
    STAGE_ROW("nn", "NN layout: B row-major K x N, fragments by ldmatrix.x4.trans", V_NN,
              hgemm_nn, "nn_kernel", "HMMA.16816.F32 LDSM.16.MT88.4 LDGSTS", NO_SPILLS),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    int M, N, K;
    uint64_t seed;
    f16_t *A, *B, *Bkn, *C, *ref; /* device; Bkn: B row-major K x N, for the NN stage */
    uint16_t *hA, *hB, *hC, *href;
    bool bkn_ready;
} P;

static int setup_error(char *err, size_t len, const shape *s, const char *what) {
    snprintf(err, len, "%ldx%ldx%ld: %s", s->d[0], s->d[1], s->d[2], what);
    return EXIT_BAD_USAGE;
}

/* Spot check of the reference: fp64 dot products at sampled entries (corners included). */
static void spot_check_reference(void) {
    const int samples = 256;
    uint64_t x = P.seed ^ 0x5DEECE66Dull;
    int worst_i = -1, worst_j = -1;
    double worst = 0, worst_out = 0, worst_exact = 0;
    for (int t = 0; t < samples; t++) {
        int i, j;
        if (t == 0) i = 0, j = 0;
        else if (t == 1) i = P.M - 1, j = P.N - 1;
        else {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            i = (int)((x >> 33) % (uint64_t)P.M);
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            j = (int)((x >> 33) % (uint64_t)P.N);
        }
        double exact = 0;
        const uint16_t *a = P.hA + (size_t)i * P.K, *b = P.hB + (size_t)j * P.K;
        for (int k = 0; k < P.K; k++) exact += (double)f16_to_f32(a[k]) * f16_to_f32(b[k]);
        double out = f16_to_f32(P.href[(size_t)i * P.N + j]);
        /* fp16 rounding of the output (2^-11 relative) plus fp32 accumulation error */
        double tol = 0x1p-10 * fabs(exact) + 1e-4 * sqrt((double)P.K);
        double excess = fabs(out - exact) / tol;
        if (!(excess <= worst)) worst = excess, worst_i = i, worst_j = j, worst_out = out,
                                worst_exact = exact;
    }
    if (!(worst <= 1.0)) {
        fprintf(stderr,
                "cuBLAS reference failed its fp64 spot check at C[%d][%d]: got %.6g, fp64 %.6g "
                "(M=%d N=%d K=%d): no row can be checked\n",
                worst_i, worst_j, worst_out, worst_exact, P.M, P.N, P.K);
        exit(EXIT_KERNEL_FAILED);
    }
}

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    long m = s->d[0], n = s->d[1], k = s->d[2];
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX ||
        (double)m * (double)k > (double)INT_MAX * 4 || (double)n * (double)k > (double)INT_MAX * 4)
        return setup_error(err, len, s, "too large for this chapter's int indexing and GPU memory");
    /* A, B, its K x N copy, C and the reference, plus the cuBLAS workspace */
    double need = 2.0 * ((double)m * k + 2.0 * (double)n * k + 2.0 * (double)m * n) +
                  (double)WORKSPACE_BYTES;
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len, "%ldx%ldx%ld needs %s of GPU memory; %s is free", m, n, k, want, have);
        return EXIT_BAD_USAGE;
    }
    P.M = (int)m, P.N = (int)n, P.K = (int)k;
    P.seed = seed;
    size_t a_n = (size_t)m * k, b_n = (size_t)n * k, c_n = (size_t)m * n;
    P.A = gpu_alloc(a_n * 2);
    P.B = gpu_alloc(b_n * 2);
    P.Bkn = gpu_alloc(b_n * 2);
    P.C = gpu_alloc(c_n * 2);
    P.ref = gpu_alloc(c_n * 2);
    P.hA = malloc(a_n * 2);
    P.hB = malloc(b_n * 2);
    P.hC = malloc(c_n * 2);
    P.href = malloc(c_n * 2);
    if (!P.hA || !P.hB || !P.hC || !P.href)
        return setup_error(err, len, s, "not enough host memory for the reference copies");
    P.bkn_ready = false;
    if (!g_handle) {
        CUBLAS_CHECK(cublasCreate(&g_handle));
        g_workspace = gpu_alloc(WORKSPACE_BYTES);
        CUBLAS_CHECK(cublasSetWorkspace(g_handle, g_workspace, WORKSPACE_BYTES));
    }
    /* A and B get different seeds, so a kernel that reads one operand twice fails */
    fill_uniform_f16(P.A, (long)a_n, seed, -1, 1, 0);
    fill_uniform_f16(P.B, (long)b_n, seed + 1, -1, 1, 0);
    poison(P.ref, c_n * 2, 0);
    cublas_hgemm(P.A, P.B, P.ref, P.M, P.N, P.K, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(P.hA, P.A, a_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.hB, P.B, b_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.href, P.ref, c_n * 2, cudaMemcpyDeviceToHost));
    spot_check_reference();
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.A));
    CUDA_CHECK(cudaFree(P.B));
    CUDA_CHECK(cudaFree(P.Bkn));
    CUDA_CHECK(cudaFree(P.C));
    CUDA_CHECK(cudaFree(P.ref));
    free(P.hA), free(P.hB), free(P.hC), free(P.href);
    memset(&P, 0, sizeof P);
    /* The handle lives one shape, like the buffers: compute-sanitizer's leak check sees
     * everything freed at exit. */
    CUBLAS_CHECK(cublasDestroy(g_handle));
    CUDA_CHECK(cudaFree(g_workspace));
    g_handle = NULL;
    g_workspace = NULL;
}

/* Shared memory per block a stage asks for, or 0 when it fits everywhere. */
static int smem_need(const row_entry *r) {
    if (r->launch == (any_fn)hgemm_cp_async_2stage) return HGEMM_SMEM_CP_ASYNC(2);
    if (r->launch == (any_fn)hgemm_cp_async_3stage) return HGEMM_SMEM_CP_ASYNC(3);
    if (r->launch == (any_fn)hgemm_cp_async_4stage) return HGEMM_SMEM_CP_ASYNC(4);
    if (r->launch == (any_fn)hgemm_swizzle) return HGEMM_SMEM_SWIZZLE;
    if (r->launch == (any_fn)hgemm_warp_tile || r->launch == (any_fn)hgemm_raster ||
        r->launch == (any_fn)hgemm_f16_accum)
        return HGEMM_SMEM_WARP_TILE;
    if (r->launch == (any_fn)hgemm_final) return HGEMM_SMEM_FINAL_MIN;
    if (r->launch == (any_fn)hgemm_nn) return HGEMM_SMEM_NN;
    return 0;
}

static bool supports(const row_entry *r, const shape *s, char *why, size_t len) {
    long m = s->d[0], n = s->d[1], k = s->d[2];
    if (r->role == ROLE_LIBRARY) return true;
    if (k % 8) {
        snprintf(why, len, "K %% 8 != 0: rows of A and B must be whole 16-byte chunks");
        return false;
    }
    if (r->launch == (any_fn)hgemm_wmma_global && (m % 16 || n % 16 || k % 16)) {
        snprintf(why, len, "M, N and K must be multiples of 16 (whole WMMA tiles, no edges)");
        return false;
    }
    if (r->variant == V_NN && n % 8) {
        snprintf(why, len, "N %% 8 != 0: the K x N copy of B is read in 16-byte chunks along n");
        return false;
    }
    int need = smem_need(r);
    if (need > 0) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if (need > optin) {
            snprintf(why, len, "needs %d KiB of shared memory per block; this GPU allows %d KiB",
                     need / 1024, optin / 1024);
            return false;
        }
    }
    return true;
}

static void prepare(const row_entry *r, const shape *s) {
    (void)s;
    if (r->variant == V_NN && !P.bkn_ready) {
        /* B row-major K x N: the transpose of the N x K storage, made once per shape */
        uint16_t *t = malloc((size_t)P.K * P.N * 2);
        if (!t) {
            fprintf(stderr, "out of host memory\n");
            exit(EXIT_KERNEL_FAILED);
        }
        for (int j = 0; j < P.N; j++)
            for (int k = 0; k < P.K; k++) t[(size_t)k * P.N + j] = P.hB[(size_t)j * P.K + k];
        CUDA_CHECK(cudaMemcpy(P.Bkn, t, (size_t)P.K * P.N * 2, cudaMemcpyHostToDevice));
        free(t);
        P.bkn_ready = true;
    }
    poison(P.C, (size_t)P.M * P.N * 2, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    hgemm_fn fn = (hgemm_fn)(exercise ? r->ex_launch : r->launch);
    const f16_t *B = r->variant == V_NN ? P.Bkn : P.B;
    return fn(P.A, B, P.C, P.M, P.N, P.K, st);
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    size_t c_n = (size_t)P.M * P.N;
    CUDA_CHECK(cudaMemcpy(P.hC, P.C, c_n * 2, cudaMemcpyDeviceToHost));
    bool f16_accum = r->variant == V_F16_ACCUM;
    double root_k = sqrt((double)P.K);
    double atol = f16_accum ? 0x1p-6 * root_k : 0x1p-10 * root_k;
    double rtol = f16_accum ? 0x1p-5 : 0x1p-9;
    metrics_init(m);
    for (size_t i = 0; i < c_n; i++)
        metrics_add(m, (long)i, f16_to_f32(P.hC[i]), f16_to_f32(P.href[i]), atol, rtol);
    metrics_finish(m);
    *bound = f16_accum ? 1e-2 : 1e-3;
    return true;
}

static double work(const row_entry *r, const shape *s) {
    (void)r;
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2];
}

static const char *dtype(const row_entry *r) {
    return r->variant == V_F16_ACCUM ? "f16 acc" : r->variant == V_NN ? "f32 acc NN" : "f32 acc";
}

static const shape TEST_SHAPES[] = {{{16, 16, 16}},       {{33, 40, 64}},
                                    {{1000, 1000, 1000}}, {{4096, 4096, 4104}},
                                    {{8192, 256, 8192}}};
static const shape BENCH_SHAPES[] = {{{256, 256, 256}},    {{512, 512, 512}},
                                     {{1024, 1024, 1024}}, {{2048, 2048, 2048}},
                                     {{4096, 4096, 4096}}, {{8192, 8192, 8192}}};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "05_hgemm_mma",
        .summary =
            "Chapter 05: C = A * B, fp16 in and out with fp32 accumulation, A row-major, B\n"
            "column-major (TN), on the tensor cores with WMMA and mma.sync; every stage checked\n"
            "against cuBLAS (itself spot-checked in fp64) and timed against it.\n"
            "HGEMM_CONFIG=0..7 picks the final stage's tile configuration (README, Tuning).",
        .ndims = 3,
        .dim_names = {"m", "n", "k"},
        .dim_help = {"rows of A and C (default 4096)", "columns of B and C (default 4096)",
                     "the shared dimension, a multiple of 8 (default 4096)"},
        .default_shape = {{4096, 4096, 4096}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 3,
        .bench_shapes = BENCH_SHAPES,
        .nbench_shapes = sizeof BENCH_SHAPES / sizeof BENCH_SHAPES[0],
        .unit = UNIT_TFLOPS,
        .ceiling_col = NULL,
        .library_col = "x cuBLAS",
        .flush_l2 = true,
        .rows = ROWS,
        .nrows = sizeof ROWS / sizeof ROWS[0],
        .setup = setup,
        .teardown = teardown,
        .supports = supports,
        .prepare = prepare,
        .launch = launch,
        .check = check,
        .work = work,
        .dtype = dtype,
    };
    return run_chapter(&ch, argc, argv);
}
