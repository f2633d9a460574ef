/* The chapter runner: everything a chapter driver does that is not about its own problem.
 *
 * A chapter describes its problem (sizes, inputs, reference check, bytes or flops) and its
 * table of kernels in a `chapter` struct, and calls run_chapter() from main(). The runner
 * parses the arguments, opens the GPU, walks the table for each shape, checks and times each
 * row, prints the header and the table, and returns the exit code (0/1/2/3, docs/design.md, "Exit codes"). */
#ifndef RUNNER_H
#define RUNNER_H

#include "gpu.h"
#include "harness.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_DIMS MAX_SIZE_OPTIONS

/* One problem size: the chapter's size options in order, e.g. {n} or {m, n, k}. */
typedef struct {
    long d[MAX_DIMS];
} shape;

typedef enum {
    ROLE_STAGE,   /* a reference stage in kernels/; has an exercise twin when `exercise` is set */
    ROLE_LIBRARY, /* the vendor library (cuBLAS, CUB): the ratio column's denominator */
    ROLE_CEILING  /* a physical ceiling (cudaMemcpy): the percent column's denominator */
} row_role;

/* A launcher of any signature: each chapter casts it back to its own launcher type. */
typedef void (*any_fn)(void);

/* One row of a chapter's table. `launch` and `ex_launch` point to the chapter's own launcher
 * type; only the chapter's callbacks call them. */
typedef struct {
    kernel_info info;
    row_role role;
    int variant;             /* chapter-defined: which operation / data type this row computes */
    any_fn launch;           /* the stage's launcher (or the library call) */
    any_fn ex_launch;        /* the exercise's launcher, NULL if the stage has no exercise */
    const char *ceiling;     /* name of the row this row's percent column divides by, or NULL */
    const char *library;     /* name of the row this row's ratio column divides by, or NULL */
    /* What the row says for itself (positional initializers may leave these out: zero/NULL). */
    /* Can this row compute this shape? Writes why not (e.g. "M % 128 != 0") into why. NULL:
     * every shape the chapter's own supports() accepts. */
    bool (*supports)(const shape *s, char *why, size_t len);
    /* Dynamic shared memory per block the stage needs at least, in bytes (0: none beyond the
     * default 48 KiB). The runner skips the row on a GPU whose per-block opt-in limit is
     * smaller, with the numbers in the reason. */
    int smem_bytes;
} row_entry;

typedef enum { UNIT_GBPS, UNIT_TFLOPS } throughput_unit;

/* What setup() gets besides the shape. */
typedef struct {
    const gpu_report *gpu;
    uint64_t seed;
    /* --no-library (make sanitize-NN): library rows are skipped, so a chapter whose reference
     * is the library computes its reference another way (an fp64 product on the CPU). */
    bool library_off;
} setup_env;

typedef struct chapter {
    const char *name;      /* "01_elementwise": names the binary, TEST lines and results */
    const char *summary;   /* one paragraph for --help */
    int ndims;
    const char *dim_names[MAX_DIMS]; /* the size options: "n", or "m", "n", "k" */
    const char *dim_help[MAX_DIMS];
    shape default_shape;
    const shape *test_shapes;
    int ntest_shapes;
    int nquick_shapes;     /* the first nquick test shapes are small enough for --quick */
    const shape *bench_shapes;
    int nbench_shapes;
    throughput_unit unit;
    const char *ceiling_col;   /* heading of the percent column, e.g. "% memcpy", or NULL */
    const char *library_col;   /* heading of the ratio column, e.g. "x cuBLAS", or NULL */
    bool flush_l2;             /* flush the L2 before every timed launch */
    const row_entry *rows;
    int nrows;

    /* Allocate and fill what the shape needs. Return 0, or EXIT_BAD_USAGE with a message in
     * err when the shape does not fit in GPU memory. */
    int (*setup)(const shape *s, const setup_env *env, char *err, size_t errlen);
    void (*teardown)(void);
    /* Optional: what every row of the chapter needs (e.g. "K % 8 == 0"), checked before the
     * row's own supports(). Writes why not into why. Never dispatch on r->launch here: what a
     * single row needs goes in that row's own supports() and smem_bytes. */
    bool (*supports)(const row_entry *r, const shape *s, char *why, size_t len);
    /* Called before a checked launch: fill this row's inputs if needed and poison its output. */
    void (*prepare)(const row_entry *r, const shape *s);
    /* Launch the row (exercise = the ex_ twin). Returns LAUNCH_OK, LAUNCH_TODO, or
     * LAUNCH_UNSUPPORTED (the launcher's own launch_unsupported() call says why). */
    int (*launch)(const row_entry *r, bool exercise, const shape *s, cudaStream_t stream);
    /* Compare the row's output with the reference. Returns false when the row has nothing to
     * check (a ceiling row); otherwise fills m and *max_rel_l2 with the bound that applies. */
    bool (*check)(const row_entry *r, const shape *s, error_metrics *m, double *max_rel_l2);
    /* Bytes moved (UNIT_GBPS) or floating-point operations (UNIT_TFLOPS) of one launch. */
    double (*work)(const row_entry *r, const shape *s);
    /* Optional: a short label for the row's data type, e.g. "fp16", shown in its own column. */
    const char *(*dtype)(const row_entry *r);
    /* Only in a binary of several tables (run_chapters): this table's label, e.g. "quantize".
     * It names the table in the problem line and in --help, and its files: --save PREFIX
     * writes PREFIX_<table>.md and .csv, --plot F.svg writes F_<table>.svg. NULL in a binary
     * of one table. */
    const char *table;
    /* Optional: why a library row of this chapter can be less exact than the bound the rows
     * meet (a status `inexact`, see docs/design.md, "What the runner does with one row"); the
     * note below the table says it after the measured error. NULL: no cause known. */
    const char *inexact_cause;
} chapter;

int run_chapter(const chapter *ch, int argc, char **argv);

/* A binary of several tables, one chapter struct each (07: quantize in GB/s against memcpy,
 * the GEMMs in TFLOPS against cuBLASLt), all with the same `name` and each with its own
 * `table` label and units. One command line serves all of them:
 *   - the size options are the union of the tables' (in order of first appearance); a table
 *     reads its own and ignores the others. When any size is given, every table runs at the
 *     sizes given (its defaults for those not given), else at its own shapes of the mode;
 *   - --kernel NAME picks the tables that have such a row (kernel names are unique across the
 *     tables); no --kernel: every table;
 *   - --list, --sass-spec and the TEST lines cover every table; a table runs after the other
 *     in array order, under one GPU header. The exit code is the worst of the tables' (usage
 *     and no-GPU errors stop at once). */
int run_chapters(const chapter *const chs[], int n, int argc, char **argv);

/* A line for the notes below the current table (what the driver learnt at setup, such as an
 * error it measured, with its shape); printed to stderr when no table is being made (--test). */
void runner_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
