/* Chapter 03 driver: y = softmax(x) over each row of a rows x cols row-major matrix, fp32 and
 * fp16 storage (fp32 math).
 *
 * The problem: each element is read once and written once, with a few flops in between (one
 * max, one exponential, one add, one multiply), so a kernel is bound by memory: its floor is
 * 2 * rows * cols * sizeof(element) bytes over the DRAM bandwidth. The ceiling rows copy the
 * input with cudaMemcpyAsync device-to-device (bytes read + bytes written, the same count), and
 * every stage reports its GB/s against that same floor, including the stages that read the
 * row two or three times: their percentage shows what the extra reads cost.
 *
 * The inputs are built so that a kernel without the max subtraction fails: four kinds of rows,
 * chosen per row from the seed ((row + seed) % 4), all fresh for every seed:
 *   equal:   every element the same value in [-1e4, 1e4)   -> softmax = 1 / cols exactly
 *   wide:    uniform in [-1e4, 1e4)                          -> nearly one-hot
 *   offset:  o + uniform in [-10, 10), o uniform in [-2000, 2000) per row
 *   narrow:  o + uniform in [-1, 1)                          -> every term counts in the sum
 * exp(x) overflows fp32 above 88.7, so every kind but a lucky few overflows without the max.
 *
 * The check: the output is poisoned with NaN before each checked launch; every element is
 * compared with an fp64 softmax computed on the CPU from the stored (rounded) inputs, and each
 * row's outputs must sum to 1. Bounds (README, "Correctness"):
 *   fp32: |y - y*| <= 2^-126 + 2^-14 |y*|,  |sum - 1| <= 2^-14,             rel L2 <= 2^-15
 *   fp16: |y - y*| <= 2^-24  + 2^-10 |y*|,  |sum - 1| <= 2^-10 + cols 2^-25, rel L2 <= 1e-3 */
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "runner.h"
#include "softmax.h"

typedef int (*softmax_fn)(const void *, void *, long, long, softmax_dtype, cudaStream_t);

#define NO_SPILLS "LDL STL"

/* Row variants: the data type, and whether the row is the memcpy ceiling. */
enum { V_F32 = SOFTMAX_F32, V_F16 = SOFTMAX_F16, V_COPY = 2 };
#define VARIANT(dtype, copy) ((dtype) | ((copy) ? V_COPY : 0))
#define V_DTYPE(v) ((softmax_dtype)((v) & 1))

