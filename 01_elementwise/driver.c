/* Chapter 01 driver: c = a + b (and relu(a + b)) over n elements, fp32, fp16 and bf16.
 *
 * The problem: each element is read twice and written once, with one add in between, so the
 * kernel is bound by memory: its floor is 3 * n * sizeof(element) bytes over the DRAM
 * bandwidth. The ceiling row, cudaMemcpy device-to-device of one fp32 array, measures that
 * bandwidth in the same run (bytes read + bytes written), and every row reports its GB/s as a
 * percentage of it.
 *
 * The check: inputs are fresh uniform random values in [-1, 1) (the seed is printed), the
 * output is poisoned with NaN before each checked launch, and every element is compared with
 * an fp64 sum on the CPU. Tolerances (per element, relative to the exact result):
 *   fp32 2^-23 (an fp32 add rounds once: 2^-24), fp16 2^-10 (rounds once: 2^-11),
 *   bf16 2^-7 (rounds once: 2^-8); relative L2 error bounds 1e-6, 1e-3, 1e-2. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "runner.h"

typedef enum { OP_COPY, OP_ADD_F32, OP_ADD_F16, OP_ADD_BF16, OP_RELU_ADD_F32 } ew_op;

/* A row's variant: its operation, plus FIVE_PASSES for the unfused relu (two kernels: its
 * traffic is 5 arrays, not 3). */
#define FIVE_PASSES 0x100
static ew_op row_op(const row_entry *r) { return (ew_op)(r->variant & 0xff); }

typedef int (*f32_fn)(const float *, const float *, float *, long, cudaStream_t);
typedef int (*f16_fn)(const f16_t *, const f16_t *, f16_t *, long, cudaStream_t);
typedef int (*bf16_fn)(const bf16_t *, const bf16_t *, bf16_t *, long, cudaStream_t);

#define NO_SPILLS "LDL STL"
#define MEMCPY "memcpy"

/* A stage row: name, description, kernel symbol for the SASS check, must / must-not opcodes. */
#define STAGE_ROW(nm, desc, op, fn, sym, must, must_not)                                           \
    {{nm, desc, ARCH_ANY, sym, must, must_not}, ROLE_STAGE, op, (any_fn)fn, (any_fn)ex_##fn,      \
     MEMCPY, NULL}

