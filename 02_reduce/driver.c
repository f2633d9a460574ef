/* Chapter 02 driver: the sum (and the max) of n fp32 values, to one value in device memory.
 *
 * The problem: every element is read once and nothing is written but the answer, so the
 * floor is n * 4 bytes over the DRAM read bandwidth. Rows report GB/s of input read. The
 * ceiling row, cudaMemcpy device-to-device of the input, reports bytes read + written; a
 * reduction only reads, and reads alone can run a little faster than a copy's mixed traffic,
 * so "% memcpy" may pass 100%. The library row is CUB's DeviceReduce::Sum (and ::Max for the
 * max row), timed in the same run: the "x CUB" column.
 *
 * The check (README, "Checking"): inputs are uniform values rounded to odd multiples of 2^-8
 * in (-1, 1), with a unique maximum 1.0 planted at a seed-dependent index. On such data every
 * fp32 partial sum below 2^16 in magnitude is exact, so a correct kernel returns exactly the
 * compensated fp64 sum, whatever its order of additions, and a missed or doubled element moves
 * the answer by at least 2^-8. The sum must be within 2^-9 of the reference (so: exact); the
 * max must be exact. The answer is poisoned (NaN) before each checked launch, and so are the
 * partials in scratch, so a kernel that reads a partial before writing it fails. */
#include <stdlib.h>
#include <string.h>

#include "reduce.h"
#include "runner.h"

typedef enum { OP_COPY, OP_SUM, OP_MAX } reduce_op;

typedef int (*reduce_fn)(const float *, long, float *, float *, cudaStream_t);

#define NO_SPILLS "LDL STL"
#define SMEM_TREE "LDS STS BAR"
#define MEMCPY "memcpy"
#define CUB "cub"
#define CUB_MAX "cub_max"

#define STAGE_ROW(nm, desc, op, lib, fn, sym, must, must_not)                                      \
    {{nm, desc, ARCH_ANY, sym, must, must_not}, ROLE_STAGE, op, (any_fn)fn, (any_fn)ex_##fn,      \
     MEMCPY, lib}

static struct {
    long n;
    uint64_t seed;
    float *in, *copy, *out, *scratch; /* device */
    float *host;                      /* host copy of the input */
    double ref_sum, ref_max, sum_abs;
    bool filled;
} P;

