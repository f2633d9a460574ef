/* The host side of the harness, in C11: what every chapter driver uses.
 *
 *   exit codes, the kernel table entry, argument parsing, timing statistics,
 *   error metrics, the table printer, fp16/bf16/fp8 conversions, and the GPU report.
 *
 * Device helpers (fills, poisoning, L2 flush, event timing) are declared in gpu.h. */
#ifndef HARNESS_H
#define HARNESS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exit codes (docs/design.md, "Exit codes") ---------------------------------------------------------------- */
enum {
    EXIT_ALL_OK = 0,        /* every implemented kernel was correct */
    EXIT_KERNEL_FAILED = 1, /* a kernel gave a wrong answer or a CUDA error */
    EXIT_BAD_USAGE = 2,     /* bad option, unknown kernel, bad or too large size */
    EXIT_NO_GPU = 3         /* no usable GPU */
};

/* ---- one kernel, one table entry --------------------------------------------------------- */
/* What every launcher returns. A launcher never prints; CUDA errors are read by the caller.
 * LAUNCH_UNSUPPORTED: the launcher cannot run this shape or configuration on this GPU (a row
 * too wide for its registers, a cluster the GPU cannot place); it launched nothing, and the
 * table shows the row as a skip with the reason given to launch_unsupported(). */
enum { LAUNCH_OK = 0, LAUNCH_TODO = 1, LAUNCH_UNSUPPORTED = 2 };

/* For launchers: records why (printf-style) and returns LAUNCH_UNSUPPORTED, so that a launcher
 * says `return launch_unsupported("cols > %ld", max);`. */
