/* Chapter 04 driver: C = alpha * A * B + beta * C in fp32 on the CUDA cores, row-major,
 * A m x k, B k x n, C m x n.
 *
 * The problem: 2 * m * n * k floating-point operations (one FFMA is two) on (mk + kn + 2mn) * 4
 * bytes; at 4096^3 that is 137 GFLOP on 256 MiB, 512 flops per byte, so the floor is the FFMA
 * peak, not memory: the work column is 2mnk and the ratio column divides by cublasSgemm timed in
 * the same run.
 *
 * The check: A, B and the initial C are uniform random in [-1, 1) (three seeds from the printed
 * one). alpha = 1.5 and beta = -0.75, so a kernel that ignores either, or never reads C, fails.
 * setup() computes the exact product (common/gemm_ref.h, gemm_exact: every entry in fp64 on
 * the GPU, itself held to the CPU's fp64 product at 256 entries). Before each checked launch,
 * prepare() restores C from a pristine device copy (C is an input when beta != 0, so it cannot
 * be poisoned with NaN; an element a kernel never writes keeps its initial value, which differs
 * from the exact one, so it fails all the same). Timed launches re-run on whatever C holds.
 * Bound (README, "Correctness"; docs/design.md, "Checking"), with u = 2^-24: each element
 *   |out - exact| <= 2u |exact| + 8 u sqrt(k + 1) spread,
 * spread = sqrt(sum of the squares of the k terms alpha a b and of beta c): two roundings of
 * the result (alpha * sum, then + beta * c) and the walk of fp32 accumulation's rounding errors
 * over k + 1 steps. The cublas row is held to the same bound; where it is less exact, its row
 * says `inexact` (a fact about the library, not a failure). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"
#include "runner.h"
#include "sgemm.h"

typedef int (*sgemm_fn)(int, int, int, float, const float *, const float *, float, float *,
                        cudaStream_t);

#define ALPHA 1.5f
#define BETA (-0.75f)
#define NO_SPILLS "LDL STL"
#define CUBLAS_ROW "cublas"

/* The shapes a stage computes (each row's own supports(); NULL: any): the stages with a 2-D
 * grid stop at m, n = 2^20, and the 128x128x8-tile ones have no edge tiles. */
static bool grid_2d(const shape *s, char *why, size_t len) {
    if (s->d[0] > (1L << 20) || s->d[1] > (1L << 20)) {
        snprintf(why, len, "m and n must be <= 2^20 (2-D grid limit)");
        return false;
    }
    return true;
}

static bool tile_128x128x8(const shape *s, char *why, size_t len) {
    if (!grid_2d(s, why, len)) return false;
    if (s->d[0] % 128 || s->d[1] % 128 || s->d[2] % 8) {
        snprintf(why, len, "needs m %% 128 == 0, n %% 128 == 0, k %% 8 == 0 (no edge tiles)");
        return false;
    }
    return true;
}

/* Every row computes the same product from the same data: `variant` is 0 throughout. */
#define STAGE_ROW(nm, desc, sup, fn, sym, must, must_not)                                          \
    {{nm, desc, ARCH_ANY, sym, must, must_not}, ROLE_STAGE, 0, (any_fn)fn, (any_fn)ex_##fn, NULL,  \
     CUBLAS_ROW, sup}
#define STAGE_ROW_SM80(nm, desc, sup, fn, sym, must, must_not)                                     \
    {{nm, desc, ARCH_SM80, sym, must, must_not}, ROLE_STAGE, 0, (any_fn)fn, (any_fn)ex_##fn,       \
     NULL, CUBLAS_ROW, sup}