static int memcpy_ceiling(const float *in, long n, float *out, float *scratch, cudaStream_t s) {
    (void)out, (void)scratch;
    CUDA_CHECK(cudaMemcpyAsync(P.copy, in, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    return LAUNCH_OK;
}

static const row_entry ROWS[] = {
    {{MEMCPY, "cudaMemcpyAsync device-to-device of the input: the bandwidth ceiling (read+write)",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_CEILING, OP_COPY, (any_fn)memcpy_ceiling, NULL, NULL, NULL},
    {{CUB, "cub::DeviceReduce::Sum, temporary storage allocated outside the timed region",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_LIBRARY, OP_SUM, (any_fn)cub_sum, NULL, MEMCPY, NULL},
    {{CUB_MAX, "cub::DeviceReduce::Max, the library for the max row", ARCH_ANY, NULL, NULL, NULL},
     ROLE_LIBRARY, OP_MAX, (any_fn)cub_max, NULL, MEMCPY, NULL},
    STAGE_ROW("interleaved_divergent", "1: interleaved addressing, tid % (2s) branch diverges",
              OP_SUM, CUB, reduce_interleaved_divergent, "interleaved_divergent_kernel",
              SMEM_TREE, "SHFL " NO_SPILLS),
    STAGE_ROW("interleaved", "2: interleaved addressing, no divergence, bank conflicts", OP_SUM,
              CUB, reduce_interleaved, "interleaved_kernel", SMEM_TREE, "SHFL " NO_SPILLS),
    STAGE_ROW("sequential", "3: sequential addressing, conflict-free", OP_SUM, CUB,
              reduce_sequential, "sequential_kernel", SMEM_TREE, "SHFL " NO_SPILLS),
    STAGE_ROW("first_add", "4: first add during the global load (2 elements per thread)", OP_SUM,
              CUB, reduce_first_add, "first_add_kernel", SMEM_TREE, "SHFL " NO_SPILLS),
    STAGE_ROW("unroll_warp", "5: last warp unrolled, __syncwarp instead of block barriers",
              OP_SUM, CUB, reduce_unroll_warp, "unroll_warp_kernel", SMEM_TREE,
              "SHFL " NO_SPILLS),
    STAGE_ROW("unroll_all", "6: tree completely unrolled, compile-time block size", OP_SUM, CUB,
              reduce_unroll_all, "unroll_all_kernel", SMEM_TREE, "SHFL " NO_SPILLS),
    STAGE_ROW("grid_stride", "7: many elements per thread, grid of resident blocks, 2 launches",
              OP_SUM, CUB, reduce_grid_stride, "grid_stride_kernel", SMEM_TREE,
              "SHFL " NO_SPILLS),
    STAGE_ROW("shuffle", "8: warp shuffles (__shfl_down_sync) instead of shared-memory trees",
              OP_SUM, CUB, reduce_shuffle, "shuffle_kernel", "SHFL.DOWN", NO_SPILLS),
    STAGE_ROW("float4", "9: 128-bit loads, 4 per thread in flight, 2 launches", OP_SUM, CUB,
              reduce_float4, "float4_kernel", "LDG.E.128 SHFL.BFLY", NO_SPILLS),
    STAGE_ROW("single_pass", "10: one launch, the last block finishes (REDUCE_CONFIG tunes it)",
              OP_SUM, CUB, reduce_single_pass, "single_pass_kernelILi0E",
              "LDG.E.128 SHFL.BFLY ATOMG MEMBAR", NO_SPILLS),
    STAGE_ROW("single_pass_max", "10: the same kernel computing the max", OP_MAX, CUB_MAX,
              reduce_max_single_pass, "single_pass_kernelILi1E",
              "LDG.E.128 SHFL.BFLY ATOMG MEMBAR FMNMX", NO_SPILLS),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static long scratch_floats(long n) { return REDUCE_SCRATCH_FLOATS(n); }

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    long n = s->d[0];
    double need = (2.0 * (double)n + (double)scratch_floats(n)) * sizeof(float);
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len,
                 "n = %ld needs %s of GPU memory (input, memcpy copy, partials); %s is free", n,
                 want, have);
        return EXIT_BAD_USAGE;
    }
    P.n = n;
    P.seed = seed;
    P.in = gpu_alloc((size_t)n * sizeof(float));
    P.copy = gpu_alloc((size_t)n * sizeof(float));
    P.out = gpu_alloc(256);
    P.scratch = gpu_alloc((size_t)scratch_floats(n) * sizeof(float));
    P.host = malloc((size_t)n * sizeof(float));
    if (!P.host) {
        snprintf(err, len, "n = %ld: not enough host memory for the reference copy", n);
        return EXIT_BAD_USAGE;
    }
    if (cub_reduce_setup(n)) {
        snprintf(err, len, "n = %ld: CUB cannot size its temporary storage", n);
        return EXIT_BAD_USAGE;
    }
    P.filled = false;
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.in));
    CUDA_CHECK(cudaFree(P.copy));
    CUDA_CHECK(cudaFree(P.out));
    CUDA_CHECK(cudaFree(P.scratch));
    cub_reduce_teardown();
    free(P.host);
    memset(&P, 0, sizeof P);
}

/* Where the maximum is planted: a different index for every seed and size. */
static long peak_index(uint64_t seed, long n) {
    uint64_t z = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (long)(z % (uint64_t)n);
}

/* The reference: Neumaier's compensated sum in fp64 (exact here; it stays accurate for any
 * data), the largest |partial| for the README's exactness argument, and the max. */
static void reference(void) {
    double sum = 0, comp = 0, sum_abs = 0, mx = -INFINITY;
    for (long i = 0; i < P.n; i++) {
        double x = P.host[i], t = sum + x;
        comp += fabs(sum) >= fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
        sum_abs += fabs(x);
        if (x > mx) mx = x;
    }
    P.ref_sum = sum + comp;
    P.sum_abs = sum_abs;
    P.ref_max = mx;
}

