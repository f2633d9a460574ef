/* Chapter 05 driver: C = A * B in fp16 on the tensor cores with mma.sync, against cuBLAS.
 *
 * The problem: A is M x K row-major, B is K x N column-major (stored as N rows of K: the "TN"
 * layout, both operands contiguous along k), C is M x N row-major; inputs fp16, products
 * accumulated in fp32, C rounded to fp16. 2*M*N*K flops on 2*(M*K + N*K + M*N) bytes: at
 * 4096^3 that is 1365 flops per byte, far above the ~150-200 flops per byte where the
 * tensor cores outrun DRAM, so the floor is the flops over the mma.sync ceiling
 * (docs/anchors.md, "Ceilings": 644 TFLOPS for m16n8k16 f16 -> f32 on our H200).
 *
 * The check: A and B are fresh uniform random values in [-1, 1) (seed printed). setup()
 * computes the exact product (common/gemm_ref.h, gemm_exact: every entry in fp64 on the GPU,
 * itself held to the CPU's fp64 product at 256 entries), and every row's output (poisoned with
 * NaN first) is compared with it entry by entry (README, "Correctness"; docs/design.md,
 * "Checking"), with spread = sqrt(sum of the squares of the entry's K products):
 *   fp32 accumulation: |out - exact| <= 2^-11 |exact| + 8 * 2^-23 * sqrt(K) * spread
 *     (one rounding to fp16; fp32 sums on the tensor cores, which may truncate: 2^-23);
 *   fp16 accumulation: |out - exact| <= 2^-11 |exact| + 8 * 2^-11 * sqrt(K / 16) * spread
 *     (each mma.sync rounds its 16 products and the running sum to fp16: K / 16 roundings).
 * The cublas row is held to the fp32 bound; where it is less exact, it says `inexact` (a fact
 * about the library, not a failure). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"
#include "hgemm.h"
#include "runner.h"

typedef enum { V_TN, V_NN, V_F16_ACCUM } hgemm_variant;

typedef int (*hgemm_fn)(const f16_t *, const f16_t *, f16_t *, int, int, int, cudaStream_t);

#define NO_SPILLS "LDL STL"
#define LIBRARY "cublas"

/* What a single stage needs beyond K % 8 == 0 (each row's own supports()). */
static bool whole_wmma_tiles(const shape *s, char *why, size_t len) {
    if (s->d[0] % 16 || s->d[1] % 16 || s->d[2] % 16) {
        snprintf(why, len, "M, N and K must be multiples of 16 (whole WMMA tiles, no edges)");
        return false;
    }
    return true;
}

static bool nn_rows(const shape *s, char *why, size_t len) {
    if (s->d[1] % 8) {
        snprintf(why, len, "N %% 8 != 0: the K x N copy of B is read in 16-byte chunks along n");
        return false;
    }
    return true;
}

/* A stage row: name, description, variant (which data it reads and how it accumulates),
 * launcher, kernel symbol, must / must-not opcodes, its own shape predicate (NULL: any shape
 * with K % 8 == 0), and the dynamic shared memory it asks for (hgemm.h). */
#define STAGE_ROW(nm, desc, var, fn, sym, must, must_not, sup, smem)                              \
    {{nm, desc, ARCH_SM80, sym, must, must_not}, ROLE_STAGE, var, (any_fn)fn, (any_fn)ex_##fn,    \
     NULL, LIBRARY, sup, smem}

