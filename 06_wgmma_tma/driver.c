/* Chapter 06 driver: C = A * B^T in bf16 on Hopper's tensor cores with wgmma and TMA, against
 * cuBLAS.
 *
 * The problem: A is M x K row-major, B is N x K row-major (both K-major: the layout wgmma reads
 * from shared memory without a transpose; the TN problem of chapter 05), C is M x N row-major;
 * inputs bf16, products accumulated in fp32, C rounded to bf16. 2*M*N*K flops on
 * 2*(M*K + N*K + M*N) bytes: 1365 flops per byte at 4096^3, far above the tensor cores' balance
 * point, so the floor is the flops over the dense wgmma rate.
 *
 * The check: A and B are fresh uniform random values in [-1, 1) (seed printed). setup()
 * computes the exact product (common/gemm_ref.h, gemm_exact: every entry in fp64 on the GPU,
 * itself held to the CPU's fp64 product at 256 entries), and every row's output, poisoned with
 * NaN first, is compared with it entry by entry. A row accumulates in fp32 and rounds once to
 * bf16, so each entry may be off by one rounding and the accumulation's walk (README,
 * "Correctness"; docs/design.md, "Checking"):
 *   |out - exact| <= 2^-8 |exact| + 8 * 2^-23 * sqrt(K) * spread,
 * spread = sqrt(sum of the squares of the entry's K products); 2^-23 rather than fp32's 2^-24
 * because the tensor cores may truncate rather than round. The cublas row is judged by the same
 * bound: where cuBLAS's default algorithm is less exact than that (it rounds partial sums to
 * bf16 at some shapes), the row says `inexact` with its measured error, which is a fact about the
 * library, not a failure of the run. The fp16 rows (stage 8's fp16 launcher, chapter 05's final
 * kernel) solve the same problem with A and B converted to fp16, against its own exact product,
 * with fp16's rounding (2^-11) in place of bf16's. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm06.h"
#include "gemm_ref.h"
#include "runner.h"

/* V_F16: the same problem in fp16 (stage 8's fp16 launcher, chapter 05's best kernel, and
 * cuBLAS in fp16), on A and B converted from the bf16 inputs. */
typedef enum { V_BF16, V_F16 } gemm06_variant;

/* Both element types are 2 bytes; the launchers differ only in the pointer types. */
typedef int (*gemm06_fn)(const void *, const void *, void *, int, int, int, cudaStream_t);

/* Chapter 05's final mma.sync kernel (05_hgemm_mma/kernels/08_final.cu, linked in by the
 * Makefile): the fp16 table compares it with stage 8 on the same problem. */
int hgemm_final(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K, cudaStream_t st);

#define NO_SPILLS "LDL STL"
#define LIBRARY "cublas"
#define LIBRARY_F16 "cublas_f16"

/* Each stage needs K % 8 == 0, for a reason of its own. */
static bool whole_chunks(const shape *s, char *why, size_t len) {
    if (s->d[2] % 8) {
        snprintf(why, len, "K %% 8 != 0: rows of A and B are copied in whole 16-byte chunks");
        return false;
    }
    return true;
}

static bool tma_strides(const shape *s, char *why, size_t len) {
    if (s->d[2] % 8) {
        snprintf(why, len, "K %% 8 != 0: TMA needs the row stride (K * 2 bytes) in 16s");
        return false;
    }
    return true;
}

static bool tma_store_strides(const shape *s, char *why, size_t len) {
    if (!tma_strides(s, why, len)) return false;
    if (s->d[1] % 8) {
        snprintf(why, len, "N %% 8 != 0: the TMA store needs C's row stride (N * 2 bytes) in 16s");
        return false;
    }
    return true;
}

/* A stage row: name, description, launcher, kernel symbol, must-have opcodes, its shape
 * predicate and the dynamic shared memory it asks for (gemm06.h). Every stage is sm_90a only,
 * is checked for spills, and is compared with cuBLAS. */