static void prepare(const row_entry *r, const shape *s) {
    (void)r, (void)s;
    if (!P.filled) {
        reduce_make_input(P.in, P.n, P.seed, peak_index(P.seed, P.n), 0);
        CUDA_CHECK(cudaMemcpy(P.host, P.in, (size_t)P.n * sizeof(float), cudaMemcpyDeviceToHost));
        reference();
        P.filled = true;
    }
    poison(P.out, 256, 0);
    poison(P.scratch, (size_t)scratch_floats(P.n) * sizeof(float), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    reduce_fn fn = (reduce_fn)(exercise ? r->ex_launch : r->launch);
    return fn(P.in, s->d[0], P.out, P.scratch, st);
}

/* Exact arithmetic holds while every partial sum stays below 2^16 in magnitude: at n = 2^28 the
 * final sum's standard deviation is sqrt(n/3) ~ 9459, so 2^16 is ~7 of them away. Beyond the
 * test sizes (--n above 2^28) allow the rounding of fp32 accumulation as well. */
static double sum_tolerance(long n) {
    double tol = 0x1p-9;
    if (n > (1L << 28)) tol += 0x1p-24 * P.sum_abs;
    return tol;
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    reduce_op op = (reduce_op)r->variant;
    if (op == OP_COPY) return false;
    float out;
    CUDA_CHECK(cudaMemcpy(&out, P.out, sizeof out, cudaMemcpyDeviceToHost));
    metrics_init(m);
    if (op == OP_SUM) {
        double tol = sum_tolerance(P.n);
        metrics_add(m, 0, out, P.ref_sum, tol, 0);
        *bound = P.ref_sum != 0 ? tol / fabs(P.ref_sum) : tol;
    } else {
        metrics_add(m, 0, out, P.ref_max, 0, 0);
        *bound = 0;
    }
    metrics_finish(m);
    return true;
}

static double work(const row_entry *r, const shape *s) {
    double n = (double)s->d[0];
    return (r->variant == OP_COPY ? 2 : 1) * n * sizeof(float);
}

/* 3 x 8192 + 5: the smallest kind of input on which stage 10 runs several blocks (its chunks
 * are 8192 floats), a tail and n % 4 leftovers: its last-block finish under --quick, so under
 * make sanitize-02 too. */
static const shape TEST_SHAPES[] = {{{1}}, {{33}}, {{1000}}, {{4097}}, {{3 * 8192 + 5}},
                                    {{(1L << 20) + 3}}, {{1L << 28}}};
/* 1K..1M: launch latency dominates (read the time column); 4M..256M: bandwidth. */
static const shape BENCH_SHAPES[] = {{{1L << 10}}, {{1L << 12}}, {{1L << 14}}, {{1L << 16}},
                                     {{1L << 18}}, {{1L << 20}}, {{1L << 22}}, {{1L << 24}},
                                     {{1L << 26}}, {{1L << 28}}};

int main(int argc, char **argv) {
    const char *cfg = getenv("REDUCE_CONFIG");
    if (cfg) {
        char *end;
        long k = strtol(cfg, &end, 10);
        if (!*cfg || *end || k < 0 || k >= REDUCE_NCONFIGS) {
            fprintf(stderr, "02_reduce: REDUCE_CONFIG='%s' must be a number from 0 to %d\n", cfg,
                    REDUCE_NCONFIGS - 1);
            return EXIT_BAD_USAGE;
        }
        fprintf(stderr, "02_reduce: single_pass rows use REDUCE_CONFIG=%ld\n", k);
    }
    const chapter ch = {
        .name = "02_reduce",
        .summary = "Chapter 02: the sum (and max) of n fp32 values, from Harris's seven steps to a\n"
                   "single-launch kernel, checked exactly and timed against CUB and cudaMemcpy.\n"
                   "REDUCE_CONFIG=0..11 selects stage 10's configuration (README, Tuning notes).",
        .ndims = 1,
        .dim_names = {"n"},
        .dim_help = {"elements (default 2^28: a 1 GiB fp32 array)"},
        .default_shape = {{1L << 28}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 5,
        .bench_shapes = BENCH_SHAPES,
        .nbench_shapes = sizeof BENCH_SHAPES / sizeof BENCH_SHAPES[0],
        .unit = UNIT_GBPS,
        .ceiling_col = "% memcpy",
        .library_col = "x CUB",
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