/* A stage row: name, description, arch, dtype, launcher, kernel symbol, must / must-not. */
#define STAGE_ROW(nm, desc, arch, dt, fn, sym, must, must_not, fits)                               \
    {{nm, desc, arch, sym, must, must_not}, ROLE_STAGE, VARIANT(dt, 0), (any_fn)fn,              \
     (any_fn)ex_##fn, (dt) == SOFTMAX_F16 ? "memcpy_f16" : "memcpy", NULL, fits}

/* The naive stage gives one thread per row and reads each row three times: at the bench sizes
 * a launch takes seconds, so it runs only where that stays short. Its single fp32 running sum
 * also drifts with the width (about 1e-9 relative per term on these inputs, a bias, not noise:
 * 2.8e-5 at 32768 terms), so it stops at 16384 elements per row, a quarter of the fp32 bound. */
#define NAIVE_MAX_ELEMS (1L << 23)
#define NAIVE_MAX_COLS 16384L

static bool naive_fits(const shape *s, char *why, size_t len) {
    long rows = s->d[0], cols = s->d[1];
    if (rows * cols > NAIVE_MAX_ELEMS) {
        snprintf(why, len, "naive runs only up to %ld elements (one thread per row: seconds per "
                 "launch beyond)", NAIVE_MAX_ELEMS);
        return false;
    }
    if (cols > NAIVE_MAX_COLS) {
        snprintf(why, len, "naive runs only up to %ld columns (one fp32 running sum drifts past "
                 "the fp32 bound beyond: README, Correctness)", NAIVE_MAX_COLS);
        return false;
    }
    return true;
}

/* Stage 5 holds a row in one block's registers, stage 6 in 8 blocks'; rows whose width is not a
 * whole number of 16-byte packs hold fewer elements per thread. */
static bool width_fits(const shape *s, softmax_dtype dt, long max_aligned, long max_unaligned,
                       const char *what, char *why, size_t len) {
    long cols = s->d[1];
    long max = SOFTMAX_ALIGNED(cols, dt) ? max_aligned : max_unaligned;
    if (cols > max) {
        snprintf(why, len, "cols > %ld: the row does not fit %s", max, what);
        return false;
    }
    return true;
}

#define WIDTH_PREDICATE(name, dt, max_aligned, max_unaligned, what)                                \
    static bool name(const shape *s, char *why, size_t len) {                                      \
        return width_fits(s, dt, max_aligned, max_unaligned, what, why, len);                      \
    }
WIDTH_PREDICATE(regs_fits_f32, SOFTMAX_F32, SOFTMAX_REGS_MAX_COLS,
                SOFTMAX_REGS_MAX_COLS_UNALIGNED, "one block's registers (stage 6 takes it)")
WIDTH_PREDICATE(regs_fits_f16, SOFTMAX_F16, SOFTMAX_REGS_MAX_COLS,
                SOFTMAX_REGS_MAX_COLS_UNALIGNED, "one block's registers (stage 6 takes it)")
WIDTH_PREDICATE(cluster_fits_f32, SOFTMAX_F32, SOFTMAX_CLUSTER_MAX_COLS,
                SOFTMAX_CLUSTER_MAX_COLS_UNALIGNED, "8 blocks' registers")
WIDTH_PREDICATE(cluster_fits_f16, SOFTMAX_F16, SOFTMAX_CLUSTER_MAX_COLS,
                SOFTMAX_CLUSTER_MAX_COLS_UNALIGNED, "8 blocks' registers")

static int memcpy_ceiling(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                          cudaStream_t s) {
    size_t bytes = (size_t)rows * (size_t)cols * (dtype == SOFTMAX_F16 ? 2 : 4);
    CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s));
    return LAUNCH_OK;
}