#define STAGE_ROW(nm, desc, fn, sym, must, sup, smem)                                              \
    {{nm, desc, ARCH_SM90A, sym, must, NO_SPILLS}, ROLE_STAGE, V_BF16, (any_fn)fn,                 \
     (any_fn)ex_##fn, NULL, LIBRARY, sup, smem}
#define STAGE_ROW_F16(nm, desc, fn, sym, must, sup, smem)                                          \
    {{nm, desc, ARCH_SM90A, sym, must, NO_SPILLS}, ROLE_STAGE, V_F16, (any_fn)fn,                  \
     (any_fn)ex_##fn, NULL, LIBRARY_F16, sup, smem}

static const row_entry ROWS[] = {
    {{LIBRARY, "cublasGemmEx, bf16 in and out, CUBLAS_COMPUTE_32F (wgmma on Hopper)", ARCH_ANY,
      NULL, NULL, NULL},
     ROLE_LIBRARY, V_BF16, (any_fn)gemm_ref_bf16_tn, NULL, NULL, NULL},
    {{LIBRARY_F16, "cublasGemmEx, fp16 in and out, CUBLAS_COMPUTE_32F", ARCH_ANY, NULL, NULL,
      NULL},
     ROLE_LIBRARY, V_F16, (any_fn)gemm_ref_f16_tn, NULL, NULL, NULL},
    STAGE_ROW("first_wgmma",
              "one warpgroup, 64x128 tile, threads copy into the 128B swizzle, synchronous wgmma",
              gemm06_first_wgmma, "first_wgmma_kernel", "HGMMA", whole_chunks,
              GEMM06_SMEM_FIRST_WGMMA),
    STAGE_ROW("tma", "TMA tiles on an mbarrier, 128x128 tile, two warpgroups, single-buffered",
              gemm06_tma, "tma_kernel", "HGMMA UTMALDG SYNCS", tma_strides, GEMM06_SMEM_TMA),
    STAGE_ROW("pipeline", "a ring of 3 K tiles, full/empty mbarriers, wgmmas in flight, 2 blocks/SM",
              gemm06_pipeline, "pipeline_kernel", "HGMMA UTMALDG SYNCS", tma_strides,
              GEMM06_SMEM_PIPELINE),
    STAGE_ROW("warp_specialized",
              "producer warpgroup + 2 consumers, setmaxnreg, 128x256 tile, 4 slots",
              gemm06_warp_specialized, "warp_specialized_kernel", "HGMMA UTMALDG SYNCS USETMAXREG",
              tma_strides, GEMM06_SMEM_WARP_SPECIALIZED),
    STAGE_ROW("persistent", "one block per SM looping over tiles in grouped order, ring kept across tiles",
              gemm06_persistent, "persistent_kernel", "HGMMA UTMALDG SYNCS USETMAXREG", tma_strides,
              GEMM06_SMEM_PERSISTENT),
    STAGE_ROW("clusters", "persistent, clusters of 2 along M sharing B by TMA multicast",
              gemm06_clusters, "clusters_kernel", "HGMMA UTMALDG SYNCS USETMAXREG UCGABAR_ARV",
              tma_strides, GEMM06_SMEM_CLUSTERS),
    STAGE_ROW("epilogue", "stage 6 + stmatrix to smem and TMA stores overlapped with the next tile",
              gemm06_epilogue, "epilogue_kernel",
              "HGMMA UTMALDG UTMASTG STSM SYNCS USETMAXREG UCGABAR_ARV", tma_store_strides,
              GEMM06_SMEM_EPILOGUE),
    STAGE_ROW("final", "stage 7 with a tile width per size class (128x256/128/64), any M and N",
              gemm06_final, "final_kernel", "HGMMA UTMALDG UTMASTG STSM SYNCS USETMAXREG UCGABAR_ARV",
              tma_strides, GEMM06_SMEM_FINAL),
    STAGE_ROW_F16("final_f16", "the final kernel on the fp16 problem", gemm06_final_f16,
                  "final_kernel", "HGMMA UTMALDG UTMASTG STSM SYNCS USETMAXREG UCGABAR_ARV", tma_strides,
                  GEMM06_SMEM_FINAL),
    {{"05_final", "chapter 05's best mma.sync kernel (its final stage) on the fp16 problem",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_STAGE, V_F16, (any_fn)hgemm_final, NULL, NULL, LIBRARY_F16, tma_strides, 0},
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    int M, N, K;
    bf16_t *A, *B, *C;            /* device */
    uint16_t *hA, *hB, *hC;       /* host copies */
    gemm_exact exact;             /* the exact product of the bf16 problem */
    uint64_t seed;
    /* The fp16 problem, made when its first row runs: A and B converted from the bf16 inputs
     * (exactly, but for values below fp16's normal range), and its own exact product. */
    bool f16_ready;
    f16_t *A16, *B16;             /* device */
    uint16_t *hA16, *hB16;
    gemm_exact exact16;
} P;

/* What a row may differ from the exact product: one rounding to the output type, and fp32
 * accumulation on the tensor cores (unit 2^-23: they may truncate), K steps at most. */
static gemm_bound bound_of(gemm_dtype out) { return gemm_bound_of(out, 0x1p-23, P.K); }

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
    /* A, B, C, their fp16 copies, the exact product while it is computed, the cuBLAS workspace */
    double need = 2.0 * (2.0 * (double)m * k + 2.0 * (double)n * k + (double)m * n) +
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
    P.seed = seed;
    size_t a_n = (size_t)m * k, b_n = (size_t)n * k, c_n = (size_t)m * n;
    P.A = gpu_alloc(a_n * 2);
    P.B = gpu_alloc(b_n * 2);
    P.C = gpu_alloc(c_n * 2);
    P.hA = malloc(a_n * 2);
    P.hB = malloc(b_n * 2);
    P.hC = malloc(c_n * 2);
    if (!P.hA || !P.hB || !P.hC)
        return setup_error(err, len, s, "not enough host memory for the reference copies");
    /* A and B get different seeds, so a kernel that reads one operand twice fails */
    fill_uniform_bf16(P.A, (long)a_n, seed, -1, 1, 0);
    fill_uniform_bf16(P.B, (long)b_n, seed + 1, -1, 1, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(P.hA, P.A, a_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.hB, P.B, b_n * 2, cudaMemcpyDeviceToHost));
    const gemm_problem on_host = {.layout = GEMM_TN, .type = GEMM_BF16, .M = m, .N = n, .K = k,
                                  .a = P.hA, .b = P.hB, .alpha = 1.0};
    gemm_problem on_device = on_host;
    on_device.a = P.A, on_device.b = P.B;
    gemm_exact_compute(&on_device, &on_host, seed, &P.exact);
    return 0;
}

static void teardown(void) {
    if (P.f16_ready) {
        CUDA_CHECK(cudaFree(P.A16));
        CUDA_CHECK(cudaFree(P.B16));
        free(P.hA16), free(P.hB16);
        gemm_exact_free(&P.exact16);
    }
    CUDA_CHECK(cudaFree(P.A));
    CUDA_CHECK(cudaFree(P.B));
    CUDA_CHECK(cudaFree(P.C));
    free(P.hA), free(P.hB), free(P.hC);
    gemm_exact_free(&P.exact);
    memset(&P, 0, sizeof P);
}

static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes for the fp16 problem)\n", bytes);
        exit(EXIT_KERNEL_FAILED);
    }
    return p;
}