static const row_entry ROWS[] = {
    {{CUBLAS_ROW, "cublasSgemm, CUBLAS_DEFAULT_MATH (fp32 FFMA, no TF32): the library", ARCH_ANY,
      NULL, NULL, NULL},
     ROLE_LIBRARY, 0, (any_fn)gemm_ref_f32_nn, NULL, NULL, NULL},
    STAGE_ROW("naive", "one thread per output, warp along rows of C (uncoalesced)", grid_2d,
              sgemm_naive, "sgemm_naive_kernel", "LDG.E FFMA", "LDS"),
    STAGE_ROW("coalesced", "one thread per output, warp along columns (coalesced)", grid_2d,
              sgemm_coalesced, "sgemm_coalesced_kernel", "LDG.E FFMA", "LDS"),
    STAGE_ROW("smem", "32x32 shared-memory tiles, one output per thread", grid_2d, sgemm_smem,
              "sgemm_smem_kernel", "LDS STS BAR.SYNC FFMA", NO_SPILLS),
    STAGE_ROW("tile1d", "64x64 block tile, 8 outputs of a column per thread", grid_2d,
              sgemm_tile1d, "sgemm_tile1d_kernel", "LDS FFMA", NO_SPILLS),
    STAGE_ROW("tile2d", "128x128 block tile, 8x8 register tile per thread", tile_128x128x8,
              sgemm_tile2d, "sgemm_tile2d_kernel", "LDS FFMA", NO_SPILLS),
    STAGE_ROW("vec4", "float4 global loads, A transposed in shared memory, LDS.128",
              tile_128x128x8, sgemm_vec4, "sgemm_vec4_kernel", "LDG.E.128 LDS.128 FFMA",
              NO_SPILLS),
    STAGE_ROW("noconflict", "padded A tile and strided thread tile: no bank conflicts",
              tile_128x128x8, sgemm_noconflict, "sgemm_noconflict_kernel",
              "LDG.E.128 LDS.128 FFMA", NO_SPILLS),
    STAGE_ROW("warptile", "block -> warp (64x32) -> thread (8x8) tiling", tile_128x128x8,
              sgemm_warptile, "sgemm_warptile_kernel", "LDG.E.128 LDS.128 FFMA", NO_SPILLS),
    STAGE_ROW_SM80("cp_async", "two shared-memory stages filled by cp.async", tile_128x128x8,
                   sgemm_cp_async, "sgemm_cp_async_kernel", "LDGSTS LDS.128 FFMA", NO_SPILLS),
    STAGE_ROW_SM80("tuned", "3-stage cp.async, fragment double buffering, tiles by size, any shape",
                   NULL, sgemm_tuned, "sgemm_tuned_kernel", "LDGSTS LDS.128 FFMA",
                   NO_SPILLS),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    int m, n, k;
    float *a, *b, *c, *c0;        /* device: inputs, output, pristine C */
    float *ha, *hb, *hc0, *hout;  /* host copies */
    gemm_exact exact;             /* the exact alpha A B + beta C */
} P;

static gemm_bound bound(void) {
    gemm_bound b = gemm_bound_of(GEMM_F32, 0x1p-24, P.k + 1);
    b.round = 2 * 0x1p-24; /* alpha * sum, then + beta * c: two roundings */
    return b;
}

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    const long m = s->d[0], n = s->d[1], k = s->d[2];
    if (m * k >= (1L << 31) || k * n >= (1L << 31) || m * n >= (1L << 31)) {
        snprintf(err, len,
                 "%ldx%ldx%ld: each matrix must have fewer than 2^31 elements (32-bit indices)",
                 m, n, k);
        return EXIT_BAD_USAGE;
    }
    double need = 4.0 * ((double)m * k + (double)k * n + 2.0 * (double)m * n) +
                  gemm_exact_device_bytes(m, n) +
                  (env->library_off ? 0.0 : (double)GEMM_REF_WORKSPACE_BYTES);
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len, "%ldx%ldx%ld needs %s of GPU memory (A, B, C, initial C, the exact "
                 "product); %s is free", m, n, k, want, have);
        return EXIT_BAD_USAGE;
    }
    P.m = (int)m, P.n = (int)n, P.k = (int)k;
    size_t sa = (size_t)m * k * sizeof(float), sb = (size_t)k * n * sizeof(float),
           sc = (size_t)m * n * sizeof(float);
    P.a = gpu_alloc(sa), P.b = gpu_alloc(sb), P.c = gpu_alloc(sc), P.c0 = gpu_alloc(sc);
    P.ha = malloc(sa), P.hb = malloc(sb), P.hc0 = malloc(sc), P.hout = malloc(sc);
    if (!P.ha || !P.hb || !P.hc0 || !P.hout) {
        snprintf(err, len, "%ldx%ldx%ld: not enough host memory for the reference copies", m, n,
                 k);
        return EXIT_BAD_USAGE;
    }
    fill_uniform_f32(P.a, m * k, seed, -1, 1, 0);
    fill_uniform_f32(P.b, k * n, seed + 1, -1, 1, 0);
    fill_uniform_f32(P.c0, m * n, seed + 2, -1, 1, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(P.ha, P.a, sa, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.hb, P.b, sb, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(P.hc0, P.c0, sc, cudaMemcpyDeviceToHost));
    const gemm_problem on_host = {.layout = GEMM_NN, .type = GEMM_F32, .M = m, .N = n, .K = k,
                                  .a = P.ha, .b = P.hb, .alpha = ALPHA, .beta = BETA,
                                  .c0 = P.hc0};
    gemm_problem on_device = on_host;
    on_device.a = P.a, on_device.b = P.b, on_device.c0 = P.c0;
    gemm_exact_compute(&on_device, &on_host, seed, &P.exact);
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.a));
    CUDA_CHECK(cudaFree(P.b));
    CUDA_CHECK(cudaFree(P.c));
    CUDA_CHECK(cudaFree(P.c0));
    free(P.ha), free(P.hb), free(P.hc0), free(P.hout);
    gemm_exact_free(&P.exact);
    memset(&P, 0, sizeof P);
}