#define F32 SOFTMAX_F32
#define F16 SOFTMAX_F16
static const row_entry ROWS[] = {
    {{"memcpy", "cudaMemcpyAsync device-to-device of the fp32 input: the bandwidth ceiling",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_CEILING, VARIANT(F32, 1), (any_fn)memcpy_ceiling, NULL, NULL, NULL},
    {{"memcpy_f16", "cudaMemcpyAsync device-to-device of the fp16 input: the same, half the bytes",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_CEILING, VARIANT(F16, 1), (any_fn)memcpy_ceiling, NULL, NULL, NULL},
    STAGE_ROW("f32_naive", "one thread per row, three passes", ARCH_ANY, F32, softmax_naive,
              "softmax_naive_kernelIf", "LDG.E STG.E MUFU.EX2", "SHFL " NO_SPILLS, naive_fits),
    STAGE_ROW("f32_block_smem", "one block per row, shared-memory tree reductions, three passes",
              ARCH_ANY, F32, softmax_block_smem, "softmax_block_smem_kernelIf",
              "BAR.SYNC STS LDS MUFU.EX2", "SHFL " NO_SPILLS, NULL),
    STAGE_ROW("f32_warp_shfl", "shuffle reductions; a warp per row up to 1024, three passes",
              ARCH_ANY, F32, softmax_warp_shfl, "row_kernelIf", "SHFL.BFLY MUFU.EX2", NO_SPILLS,
              NULL),
    STAGE_ROW("f32_online", "online softmax: max and sum in one pass, two reads", ARCH_ANY, F32,
              softmax_online, "softmax_online_", "SHFL.BFLY MUFU.EX2", NO_SPILLS, NULL),
    STAGE_ROW("f32_regs", "row in registers, 128-bit, warp or block per row by width (<= 32K)",
              ARCH_ANY, F32, softmax_regs, "softmax_regs_kernelIf",
              "LDG.E.128 STG.E.128 SHFL.BFLY MUFU.EX2", NO_SPILLS, regs_fits_f32),
    STAGE_ROW("f32_cluster", "cluster of blocks per row, partials through DSMEM (sm_90)",
              ARCH_SM90A, F32, softmax_cluster, "softmax_cluster_kernelIf",
              "LDG.E.128 STG.E.128 UCGABAR_ARV UCGABAR_WAIT", NO_SPILLS, cluster_fits_f32),
    STAGE_ROW("f32_split", "stage 6 fallback: two kernels, partials through global memory",
              ARCH_ANY, F32, softmax_split, "softmax_split_", "LDG.E.128 STG.E.128", NO_SPILLS,
              cluster_fits_f32),
    STAGE_ROW("f16_naive", "fp16: one thread per row, three passes", ARCH_ANY, F16, softmax_naive,
              "softmax_naive_kernelI6__half", "LDG.E.U16 STG.E.U16", NO_SPILLS, naive_fits),
    STAGE_ROW("f16_block_smem", "fp16: one block per row, shared-memory reductions", ARCH_ANY,
              F16, softmax_block_smem, NULL, NULL, NULL, NULL),
    STAGE_ROW("f16_warp_shfl", "fp16: shuffle reductions, a warp per row up to 1024", ARCH_ANY,
              F16, softmax_warp_shfl, NULL, NULL, NULL, NULL),
    STAGE_ROW("f16_online", "fp16: online softmax, two reads", ARCH_ANY, F16, softmax_online, NULL,
              NULL, NULL, NULL),
    STAGE_ROW("f16_regs", "fp16: row in registers, 8 halves per 128-bit access", ARCH_ANY, F16,
              softmax_regs, "softmax_regs_kernelI6__half", "LDG.E.128 STG.E.128 SHFL.BFLY",
              NO_SPILLS, regs_fits_f16),
    STAGE_ROW("f16_cluster", "fp16: cluster of blocks per row through DSMEM (sm_90)", ARCH_SM90A,
              F16, softmax_cluster, "softmax_cluster_kernelI6__half",
              "LDG.E.128 STG.E.128 UCGABAR_ARV UCGABAR_WAIT", NO_SPILLS, cluster_fits_f16),
    STAGE_ROW("f16_split", "fp16: stage 6 fallback, two kernels", ARCH_ANY, F16, softmax_split,
              NULL, NULL, NULL, cluster_fits_f16),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    long rows, cols;
    uint64_t seed;
    void *x[2], *y;      /* device: the fp32 and fp16 inputs, one output sized for fp32 */
    void *hx[2];         /* host copies of the inputs */
    float *ref[2];       /* fp64 softmax of each input, rounded to fp32 */
    void *hy;            /* host copy of the output */
    bool filled[2];
} P;

static size_t elem_bytes(softmax_dtype dt) { return dt == SOFTMAX_F16 ? 2 : 4; }

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    long rows = s->d[0], cols = s->d[1];
    double n = (double)rows * (double)cols;
    double need = n * (4 + 2 + 4);
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len,
                 "%ldx%ld needs %s of GPU memory (fp32 and fp16 inputs, one fp32 output); "
                 "%s is free",
                 rows, cols, want, have);
        return EXIT_BAD_USAGE;
    }
    size_t count = (size_t)rows * (size_t)cols;
    memset(&P, 0, sizeof P);
    P.rows = rows, P.cols = cols, P.seed = seed;
    P.x[SOFTMAX_F32] = gpu_alloc(count * 4);
    P.x[SOFTMAX_F16] = gpu_alloc(count * 2);
    P.y = gpu_alloc(count * 4);
    P.hx[SOFTMAX_F32] = malloc(count * 4);
    P.hx[SOFTMAX_F16] = malloc(count * 2);
    P.ref[0] = malloc(count * sizeof(float));
    P.ref[1] = malloc(count * sizeof(float));
    P.hy = malloc(count * 4);
    if (!P.hx[0] || !P.hx[1] || !P.ref[0] || !P.ref[1] || !P.hy) {
        snprintf(err, len, "%ldx%ld: not enough host memory for the reference copies", rows, cols);
        return EXIT_BAD_USAGE;
    }
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.x[0]));
    CUDA_CHECK(cudaFree(P.x[1]));
    CUDA_CHECK(cudaFree(P.y));
    free(P.hx[0]), free(P.hx[1]), free(P.ref[0]), free(P.ref[1]), free(P.hy);
    memset(&P, 0, sizeof P);
}