static int memcpy_ceiling(const float *a, const float *b, float *c, long n, cudaStream_t s) {
    (void)b;
    CUDA_CHECK(cudaMemcpyAsync(c, a, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    return LAUNCH_OK;
}

static const row_entry ROWS[] = {
    {{MEMCPY, "cudaMemcpyAsync device-to-device of one fp32 array: the bandwidth ceiling",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_CEILING, OP_COPY, (any_fn)memcpy_ceiling, NULL, NULL, NULL},
    STAGE_ROW("naive", "one thread per element, 32-bit accesses", OP_ADD_F32, add_f32_naive,
              "add_f32_naive_kernel", "LDG.E STG.E FADD", "LDG.E.128 STG.E.128 " NO_SPILLS),
    STAGE_ROW("grid_stride", "grid-stride loop, grid sized from the SM count", OP_ADD_F32,
              add_f32_grid_stride, "add_f32_grid_stride_kernel", "LDG.E STG.E FADD",
              "LDG.E.128 STG.E.128 " NO_SPILLS),
    STAGE_ROW("float4", "128-bit float4 loads and stores, scalar tail", OP_ADD_F32,
              add_f32_float4, "add_f32_float4_kernel", "LDG.E.128 STG.E.128 FADD", NO_SPILLS),
    STAGE_ROW("f16_pack8", "fp16, 8 elements per 128-bit access, __hadd2", OP_ADD_F16,
              add_f16_pack8, "add_f16_pack8_kernel", "LDG.E.128 STG.E.128 HADD2", NO_SPILLS),
    STAGE_ROW("bf16_pack8", "bf16, 8 elements per 128-bit access, __hadd2", OP_ADD_BF16,
              add_bf16_pack8, "add_bf16_pack8_kernel", "LDG.E.128 STG.E.128", NO_SPILLS),
    STAGE_ROW("f32_unroll", "fp32, 4 independent 128-bit loads per input in flight per thread",
              OP_ADD_F32, add_f32_unroll, "add_unroll_kernelILi0E", "LDG.E.128 STG.E.128 FADD",
              NO_SPILLS),
    STAGE_ROW("f16_unroll", "fp16, 4 independent 128-bit loads per input in flight per thread",
              OP_ADD_F16, add_f16_unroll, "add_unroll_kernelILi1E", "LDG.E.128 STG.E.128 HADD2",
              NO_SPILLS),
    STAGE_ROW("bf16_unroll", "bf16, 4 independent 128-bit loads per input in flight per thread",
              OP_ADD_BF16, add_bf16_unroll, "add_unroll_kernelILi2E", "LDG.E.128 STG.E.128",
              NO_SPILLS),
    STAGE_ROW("relu_unfused", "relu(a + b) as two kernels: add, then relu in place (5 passes)",
              OP_RELU_ADD_F32 | FIVE_PASSES, relu_add_unfused, "relu_inplace_kernel",
              "LDG.E.128 STG.E.128", NO_SPILLS),
    STAGE_ROW("relu_fused", "relu(a + b) in one kernel (3 passes)", OP_RELU_ADD_F32,
              relu_add_fused, "relu_add_fused_kernel", "LDG.E.128 STG.E.128 FMNMX", NO_SPILLS),
};

/* ---- problem state for the current shape -------------------------------------------------- */
static struct {
    long n;
    uint64_t seed;
    void *a, *b, *c;       /* device, sized for fp32 */
    void *ha, *hb, *hc;    /* host copies of the inputs and the output */
    int filled;            /* which element type the inputs hold now: -1 none, 4 fp32, 2 fp16, 3 bf16 */
} P;

static size_t elem_bytes(ew_op op) {
    return (op == OP_ADD_F16 || op == OP_ADD_BF16) ? 2 : 4;
}

static int setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const gpu_report *g = env->gpu;
    const uint64_t seed = env->seed;
    long n = s->d[0];
    double need = 3.0 * (double)n * sizeof(float);
    if (!gpu_fits(g, need)) {
        char want[32], have[32];
        fmt_size(want, sizeof want, need);
        fmt_size(have, sizeof have, (double)g->free_bytes);
        snprintf(err, len, "n = %ld needs %s of GPU memory (3 fp32 arrays); %s is free", n, want,
                 have);
        return EXIT_BAD_USAGE;
    }
    size_t bytes = (size_t)n * sizeof(float);
    P.n = n;
    P.seed = seed;
    P.a = gpu_alloc(bytes);
    P.b = gpu_alloc(bytes);
    P.c = gpu_alloc(bytes);
    P.ha = malloc(bytes);
    P.hb = malloc(bytes);
    P.hc = malloc(bytes);
    if (!P.ha || !P.hb || !P.hc) {
        snprintf(err, len, "n = %ld: not enough host memory for the reference copies", n);
        return EXIT_BAD_USAGE;
    }
    P.filled = -1;
    return 0;
}

static void teardown(void) {
    CUDA_CHECK(cudaFree(P.a));
    CUDA_CHECK(cudaFree(P.b));
    CUDA_CHECK(cudaFree(P.c));
    free(P.ha), free(P.hb), free(P.hc);
    memset(&P, 0, sizeof P);
}

static int input_kind(ew_op op) {
    return op == OP_ADD_F16 ? 2 : op == OP_ADD_BF16 ? 3 : 4;
}

static void prepare(const row_entry *r, const shape *s) {
    (void)s;
    ew_op op = row_op(r);
    int kind = input_kind(op);
    if (P.filled != kind) {
        /* a and b get different seeds, so a kernel that reads one twice fails */
        if (kind == 4) {
            fill_uniform_f32(P.a, P.n, P.seed, -1, 1, 0);
            fill_uniform_f32(P.b, P.n, P.seed + 1, -1, 1, 0);
        } else if (kind == 2) {
            fill_uniform_f16(P.a, P.n, P.seed, -1, 1, 0);
            fill_uniform_f16(P.b, P.n, P.seed + 1, -1, 1, 0);
        } else {
            fill_uniform_bf16(P.a, P.n, P.seed, -1, 1, 0);
            fill_uniform_bf16(P.b, P.n, P.seed + 1, -1, 1, 0);
        }
        size_t bytes = (size_t)P.n * elem_bytes(op);
        CUDA_CHECK(cudaMemcpy(P.ha, P.a, bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(P.hb, P.b, bytes, cudaMemcpyDeviceToHost));
        P.filled = kind;
    }
    poison(P.c, (size_t)P.n * sizeof(float), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    any_fn fn = exercise ? r->ex_launch : r->launch;
    long n = s->d[0];
    switch (row_op(r)) {
    case OP_ADD_F16: return ((f16_fn)fn)(P.a, P.b, P.c, n, st);
    case OP_ADD_BF16: return ((bf16_fn)fn)(P.a, P.b, P.c, n, st);
    default: return ((f32_fn)fn)(P.a, P.b, P.c, n, st);
    }
}

static bool check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    ew_op op = row_op(r);
    size_t eb = elem_bytes(op);
    CUDA_CHECK(cudaMemcpy(P.hc, P.c, (size_t)P.n * eb, cudaMemcpyDeviceToHost));
    metrics_init(m);
    const float *fa = P.ha, *fb = P.hb, *fc = P.hc;
    const uint16_t *ha = P.ha, *hb = P.hb, *hc = P.hc;
    switch (op) {
    case OP_COPY:
        for (long i = 0; i < P.n; i++) metrics_add(m, i, fc[i], fa[i], 0, 0);
        *bound = 0;
        break;
    case OP_ADD_F32:
        for (long i = 0; i < P.n; i++)
            metrics_add(m, i, fc[i], (double)fa[i] + (double)fb[i], 1e-30, 0x1p-23);
        *bound = 1e-6;
        break;
    case OP_RELU_ADD_F32:
        for (long i = 0; i < P.n; i++) {
            double ref = (double)fa[i] + (double)fb[i];
            metrics_add(m, i, fc[i], ref > 0 ? ref : 0, 1e-30, 0x1p-23);
        }
        *bound = 1e-6;
        break;
    case OP_ADD_F16:
        for (long i = 0; i < P.n; i++)
            metrics_add(m, i, f16_to_f32(hc[i]),
                        (double)f16_to_f32(ha[i]) + (double)f16_to_f32(hb[i]), 0x1p-24, 0x1p-10);
        *bound = 1e-3;
        break;
    case OP_ADD_BF16:
        for (long i = 0; i < P.n; i++)
            metrics_add(m, i, bf16_to_f32(hc[i]),
                        (double)bf16_to_f32(ha[i]) + (double)bf16_to_f32(hb[i]), 1e-30, 0x1p-7);
        *bound = 1e-2;
        break;
    }
    metrics_finish(m);
    return true;
}

static double work(const row_entry *r, const shape *s) {
    ew_op op = row_op(r);
    double n = (double)s->d[0];
    if (op == OP_COPY) return 2 * n * sizeof(float);
    if (r->variant & FIVE_PASSES) return 5 * n * sizeof(float);
    return 3 * n * (double)elem_bytes(op);
}

static const char *dtype(const row_entry *r) {
    switch (row_op(r)) {
    case OP_ADD_F16: return "fp16";
    case OP_ADD_BF16: return "bf16";
    default: return "fp32";
    }
}

static const shape TEST_SHAPES[] = {{{1}}, {{33}}, {{1000}}, {{4097}}, {{(1L << 20) + 3}},
                                    {{1L << 28}}};
static const shape BENCH_SHAPES[] = {{{1L << 18}}, {{1L << 20}}, {{1L << 22}}, {{1L << 24}},
                                     {{1L << 26}}, {{1L << 27}}, {{1L << 28}}};

int main(int argc, char **argv) {
    const chapter ch = {
        .name = "01_elementwise",
        .summary = "Chapter 01: c = a + b and relu(a + b) over n elements in fp32, fp16 and bf16,\n"
                   "every stage checked against an fp64 sum and timed against cudaMemcpy.",
        .ndims = 1,
        .dim_names = {"n"},
        .dim_help = {"elements per array (default 2^28: 1 GiB fp32 arrays)"},
        .default_shape = {{1L << 28}},
        .test_shapes = TEST_SHAPES,
        .ntest_shapes = sizeof TEST_SHAPES / sizeof TEST_SHAPES[0],
        .nquick_shapes = 4,
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