static const row_entry ROWS[] = {
    {{LIBRARY, "cublasGemmEx, fp16 in and out, CUBLAS_COMPUTE_32F (wgmma on Hopper)", ARCH_ANY,
      NULL, NULL, NULL},
     ROLE_LIBRARY, V_TN, (any_fn)gemm_ref_f16_tn, NULL, NULL, NULL},
    STAGE_ROW("wmma_global", "WMMA 16x16x16, one warp per 16x16 tile, operands from global",
              V_TN, hgemm_wmma_global, "wmma_global_kernel", "HMMA", NO_SPILLS,
              whole_wmma_tiles, 0),
    STAGE_ROW("wmma_smem", "WMMA, 128x128x32 block tiles in shared memory, 64x32 per warp",
              V_TN, hgemm_wmma_smem, "wmma_smem_kernel", "HMMA", NO_SPILLS, NULL, 0),
    STAGE_ROW("mma_ldmatrix", "mma.sync m16n8k16 (inline PTX), fragments by ldmatrix.x4",
              V_TN, hgemm_mma_ldmatrix, "mma_ldmatrix_kernel", "HMMA.16816.F32 LDSM.16.M88.4",
              NO_SPILLS, NULL, 0),
    STAGE_ROW("cp_async2", "cp.async global->shared, 2-stage pipeline (double buffer)", V_TN,
              hgemm_cp_async_2stage, "cp_async_kernelILi2E", "HMMA LDSM LDGSTS", NO_SPILLS,
              NULL, HGEMM_SMEM_CP_ASYNC(2)),
    STAGE_ROW("cp_async3", "cp.async, 3-stage pipeline", V_TN, hgemm_cp_async_3stage,
              "cp_async_kernelILi3E", "HMMA LDSM LDGSTS", NO_SPILLS, NULL, HGEMM_SMEM_CP_ASYNC(3)),
    STAGE_ROW("cp_async4", "cp.async, 4-stage pipeline", V_TN, hgemm_cp_async_4stage,
              "cp_async_kernelILi4E", "HMMA LDSM LDGSTS", NO_SPILLS, NULL, HGEMM_SMEM_CP_ASYNC(4)),
    STAGE_ROW("swizzle", "XOR-swizzled shared memory, BK=64: conflict-free ldmatrix and cp.async",
              V_TN, hgemm_swizzle, "swizzle_kernel", "HMMA LDSM LDGSTS", NO_SPILLS,
              NULL, HGEMM_SMEM_SWIZZLE),
    STAGE_ROW("warp_tile", "128x256 block, 64x64 warp tiles, fragments double-buffered", V_TN,
              hgemm_warp_tile, "warp_tile_kernel", "HMMA LDSM LDGSTS", NO_SPILLS,
              NULL, HGEMM_SMEM_WARP_TILE),
    STAGE_ROW("raster", "grouped block order (rasterization) for L2 reuse", V_TN, hgemm_raster,
              "raster_kernel", "HMMA LDSM LDGSTS", NO_SPILLS, NULL, HGEMM_SMEM_WARP_TILE),
    STAGE_ROW("final", "tuned: config per size class (HGEMM_CONFIG), smem epilogue, any M, N",
              V_TN, hgemm_final, "final_kernel", "HMMA.16816.F32 LDSM LDGSTS LDS.128 STG.E.128",
              NO_SPILLS, NULL, HGEMM_SMEM_FINAL_MIN),
    STAGE_ROW("f16_accum", "the final kernel with fp16 accumulators (mma f16.f16.f16.f16)",
              V_F16_ACCUM, hgemm_f16_accum, "f16_accum_kernel", "HMMA.16816.F16 LDSM LDGSTS",
              NO_SPILLS, NULL, HGEMM_SMEM_WARP_TILE),
    STAGE_ROW("nn", "NN layout: B row-major K x N, fragments by ldmatrix.x4.trans", V_NN,
              hgemm_nn, "nn_kernel", "HMMA.16816.F32 LDSM.16.MT88.4 LDGSTS", NO_SPILLS,
              nn_rows, HGEMM_SMEM_NN),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    int M, N, K;
    f16_t *A, *B, *Bkn, *C;       /* device; Bkn: B row-major K x N, for the NN stage */
    uint16_t *hA, *hB, *hC;       /* host copies */
    bool bkn_ready;
    gemm_exact exact;             /* the exact product */
} P;

static gemm_bound bound_of(bool f16_accum) {
    return f16_accum ? gemm_bound_of(GEMM_F16, 0x1p-11, P.K / 16.0 + 1)
                     : gemm_bound_of(GEMM_F16, 0x1p-23, P.K);
}