typedef enum { ROW_EQUAL, ROW_WIDE, ROW_OFFSET, ROW_NARROW } row_kind;

static row_kind kind_of(long row) { return (row_kind)((row + (long)(P.seed % 4)) % 4); }

/* Element j of row r, from (seed, r, j) alone. */
static float input_value(long r, long j) {
    uint64_t i = (uint64_t)r * (uint64_t)P.cols + (uint64_t)j;
    switch (kind_of(r)) {
    case ROW_EQUAL: return rng_uniform(P.seed ^ 0xE0E0E0E0ull, (uint64_t)r, -1e4f, 1e4f);
    case ROW_WIDE: return rng_uniform(P.seed, i, -1e4f, 1e4f);
    case ROW_OFFSET:
        return rng_uniform(P.seed ^ 0x0F0F0F0Full, (uint64_t)r, -2000, 2000) +
               rng_uniform(P.seed, i, -10, 10);
    default:
        return rng_uniform(P.seed ^ 0x0F0F0F0Full, (uint64_t)r, -2000, 2000) +
               rng_uniform(P.seed, i, -1, 1);
    }
}

/* Inputs of one data type (host, then device) and their fp64 softmax, once per shape. */
static void fill(softmax_dtype dt) {
    long rows = P.rows, cols = P.cols;
    float *hf = P.hx[SOFTMAX_F32];
    uint16_t *hh = P.hx[SOFTMAX_F16];
    float *ref = P.ref[dt];
    for (long r = 0; r < rows; r++) {
        float *rr = ref + r * cols;
        double m = -INFINITY;
        for (long j = 0; j < cols; j++) {
            float v = input_value(r, j);
            if (dt == SOFTMAX_F16) {
                uint16_t h = f32_to_f16(v);
                hh[r * cols + j] = h;
                v = f16_to_f32(h); /* the reference sees the value the kernel reads */
            } else {
                hf[r * cols + j] = v;
            }
            rr[j] = v;
            if (v > m) m = v;
        }
        double sum = 0;
        for (long j = 0; j < cols; j++) sum += exp((double)rr[j] - m);
        for (long j = 0; j < cols; j++) rr[j] = (float)(exp((double)rr[j] - m) / sum);
    }
    CUDA_CHECK(cudaMemcpy(P.x[dt], P.hx[dt], (size_t)rows * (size_t)cols * elem_bytes(dt),
                          cudaMemcpyHostToDevice));
    P.filled[dt] = true;
}

static bool is_copy(const row_entry *r) { return (r->variant & V_COPY) != 0; }