int launch_unsupported(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The reason of the last launch_unsupported() call, then cleared ("" if none). */
const char *launch_unsupported_take(char *buf, size_t len);

/* The architecture a kernel needs. ARCH_SM80 kernels use mma.sync/cp.async (sm_80 and later);
 * ARCH_SM90A kernels use wgmma/TMA/setmaxnreg, which exist only on compute capability 9.0. */
typedef enum { ARCH_ANY = 0, ARCH_SM80 = 80, ARCH_SM90A = 90 } kernel_arch;

/* The part of a table entry that does not depend on the chapter's launcher signature.
 * Each chapter's entry embeds one of these first, then its predicate and launchers. */
typedef struct {
    const char *name;          /* what --kernel takes, e.g. "float4" */
    const char *description;   /* one line for --list and the README */
    kernel_arch arch;
    const char *sass_symbol;   /* a substring of the __global__ function's name, for cuobjdump */
    const char *sass_must;     /* SASS opcodes (prefixes) that must appear, space separated */
    const char *sass_must_not; /* SASS opcodes that must not appear, e.g. "LDL STL" */
} kernel_info;

/* Name of an exercise row: "ex_" + the stage's name. Returns buf. */
const char *exercise_name(const char *stage_name, char *buf, size_t len);

/* Why a row cannot run on this GPU, or NULL if it can. cc is major*10+minor. */
const char *arch_skip_reason(kernel_arch arch, int cc);

/* HARNESS_CC=NN (e.g. 86, 120): keep and skip rows as on a GPU of compute capability NN, to see
 * what a learner with that GPU gets; the rows that are kept still run on this GPU. Returns the
 * value, 0 when unset, -1 when not a compute capability. */
int arch_cc_override(const char *value);

/* One line per stage for the SASS test:
 * "chapter<TAB>name<TAB>arch<TAB>symbol<TAB>must<TAB>must_not" (arch: "sm_90a" or "all"). */
void print_sass_spec(FILE *f, const char *chapter, const kernel_info *info);

/* ---- arguments ------------------------------------------------------------------------------ */
#define MAX_SIZE_VALUES 32
#define MAX_SIZE_OPTIONS 4
#define MAX_KERNEL_ARGS 64

typedef enum { FORMAT_TEXT, FORMAT_MD, FORMAT_CSV } table_format;

typedef enum {
    MODE_RUN,      /* time and check the selected kernels (default) */
    MODE_CHECK,    /* check the learner's exercises at the test shapes */
    MODE_TEST,     /* check every stage and exercise at the test shapes, TEST lines for the suite */
    MODE_BENCH,    /* the chapter's benchmark sweep */
    MODE_LIST,     /* list the kernels */
    MODE_SASS_SPEC,/* print the SASS expectations */
    MODE_LAUNCHERS,/* each row's launcher function (make progress maps exercises to files) */
    MODE_HELP
} run_mode;

typedef struct {
    const char *name;               /* option name without dashes: "n", "m", "rows" */
    const char *help;
    long values[MAX_SIZE_VALUES];   /* comma-separated list on the command line */
    int count;                      /* 0: not given, use the chapter's default */
} size_option;

typedef struct {
    run_mode mode;
    size_option sizes[MAX_SIZE_OPTIONS];
    int nsizes;
    const char *kernels[MAX_KERNEL_ARGS];
    int nkernels;
    int iters;          /* timed launches per kernel (median reported) */
    int warmup;
    uint64_t seed;
    bool seed_given;
    bool quick;         /* --quick: only the small test shapes (for compute-sanitizer) */
    bool library_off;   /* --no-library: skip library rows (compute-sanitizer judges ours alone) */
    table_format format;
    const char *save;   /* --save PREFIX: also write PREFIX.md and PREFIX.csv */
    const char *plot;   /* --plot FILE.svg: also draw the table as a chart (plot.h) */
    const char *plot_from; /* --plot-from FILE.csv: draw a saved table instead of running */
} run_args;

/* size_names: the chapter's size options, e.g. {"n"} or {"m","n","k"}, with help strings.
 * Returns 0, or EXIT_BAD_USAGE with a message in err. */
int args_parse(run_args *a, int argc, char **argv, int nsizes, const char *const size_names[],
               const char *const size_help[], char *err, size_t errlen);

/* Parse one positive size: digits with an optional K, M or G suffix (powers of two) or a
 * power of two written 2^N. Returns false for zero, negative, non-numeric or overflowing input. */
bool parse_size(const char *text, long *out);

/* Every --kernel name must be one of names[] (or "ex_" + one of them when exercises exist).
 * On an unknown name writes a message listing the valid names and returns EXIT_BAD_USAGE. */
int args_check_kernels(const run_args *a, const char *const names[], int count,
                       bool exercises, char *err, size_t errlen);

/* Is this row selected by --kernel (all rows when none was given)? */
bool args_selects(const run_args *a, const char *name);

void print_usage(FILE *f, const char *prog, const char *chapter_help, const run_args *a);

/* ---- statistics ---------------------------------------------------------------------------- */
typedef struct {
    double median_ms, min_ms, max_ms, mean_ms;
    int count;
} time_stats;

/* Sorts ms[] in place. count == 0 gives all zeros. */
time_stats stats_compute(float *ms, int count);

/* ---- error metrics ------------------------------------------------------------------------- */
typedef struct {
    double sum_sq_diff, sum_sq_ref;
    double rel_l2;        /* ||out - ref|| / ||ref|| (|| out - ref || when ref is all zero) */
    double max_abs;       /* largest |out - ref| over finite outputs */
    long count;
    long nonfinite;       /* NaN or Inf in out where the reference is finite */
    long bad;             /* elements outside atol + rtol*|ref|, non-finite ones included */
    long first_bad;       /* index of the first bad element, -1 if none */
    double first_bad_out, first_bad_ref;
    double worst;         /* largest |out - ref| / (atol + rtol*|ref|) over finite outputs: how
                           * much of its bound the worst element used (above 1: bad) */
    long worst_at;        /* its index, -1 if none */
} error_metrics;

void metrics_init(error_metrics *m);

static inline void metrics_add(error_metrics *m, long i, double out, double ref, double atol,
                               double rtol) {
    m->count++;
    m->sum_sq_ref += ref * ref;
    bool bad;
    if (!isfinite(out)) {
        bad = isfinite(ref) || isnan(out) || out != ref;
        if (bad) m->nonfinite++;
    } else {
        double d = fabs(out - ref), tol = atol + rtol * fabs(ref);
        m->sum_sq_diff += d * d;
        if (d > m->max_abs) m->max_abs = d;
        bad = !(d <= tol);
        double used = tol > 0 ? d / tol : (d > 0 ? INFINITY : 0);
        if (used > m->worst) m->worst = used, m->worst_at = i;
    }
    if (bad) {
        if (m->first_bad < 0) {
            m->first_bad = i;
            m->first_bad_out = out;
            m->first_bad_ref = ref;
        }
        m->bad++;
    }
}

void metrics_finish(error_metrics *m);

/* Correct: no non-finite output, no element outside its tolerance, rel_l2 within bound. */
bool metrics_pass(const error_metrics *m, double max_rel_l2);

/* "rel 1.2e-07 at index 17: got nan, want 0.25" style message for a failure. */
void metrics_describe(const error_metrics *m, char *buf, size_t len);

/* ---- the table printer --------------------------------------------------------------------- */
#define TABLE_MAX_COLS 12
#define TABLE_CELL 64

typedef struct {
    int ncols;
    const char *headers[TABLE_MAX_COLS];
    bool right[TABLE_MAX_COLS];   /* right-align numeric columns in text output */
    int nrows, cap;
    char (*cells)[TABLE_MAX_COLS][TABLE_CELL];
} table;

void table_init(table *t, int ncols, const char *const headers[], const bool right[]);
/* Adds a row of ncols strings. Cells longer than TABLE_CELL-1 are cut. */
void table_add(table *t, const char *const cells[]);
void table_print(const table *t, FILE *f, table_format fmt);
void table_free(table *t);

/* ---- conversions --------------------------------------------------------------------------- */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);     /* round to nearest even, overflow to Inf, NaN kept */
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);    /* round to nearest even, NaN kept */
float e4m3_to_f32(uint8_t v);
uint8_t f32_to_e4m3(float f);     /* round to nearest even, saturate to +-448, NaN kept */

/* ---- the GPU ------------------------------------------------------------------------------- */
typedef struct {
    int device;
    int cc;                 /* compute capability, major*10 + minor */
    int rows_cc;            /* the one rows are kept or skipped by: cc, or HARNESS_CC */
    char name[256];
    int sms;
    int sm_clock_mhz, mem_clock_mhz, bus_width_bits;
    size_t l2_bytes, global_bytes, free_bytes;
    int smem_optin_bytes;   /* the most dynamic shared memory one block may ask for */
    char driver[64];        /* "580.159.04" from /proc/driver/nvidia/version, else the API version */
    int runtime_version, driver_api_version, cublas_version;
} gpu_report;

/* Opens device 0. Returns 0, or EXIT_NO_GPU with a message in err. */
int gpu_open(gpu_report *g, char *err, size_t errlen);
void gpu_print_header(const gpu_report *g, FILE *f, table_format fmt);

/* Does an allocation of `bytes` in total fit in the free GPU memory (with some headroom)? */
bool gpu_fits(const gpu_report *g, double bytes);

/* A seed from the clock, different every run. */
uint64_t fresh_seed(void);

/* Format helpers for table cells. */
void fmt_size(char *buf, size_t len, double bytes);    /* "256 MiB" */

#ifdef __cplusplus
}
#endif
#endif