static void prepare(const row_entry *r, const shape *s) {
    (void)r, (void)s;
    /* C is read (beta != 0): restore its initial values before every checked launch. */
    CUDA_CHECK(cudaMemcpy(P.c, P.c0, (size_t)P.m * P.n * sizeof(float),
                          cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    sgemm_fn fn = (sgemm_fn)(exercise ? r->ex_launch : r->launch);
    return fn(P.m, P.n, P.k, ALPHA, P.a, P.b, BETA, P.c, st);
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound_l2) {
    (void)r, (void)s;
    const long count = (long)P.m * P.n;
    CUDA_CHECK(cudaMemcpy(P.hout, P.c, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost));
    const gemm_bound b = bound();
    *bound_l2 = gemm_check(&P.exact, P.hout, GEMM_F32, &b, m);
    return true;
}

static double work(const row_entry *r, const shape *s) {
    (void)r;
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2];
}

/* The first four are small enough for --quick (compute-sanitizer). */
static const shape TEST_SHAPES[] = {
    {{1, 1, 1}},       {{33, 33, 33}},     {{127, 4096, 3}},   {{256, 384, 136}},
    {{1000, 1000, 1000}}, {{4097, 511, 257}}, {{4096, 4096, 4096}},
};
static const shape BENCH_SHAPES[] = {
    {{128, 128, 128}},    {{256, 256, 256}},    {{512, 512, 512}},    {{1024, 1024, 1024}},
    {{2048, 2048, 2048}}, {{4096, 4096, 4096}}, {{8192, 8192, 8192}}, {{8192, 1024, 4096}},
    {{1024, 8192, 4096}}, {{4096, 4096, 1024}}, {{2048, 2048, 8192}}, {{8192, 8192, 512}},
};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "04_sgemm",
        .summary = "Chapter 04: C = alpha * A * B + beta * C in fp32 on the CUDA cores\n"
                   "(row-major, A m x k, B k x n), from a naive kernel to a tuned one, every\n"
                   "stage checked against the exact product (fp64) and timed against\n"
                   "cublasSgemm in the same run.\n"
                   "SGEMM_CONFIG=1..21 forces one tile configuration of the tuned stage: 4, 7,\n"
                   "10 and 20 in a plain build, all 21 with make SGEMM_SWEEP=1 (README).",
        .ndims = 3,
        .dim_names = {"m", "n", "k"},
        .dim_help = {"rows of A and C (default 4096)", "columns of B and C (default 4096)",
                     "columns of A, rows of B (default 4096)"},
        .default_shape = {{4096, 4096, 4096}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 4,
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
        .dtype = NULL,
    };
    return run_chapter(&ch, argc, argv);
}