static int setup_error(char *err, size_t len, const shape *s, const char *what) {
    snprintf(err, len, "%ldx%ldx%ld: %s", s->d[0], s->d[1], s->d[2], what);
    return EXIT_BAD_USAGE;
}

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    long m = s->d[0], n = s->d[1], k = s->d[2];
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX ||
        (double)m * (double)k > (double)INT_MAX * 4 || (double)n * (double)k > (double)INT_MAX * 4)
        return setup_error(err, len, s, "too large for this chapter's int indexing and GPU memory");
    /* A, B, its K x N copy and C, the exact product while it is computed, the cuBLAS workspace */
    double need = 2.0 * ((double)m * k + 2.0 * (double)n * k + (double)m * n) +
                  gemm_exact_device_bytes(m, n) +
                  (env->library_off ? 0.0 : (double)GEMM_REF_WORKSPACE_BYTES);
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len, "%ldx%ldx%ld needs %s of GPU memory; %s is free", m, n, k, want, have);
        return EXIT_BAD_USAGE;
    }
    P.M = (int)m, P.N = (int)n, P.K = (int)k;
    size_t a_n = (size_t)m * k, b_n = (size_t)n * k, c_n = (size_t)m * n;
    P.A = gpu_alloc(a_n * 2);
    P.B = gpu_alloc(b_n * 2);
    P.Bkn = gpu_alloc(b_n * 2);
    P.C = gpu_alloc(c_n * 2);
    P.hA = malloc(a_n * 2);
    P.hB = malloc(b_n * 2);
    P.hC = malloc(c_n * 2);
    if (!P.hA || !P.hB || !P.hC)
        return setup_error(err, len, s, "not enough host memory for the reference copies");
    P.bkn_ready = false;
    /* A and B get different seeds, so a kernel that reads one operand twice fails */
    fill_uniform_f16(P.A, (long)a_n, seed, -1, 1, 0);
    fill_uniform_f16(P.B, (long)b_n, seed + 1, -1, 1, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(P.hA, P.A, a_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.hB, P.B, b_n * 2, cudaMemcpyDeviceToHost));
    const gemm_problem on_host = {.layout = GEMM_TN, .type = GEMM_F16, .M = m, .N = n, .K = k,
                                  .a = P.hA, .b = P.hB, .alpha = 1.0};
    gemm_problem on_device = on_host;
    on_device.a = P.A, on_device.b = P.B;
    gemm_exact_compute(&on_device, &on_host, seed, &P.exact);
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.A));
    CUDA_CHECK(cudaFree(P.B));
    CUDA_CHECK(cudaFree(P.Bkn));
    CUDA_CHECK(cudaFree(P.C));
    free(P.hA), free(P.hB), free(P.hC);
    gemm_exact_free(&P.exact);
    memset(&P, 0, sizeof P);
}

/* What every stage needs; the cublas row takes any shape. What a single stage needs more is in
 * its row (supports, smem_bytes). */
static bool supports(const row_entry *r, const shape *s, char *why, size_t len) {
    if (r->role == ROLE_LIBRARY) return true;
    if (s->d[2] % 8) {
        snprintf(why, len, "K %% 8 != 0: rows of A and B must be whole 16-byte chunks");
        return false;
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
    CUDA_CHECK(cudaMemcpy(P.hC, P.C, (size_t)P.M * P.N * 2, cudaMemcpyDeviceToHost));
    const gemm_bound b = bound_of(r->variant == V_F16_ACCUM);
    *bound = gemm_check(&P.exact, P.hC, GEMM_F16, &b, m);
    return true;
}

static double work(const row_entry *r, const shape *s) {
    (void)r;
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2];
}

static const char *dtype(const row_entry *r) {
    return r->variant == V_F16_ACCUM ? "f16 acc" : r->variant == V_NN ? "f32 acc NN" : "f32 acc";
}

/* The first three are small enough for --quick (the sanitizer). The last two are shapes where
 * cuBLAS's default algorithm was measured less exact than one rounding of the fp32 sum (H100,
 * cuBLAS 13.1): its row says `inexact` there, every other row must pass. */
static const shape TEST_SHAPES[] = {{{16, 16, 16}},       {{33, 40, 64}},
                                    {{1000, 1000, 1000}}, {{4096, 4096, 4104}},
                                    {{8192, 256, 8192}},  {{634, 1031, 1800}},
                                    {{65, 1167, 4280}}};
static const shape BENCH_SHAPES[] = {{{256, 256, 256}},    {{512, 512, 512}},
                                     {{1024, 1024, 1024}}, {{2048, 2048, 2048}},
                                     {{4096, 4096, 4096}}, {{8192, 8192, 8192}}};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "05_hgemm_mma",
        .summary =
            "Chapter 05: C = A * B, fp16 in and out with fp32 accumulation, A row-major, B\n"
            "column-major (TN), on the tensor cores with WMMA and mma.sync; every stage checked\n"
            "against the exact product (fp64) and timed against cuBLAS.\n"
            "HGEMM_CONFIG=0..7 picks the final stage's tile configuration (README, Tuning notes).",
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
        .inexact_cause = "cuBLAS's default algorithm at such shapes splits K and keeps each "
                         "piece's partial sums in the output type, so an entry is rounded to "
                         "fp16 more than once (README, \"Correctness\")",
    };
    return run_chapter(&ch, argc, argv);
}