static void prepare(const row_entry *r, const shape *s) {
    (void)s;
    softmax_dtype dt = V_DTYPE(r->variant);
    if (!P.filled[dt] && !is_copy(r)) fill(dt); /* a copy's timing does not need the data */
    poison(P.y, (size_t)P.rows * (size_t)P.cols * 4, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    softmax_fn fn = (softmax_fn)(exercise ? r->ex_launch : r->launch);
    softmax_dtype dt = V_DTYPE(r->variant);
    return fn(P.x[dt], P.y, s->d[0], s->d[1], dt, st);
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    if (is_copy(r)) return false;
    softmax_dtype dt = V_DTYPE(r->variant);
    long rows = P.rows, cols = P.cols;
    CUDA_CHECK(cudaMemcpy(P.hy, P.y, (size_t)rows * (size_t)cols * elem_bytes(dt),
                          cudaMemcpyDeviceToHost));
    double atol = dt == SOFTMAX_F16 ? 0x1p-24 : 0x1p-126;
    double rtol = dt == SOFTMAX_F16 ? 0x1p-10 : 0x1p-14;
    double sum_tol = dt == SOFTMAX_F16 ? 0x1p-10 + (double)cols * 0x1p-25 : 0x1p-14;
    const float *out32 = P.hy;
    const uint16_t *out16 = P.hy;
    const float *ref = P.ref[dt];
    metrics_init(m);
    for (long row = 0; row < rows; row++) {
        double sum = 0;
        for (long j = 0; j < cols; j++) {
            long i = row * cols + j;
            double out = dt == SOFTMAX_F16 ? (double)f16_to_f32(out16[i]) : (double)out32[i];
            sum += out;
            metrics_add(m, i, out, ref[i], atol, rtol);
        }
        /* The row sum: reported as the row's first element when nothing else failed first. */
        if (!(fabs(sum - 1.0) <= sum_tol)) {
            if (m->first_bad < 0) {
                m->first_bad = row * cols;
                m->first_bad_out = sum;
                m->first_bad_ref = 1.0;
                fprintf(stderr, "%s: row %ld sums to %.9g, want 1 +- %.2g\n", r->info.name, row,
                        sum, sum_tol);
            }
            m->bad++;
        }
    }
    metrics_finish(m);
    *bound = dt == SOFTMAX_F16 ? 1e-3 : 0x1p-15;
    return true;
}

static double work(const row_entry *r, const shape *s) {
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)elem_bytes(V_DTYPE(r->variant));
}

static const char *dtype(const row_entry *r) {
    return V_DTYPE(r->variant) == SOFTMAX_F16 ? "fp16" : "fp32";
}

/* rows x cols. The first five are small enough for --quick (compute-sanitizer); together they
 * cover one element, odd widths (no 16-byte packs), aligned widths, a warp per row, a block
 * per row and a cluster of 2. The rest add 3 rows of 65537 (scalar, 8-block cluster), widths
 * beyond stage 5, many short rows, and one 256 MiB matrix. */
static const shape TEST_SHAPES[] = {
    {{1, 1}},       {{33, 33}},     {{7, 1000}},     {{5, 4097}},     {{4, 16384}},
    {{3, 65537}},   {{9, 100000}},  {{200003, 32}},  {{50001, 128}},  {{1000, 512}},
    {{300, 1536}},  {{16384, 4096}},
};
/* 2^26 elements (256 MiB fp32) at every width of the lesson's table, plus the two PyTorch
 * anchor shapes of docs/anchors.md and one small shape where the naive stage runs. */
static const shape BENCH_SHAPES[] = {
    {{1L << 21, 32}}, {{1L << 19, 128}}, {{1L << 16, 1024}}, {{1L << 14, 4096}},
    {{1L << 13, 8192}}, {{1L << 12, 16384}}, {{1L << 10, 65536}},
    {{16384, 1024}}, {{4096, 8192}}, {{4096, 1024}},
};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "03_softmax",
        .summary = "Chapter 03: row-wise softmax of a rows x cols matrix in fp32 and fp16 (fp32\n"
                   "math), every stage checked against an fp64 softmax and timed against\n"
                   "cudaMemcpy. SOFTMAX_CONFIG and SOFTMAX_CLUSTER_CONFIG pick the tuning\n"
                   "presets of stages 5 and 6 (README, \"Tuning notes\").",
        .ndims = 2,
        .dim_names = {"rows", "cols"},
        .dim_help = {"rows of the matrix (default 4096)",
                     "elements per row, the softmax width (default 8192)"},
        .default_shape = {{4096, 8192}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 5,
        .bench_shapes = BENCH_SHAPES,
        .nbench_shapes = sizeof BENCH_SHAPES / sizeof BENCH_SHAPES[0],
        .unit = UNIT_GBPS,
        .ceiling_col = "% memcpy",
        .library_col = NULL,
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
    };
    return run_chapter(&ch, argc, argv);
}