/* The fp16 problem: inputs converted on the host, and its own exact product. */
static void make_f16_problem(void) {
    const size_t a_n = (size_t)P.M * P.K, b_n = (size_t)P.N * P.K;
    P.hA16 = host_alloc(a_n * 2);
    P.hB16 = host_alloc(b_n * 2);
    for (size_t i = 0; i < a_n; i++) P.hA16[i] = f32_to_f16(bf16_to_f32(P.hA[i]));
    for (size_t i = 0; i < b_n; i++) P.hB16[i] = f32_to_f16(bf16_to_f32(P.hB[i]));
    P.A16 = gpu_alloc(a_n * 2);
    P.B16 = gpu_alloc(b_n * 2);
    CUDA_CHECK(cudaMemcpy(P.A16, P.hA16, a_n * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(P.B16, P.hB16, b_n * 2, cudaMemcpyHostToDevice));
    const gemm_problem on_host = {.layout = GEMM_TN, .type = GEMM_F16, .M = P.M, .N = P.N,
                                  .K = P.K, .a = P.hA16, .b = P.hB16, .alpha = 1.0};
    gemm_problem on_device = on_host;
    on_device.a = P.A16, on_device.b = P.B16;
    gemm_exact_compute(&on_device, &on_host, P.seed, &P.exact16);
    P.f16_ready = true;
}

static void prepare(const row_entry *r, const shape *s) {
    (void)s;
    if (r->variant == V_F16 && !P.f16_ready) make_f16_problem();
    poison(P.C, (size_t)P.M * P.N * 2, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    gemm06_fn fn = (gemm06_fn)(exercise ? r->ex_launch : r->launch);
    if (r->variant == V_F16) return fn(P.A16, P.B16, P.C, P.M, P.N, P.K, st);
    return fn(P.A, P.B, P.C, P.M, P.N, P.K, st);
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    const bool f16 = r->variant == V_F16;
    CUDA_CHECK(cudaMemcpy(P.hC, P.C, (size_t)P.M * P.N * 2, cudaMemcpyDeviceToHost));
    const gemm_bound b = bound_of(f16 ? GEMM_F16 : GEMM_BF16);
    *bound = gemm_check(f16 ? &P.exact16 : &P.exact, P.hC, f16 ? GEMM_F16 : GEMM_BF16, &b, m);
    return true;
}

static double work(const row_entry *r, const shape *s) {
    (void)r;
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2];
}

static const char *dtype(const row_entry *r) {
    return r->variant == V_F16 ? "f16" : "bf16";
}

/* The first five are small enough for --quick (the sanitizer): one
 * whole tile, two stage-2 blocks side by side, M = 1, N = 1, and odd M and N with a K tail of 8
 * (72 = 64 + 8); stage 8 takes its 64 x 128 tile at all of them. Then the larger odd
 * shapes (4097 x 511: 64 x 128 again; 8192 x 256: 128 x 128), and three that give stage 8 its
 * wider tiles with an odd number of tile rows (the last pair's second block is past M), a last
 * column tile 8 wide and a K tail: 2049 x 2056 x 136 (128 x 128) and 1025 x 3080 x 136
 * (128 x 256); and N % 8 != 0 (2048 x 2047, 128 x 256: the epilogue from registers). Last,
 * three shapes where cuBLAS's default algorithm was measured less exact than one rounding of
 * the fp32 sum (H100, cuBLAS 13.1): its row reports `inexact` there, every other row must
 * pass. */
static const shape TEST_SHAPES[] = {{{64, 64, 64}},       {{128, 256, 64}},
                                    {{1, 256, 64}},       {{256, 1, 64}},
                                    {{33, 200, 72}},      {{1000, 1000, 1000}},
                                    {{4097, 511, 264}},   {{8192, 256, 8192}},
                                    {{2049, 2056, 136}},  {{1025, 3080, 136}},
                                    {{2048, 2047, 64}},   {{178, 646, 1440}},
                                    {{762, 906, 3552}},   {{560, 3589, 4456}}};
static const shape BENCH_SHAPES[] = {{{512, 512, 512}},    {{1024, 1024, 1024}},
                                     {{2048, 2048, 2048}}, {{4096, 4096, 4096}},
                                     {{8192, 8192, 8192}}, {{4096, 14336, 4096}},
                                     {{4096, 4096, 14336}}};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "06_wgmma_tma",
        .summary =
            "Chapter 06: C = A * B^T, bf16 in and out with fp32 accumulation, A and B both\n"
            "K-major (TN), on Hopper's tensor cores with wgmma and TMA (sm_90a only); every\n"
            "stage checked against the exact product (fp64) and timed against cuBLAS.",
        .ndims = 3,
        .dim_names = {"m", "n", "k"},
        .dim_help = {"rows of A and C (default 4096)", "rows of B, columns of C (default 4096)",
                     "the shared dimension, a multiple of 8 (default 4096)"},
        .default_shape = {{4096, 4096, 4096}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 5,
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
        .supports = NULL,
        .prepare = prepare,
        .launch = launch,
        .check = check,
        .work = work,
        .dtype = dtype,
        .inexact_cause = "cuBLAS's default algorithm at such shapes splits K and keeps each "
                         "piece's partial sums in the output type, so an entry is rounded to "
                         "bf16 or fp16 more than once (README, \"Correctness\")",
    };
    return run_chapter(&ch, argc, argv);
}
