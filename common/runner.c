/* The chapter runner (see runner.h). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>

#include "runner.h"

#include <stdlib.h>

#include "plot.h"
#include "table_from.h"

static char g_unsupported[512];

int launch_unsupported(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_unsupported, sizeof g_unsupported, fmt, ap);
    va_end(ap);
    return LAUNCH_UNSUPPORTED;
}

const char *launch_unsupported_take(char *buf, size_t len) {
    snprintf(buf, len, "%s", g_unsupported[0] ? g_unsupported : "the launcher gave no reason");
    g_unsupported[0] = 0;
    return buf;
}

#define ERR_LEN 512
#define NOTE_LEN (ERR_LEN + 160)
#define MAX_SHAPES 64
#define MAX_TABLES 4

/* The notes of the table being made (mode_run, mode_check), for runner_note(); NULL otherwise. */
static char (*g_notes)[NOTE_LEN];
static int *g_nnotes, g_notes_cap;

void runner_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (g_notes) {
        if (*g_nnotes < g_notes_cap) vsnprintf(g_notes[(*g_nnotes)++], NOTE_LEN, fmt, ap);
    } else {
        fprintf(stderr, "note: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
}

static void notes_attach(char (*notes)[NOTE_LEN], int *n, int cap) {
    g_notes = notes, g_nnotes = n, g_notes_cap = cap;
}

/* "07_fp8_gemm" or, for one table of several, "07_fp8_gemm (quantize)". */
static const char *table_title(const chapter *ch, char *buf, size_t len) {
    if (!ch->table) return ch->name;
    snprintf(buf, len, "%s (%s)", ch->name, ch->table);
    return buf;
}

/* PREFIX + EXT, or PREFIX_<table> + EXT for one table of several. */
static void table_path(char *buf, size_t len, const char *prefix, const chapter *ch,
                       const char *ext) {
    snprintf(buf, len, "%s%s%s%s", prefix, ch->table ? "_" : "", ch->table ? ch->table : "", ext);
}

/* --plot F.svg: F.svg, or F_<table>.svg for one table of several. */
static void plot_path(char *buf, size_t len, const char *plot, const chapter *ch) {
    const size_t n = strlen(plot);
    const bool svg = n >= 4 && !strcmp(plot + n - 4, ".svg");
    if (!ch->table) snprintf(buf, len, "%s", plot);
    else snprintf(buf, len, "%.*s_%s%s", (int)(svg ? n - 4 : n), plot, ch->table, svg ? ".svg" : "");
}

typedef struct {
    const char *name;
    double throughput;
} measured;

/* Throughputs of the rows run so far at the current shape, for the ratio columns. */
static measured g_measured[256];
static int g_nmeasured;

static void remember(const char *name, double throughput) {
    if (g_nmeasured < (int)(sizeof g_measured / sizeof g_measured[0]))
        g_measured[g_nmeasured++] = (measured){name, throughput};
}

static double recall(const char *name) {
    if (!name) return 0;
    for (int i = 0; i < g_nmeasured; i++)
        if (!strcmp(g_measured[i].name, name)) return g_measured[i].throughput;
    return 0;
}

static void shape_label(const chapter *ch, const shape *s, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = 0;
    for (int d = 0; d < ch->ndims && off < len; d++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", d ? "x" : "", s->d[d]);
}

static void shape_heading(const chapter *ch, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = 0;
    for (int d = 0; d < ch->ndims && off < len; d++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", d ? "x" : "", ch->dim_names[d]);
}

/* Shapes from the command line: each size option is a list; lists of length 1 broadcast,
 * longer lists zip together (--m 1024,2048 --n 1024,2048 --k 1024,2048 is two shapes). */
static int shapes_from_args(const chapter *ch, const run_args *a, shape *out, int *count,
                            char *err, size_t errlen) {
    int len = 1;
    for (int d = 0; d < ch->ndims; d++) {
        int c = a->sizes[d].count;
        if (c > 1) {
            if (len > 1 && c != len) {
                snprintf(err, errlen,
                         "size lists must have the same length (or one value): --%s has %d",
                         ch->dim_names[d], c);
                return EXIT_BAD_USAGE;
            }
            len = c;
        }
    }
    for (int i = 0; i < len; i++) {
        for (int d = 0; d < ch->ndims; d++) {
            const size_option *so = &a->sizes[d];
            out[i].d[d] = so->count == 0 ? ch->default_shape.d[d]
                                         : so->values[so->count == 1 ? 0 : i];
        }
    }
    *count = len;
    return 0;
}

static bool any_size_given(const chapter *ch, const run_args *a) {
    for (int d = 0; d < ch->ndims; d++)
        if (a->sizes[d].count) return true;
    return false;
}

static const char *row_name(const row_entry *r, bool exercise, char *buf, size_t len) {
    return exercise ? exercise_name(r->info.name, buf, len) : r->info.name;
}

/* The row, or its exercise twin, is selected by --kernel. */
static bool selected(const run_args *a, const row_entry *r, bool exercise) {
    char ex[128];
    return args_selects(a, row_name(r, exercise, ex, sizeof ex));
}

/* A baseline row (library, ceiling) runs when --kernel names it, or when a selected row (or its
 * exercise) divides by it; the others are left out, with their setup (06's fp16 problem). */
static bool baseline_wanted(const chapter *ch, const run_args *a, const row_entry *b) {
    if (selected(a, b, false)) return true;
    for (int i = 0; i < ch->nrows; i++) {
        const row_entry *r = &ch->rows[i];
        if (!selected(a, r, false) && !(r->ex_launch && selected(a, r, true))) continue;
        if ((r->library && !strcmp(r->library, b->info.name)) ||
            (r->ceiling && !strcmp(r->ceiling, b->info.name)))
            return true;
    }
    return false;
}

/* ST_INEXACT: a library row whose product is less exact than the bound our rows meet, but
 * not wrong (every entry finite, rel L2 within LIBRARY_WRONG_REL_L2): a fact the table reports
 * about the library, timed like any other row, and never a failure of the run. */
typedef enum { ST_OK, ST_FAIL, ST_TODO, ST_SKIP, ST_INEXACT } row_status;
#define LIBRARY_WRONG_REL_L2 1e-2

typedef struct {
    row_status status;
    char text[96];       /* the status cell */
    char detail[ERR_LEN];/* why it failed or was skipped */
    error_metrics m;
    bool checked;
    time_stats t;
    bool timed;
} row_result;

/* A CUDA error that poisons the context (illegal address, ...) ends the run: nothing after it
 * could be trusted. */
static void stop_if_context_broken(const char *what) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "%s left the GPU in an error state (%s): stopping.\n", what,
                cudaGetErrorString(e));
        exit(EXIT_KERNEL_FAILED);
    }
}

typedef struct {
    const chapter *ch;
    const row_entry *r;
    bool exercise;
    const shape *s;
} launch_ctx;

static int launch_thunk(void *p, cudaStream_t stream) {
    launch_ctx *c = p;
    return c->ch->launch(c->r, c->exercise, c->s, stream);
}

/* Check one row at one shape and, if time_it, time it. */
static row_result run_row(const chapter *ch, const row_entry *r, bool exercise, const shape *s,
                          const gpu_report *g, const run_args *a, bool time_it) {
    row_result res;
    memset(&res, 0, sizeof res);
    char name[128];
    row_name(r, exercise, name, sizeof name);
    const char *skip = arch_skip_reason(r->info.arch, g->rows_cc);
    if (skip) {
        res.status = ST_SKIP;
        snprintf(res.text, sizeof res.text, "%s", skip);
        return res;
    }
    if (a->library_off && r->role == ROLE_LIBRARY) {
        res.status = ST_SKIP;
        snprintf(res.text, sizeof res.text, "skip: --no-library");
        snprintf(res.detail, sizeof res.detail,
                 "library rows are left out of this run (the rows are checked against the "
                 "exact product all the same)");
        return res;
    }
    if (r->smem_bytes > g->smem_optin_bytes) {
        res.status = ST_SKIP;
        snprintf(res.text, sizeof res.text, "skip: smem");
        snprintf(res.detail, sizeof res.detail,
                 "needs %d KiB of shared memory per block; this GPU allows %d KiB",
                 r->smem_bytes / 1024, g->smem_optin_bytes / 1024);
        return res;
    }
    char why[ERR_LEN] = "";
    if ((ch->supports && !ch->supports(r, s, why, sizeof why)) ||
        (r->supports && !r->supports(s, why, sizeof why))) {
        res.status = ST_SKIP;
        snprintf(res.text, sizeof res.text, "skip: shape");
        snprintf(res.detail, sizeof res.detail, "%s", why);
        return res;
    }
    launch_ctx ctx = {ch, r, exercise, s};
    char err[ERR_LEN] = "";
    if (ch->prepare) ch->prepare(r, s);
    int rc = run_once(launch_thunk, &ctx, err, sizeof err);
    if (rc == LAUNCH_UNSUPPORTED) {
        res.status = ST_SKIP;
        snprintf(res.text, sizeof res.text, "skip: launcher");
        launch_unsupported_take(res.detail, sizeof res.detail);
        return res;
    }
    if (rc == LAUNCH_TODO) {
        res.status = ST_TODO;
        snprintf(res.text, sizeof res.text, "TODO");
        snprintf(res.detail, sizeof res.detail, "not implemented yet: exercises/ of %s", ch->name);
        return res;
    }
    if (rc != LAUNCH_OK) {
        res.status = ST_FAIL;
        snprintf(res.text, sizeof res.text, "FAIL");
        snprintf(res.detail, sizeof res.detail, "CUDA error: %s", err);
        stop_if_context_broken(name);
        return res;
    }
    double bound = 0;
    res.checked = ch->check(r, s, &res.m, &bound);
    res.status = ST_OK;
    snprintf(res.text, sizeof res.text, "ok");
    if (res.checked && !metrics_pass(&res.m, bound)) {
        char d[ERR_LEN];
        metrics_describe(&res.m, d, sizeof d);
        if (r->role == ROLE_LIBRARY && res.m.count > 0 && res.m.nonfinite == 0 &&
            res.m.rel_l2 <= LIBRARY_WRONG_REL_L2) {
            res.status = ST_INEXACT;
            snprintf(res.text, sizeof res.text, "inexact");
            snprintf(res.detail, sizeof res.detail,
                     "%ld of %ld entries farther from the exact product than the rows' bound "
                     "allows (worst %.0fx it; first at index %ld: %.6g, exact %.6g; rel L2 "
                     "%.1e)%s%s. A fact about the library, not a failure: every row is checked "
                     "against the exact product",
                     res.m.bad, res.m.count, res.m.worst, res.m.first_bad, res.m.first_bad_out,
                     res.m.first_bad_ref, res.m.rel_l2, ch->inexact_cause ? ": " : "",
                     ch->inexact_cause ? ch->inexact_cause : "");
        } else {
            res.status = ST_FAIL;
            snprintf(res.text, sizeof res.text, "FAIL");
            snprintf(res.detail, sizeof res.detail, "%s (bound: rel L2 %.1e)", d, bound);
            return res;
        }
    }
    if (time_it) {
        float *ms = malloc(sizeof(float) * (size_t)a->iters);
        if (!ms) {
            fprintf(stderr, "out of host memory\n");
            exit(EXIT_KERNEL_FAILED);
        }
        int count = 0;
        rc = time_launches(launch_thunk, &ctx, a->warmup, a->iters, ch->flush_l2, ms, &count, err,
                           sizeof err);
        if (rc == LAUNCH_OK) {
            res.t = stats_compute(ms, count);
            res.timed = true;
            if (count < a->iters)
                snprintf(res.detail, sizeof res.detail, "slow: median of %d launches", count);
        } else {
            res.status = ST_FAIL;
            snprintf(res.text, sizeof res.text, "FAIL");
            snprintf(res.detail, sizeof res.detail, "CUDA error while timing: %s", err);
            stop_if_context_broken(name);
        }
        free(ms);
    }
    return res;
}

static void fmt_num(char *buf, size_t len, double v) {
    if (v >= 1000) snprintf(buf, len, "%.0f", v);
    else if (v >= 100) snprintf(buf, len, "%.1f", v);
    else if (v >= 10) snprintf(buf, len, "%.2f", v);
    else snprintf(buf, len, "%.3f", v);
}

static double throughput(const chapter *ch, const row_entry *r, const shape *s, double ms) {
    double w = ch->work(r, s);
    return ch->unit == UNIT_GBPS ? w / (ms * 1e6) : w / (ms * 1e9);
}

static void print_notes(FILE *f, char (*notes)[NOTE_LEN], int n) {
    if (n) fprintf(f, "\n");
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", notes[i]);
}

static void print_problem(const chapter *ch, const run_args *a, FILE *f, table_format fmt) {
    char title[128];
    fprintf(f, "%s%s: seed %llu, median of %d timed launches after %d warm-up%s%s\n",
            fmt == FORMAT_CSV ? "# " : "", table_title(ch, title, sizeof title),
            (unsigned long long)a->seed, a->iters,
            a->warmup, ch->flush_l2 ? ", L2 flushed before each" : "",
            fmt == FORMAT_MD ? "  " : "");
    if (a->library_off)
        fprintf(f, "%s--no-library: library rows left out%s\n",
                fmt == FORMAT_CSV ? "# " : "", fmt == FORMAT_MD ? "  " : "");
}

/* The timed table: every selected row (stages, then exercises) at every shape. */
static int mode_run(const chapter *ch, const run_args *a, const gpu_report *g, const shape *shapes,
                    int nshapes) {
    const setup_env env = {g, a->seed, a->library_off};
    const char *headers[TABLE_MAX_COLS];
    bool right[TABLE_MAX_COLS];
    int nc = 0;
    char shape_head[64];
    shape_heading(ch, shape_head, sizeof shape_head);
    headers[nc] = shape_head, right[nc++] = true;
    headers[nc] = "kernel", right[nc++] = false;
    if (ch->dtype) headers[nc] = "dtype", right[nc++] = false;
    headers[nc] = "time (us)", right[nc++] = true;
    headers[nc] = ch->unit == UNIT_GBPS ? "GB/s" : "TFLOPS", right[nc++] = true;
    if (ch->ceiling_col) headers[nc] = ch->ceiling_col, right[nc++] = true;
    if (ch->library_col) headers[nc] = ch->library_col, right[nc++] = true;
    headers[nc] = "rel err", right[nc++] = true;
    headers[nc] = "status", right[nc++] = false;
    table t;
    table_init(&t, nc, headers, right);

    int notes_cap = 256, nnotes = 0;
    char (*notes)[NOTE_LEN] = malloc(sizeof *notes * (size_t)notes_cap);
    if (!notes) {
        fprintf(stderr, "out of host memory\n");
        exit(EXIT_KERNEL_FAILED);
    }
    notes_attach(notes, &nnotes, notes_cap);
    bool failed = false;
    char err[ERR_LEN];

    for (int si = 0; si < nshapes; si++) {
        const shape *s = &shapes[si];
        char label[64];
        shape_label(ch, s, label, sizeof label);
        if (ch->setup(s, &env, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", ch->name, err);
            notes_attach(NULL, NULL, 0);
            table_free(&t);
            free(notes);
            return EXIT_BAD_USAGE;
        }
        g_nmeasured = 0;
        /* Baselines (ceilings, libraries) first, so every later row has its denominators. */
        for (int pass = 0; pass < 3; pass++) {
            for (int i = 0; i < ch->nrows; i++) {
                const row_entry *r = &ch->rows[i];
                bool exercise = pass == 2;
                if (pass == 0 && r->role == ROLE_STAGE) continue;
                if (pass >= 1 && r->role != ROLE_STAGE) continue;
                if (exercise && !r->ex_launch) continue;
                bool want = pass == 0 ? a->nkernels == 0 || baseline_wanted(ch, a, r)
                                      : selected(a, r, exercise);
                if (!want) continue;
                char buf[128];
                const char *name = row_name(r, exercise, buf, sizeof buf);
                row_result res = run_row(ch, r, exercise, s, g, a, true);
                if (res.status == ST_FAIL) failed = true;
                char c_time[32] = "-", c_tp[32] = "-", c_ceil[32] = "-", c_lib[32] = "-",
                     c_err[32] = "-";
                if (res.timed) {
                    double tp = throughput(ch, r, s, res.t.median_ms);
                    remember(r->info.name, tp);
                    fmt_num(c_time, sizeof c_time, res.t.median_ms * 1e3);
                    fmt_num(c_tp, sizeof c_tp, tp);
                    double ceil = recall(r->ceiling), lib = recall(r->library);
                    if (ceil > 0) snprintf(c_ceil, sizeof c_ceil, "%.1f%%", 100 * tp / ceil);
                    if (lib > 0) snprintf(c_lib, sizeof c_lib, "%.3f", tp / lib);
                }
                if (res.checked && res.status != ST_TODO)
                    snprintf(c_err, sizeof c_err, "%.1e", res.m.rel_l2);
                const char *cells[TABLE_MAX_COLS];
                int c = 0;
                cells[c++] = label;
                cells[c++] = name;
                if (ch->dtype) cells[c++] = ch->dtype(r);
                cells[c++] = c_time;
                cells[c++] = c_tp;
                if (ch->ceiling_col) cells[c++] = c_ceil;
                if (ch->library_col) cells[c++] = c_lib;
                cells[c++] = c_err;
                cells[c++] = res.text;
                table_add(&t, cells);
                if (res.detail[0] && res.status != ST_TODO && nnotes < notes_cap)
                    snprintf(notes[nnotes++], sizeof *notes, "%s %s at %s: %s", res.text, name,
                             label, res.detail);
            }
        }
        ch->teardown();
    }
    notes_attach(NULL, NULL, 0);

    table_print(&t, stdout, a->format);
    print_notes(stdout, notes, nnotes);
    if (a->save) {
        char path[1024];
        table_path(path, sizeof path, a->save, ch, ".md");
        FILE *f = fopen(path, "w");
        if (f) {
            gpu_print_header(g, f, FORMAT_MD);
            print_problem(ch, a, f, FORMAT_MD);
            fprintf(f, "\n");
            table_print(&t, f, FORMAT_MD);
            print_notes(f, notes, nnotes);
            fclose(f);
        } else {
            fprintf(stderr, "cannot write %s\n", path);
        }
        table_path(path, sizeof path, a->save, ch, ".csv");
        f = fopen(path, "w");
        if (f) {
            gpu_print_header(g, f, FORMAT_CSV);
            print_problem(ch, a, f, FORMAT_CSV);
            table_print(&t, f, FORMAT_CSV);
            fclose(f);
        } else {
            fprintf(stderr, "cannot write %s\n", path);
        }
    }
    if (a->plot) {
        /* the chart is drawn from the CSV text, the same path as --plot-from */
        FILE *f = tmpfile();
        char *csv = NULL;
        long len = 0;
        if (f) {
            gpu_print_header(g, f, FORMAT_CSV);
            print_problem(ch, a, f, FORMAT_CSV);
            table_print(&t, f, FORMAT_CSV);
            len = ftell(f);
            csv = len > 0 ? malloc((size_t)len) : NULL;
            rewind(f);
            if (csv && fread(csv, 1, (size_t)len, f) != (size_t)len) len = 0;
            fclose(f);
        }
        char svg[1024], title[128];
        plot_path(svg, sizeof svg, a->plot, ch);
        FILE *out = csv && len > 0 ? fopen(svg, "w") : NULL;
        char perr[256] = "cannot write the chart";
        if (!out ||
            plot_csv(csv, (size_t)len, table_title(ch, title, sizeof title), out, perr, sizeof perr) != 0)
            fprintf(stderr, "%s: --plot %s: %s\n", ch->name, svg, perr);
        if (out) fclose(out);
        free(csv);
    }
    table_free(&t);
    free(notes);
    return failed ? EXIT_KERNEL_FAILED : EXIT_ALL_OK;
}

/* make check-NN: the learner's exercises at the test shapes, timed next to the stage. */
static int mode_check(const chapter *ch, const run_args *a, const gpu_report *g,
                      const shape *shapes, int nshapes) {
    const setup_env env = {g, a->seed, a->library_off};
    char shape_head[64];
    shape_heading(ch, shape_head, sizeof shape_head);
    const char *headers[] = {shape_head, "exercise", "status", "rel err", "time (us)",
                             "stage (us)"};
    const bool right[] = {true, false, false, true, true, true};
    table t;
    table_init(&t, 6, headers, right);
    bool failed = false;
    int todo = 0, pass = 0, fail = 0;
    char err[ERR_LEN];
    int notes_cap = 256, nnotes = 0;
    char (*notes)[NOTE_LEN] = malloc(sizeof *notes * (size_t)notes_cap);
    if (!notes) {
        fprintf(stderr, "out of host memory\n");
        exit(EXIT_KERNEL_FAILED);
    }
    notes_attach(notes, &nnotes, notes_cap);
    for (int si = 0; si < nshapes; si++) {
        const shape *s = &shapes[si];
        char label[64];
        shape_label(ch, s, label, sizeof label);
        if (ch->setup(s, &env, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", ch->name, err);
            notes_attach(NULL, NULL, 0);
            table_free(&t);
            free(notes);
            return EXIT_BAD_USAGE;
        }
        for (int i = 0; i < ch->nrows; i++) {
            const row_entry *r = &ch->rows[i];
            if (!r->ex_launch) continue;
            if (!selected(a, r, true) && !selected(a, r, false)) continue;
            char name[128];
            row_name(r, true, name, sizeof name);
            row_result ex = run_row(ch, r, true, s, g, a, true);
            row_result st = run_row(ch, r, false, s, g, a, ex.status == ST_OK);
            const char *status = ex.status == ST_OK     ? "PASS"
                                 : ex.status == ST_FAIL ? "FAIL"
                                 : ex.status == ST_TODO ? "TODO"
                                                        : ex.text;
            if (ex.status == ST_FAIL) failed = true, fail++;
            if (ex.status == ST_TODO) todo++;
            if (ex.status == ST_OK) pass++;
            char c_err[32] = "-", c_t[32] = "-", c_st[32] = "-";
            if (ex.checked) snprintf(c_err, sizeof c_err, "%.1e", ex.m.rel_l2);
            if (ex.timed) fmt_num(c_t, sizeof c_t, ex.t.median_ms * 1e3);
            if (st.timed) fmt_num(c_st, sizeof c_st, st.t.median_ms * 1e3);
            const char *cells[] = {label, name, status, c_err, c_t, c_st};
            table_add(&t, cells);
            if (ex.status == ST_FAIL && nnotes < notes_cap)
                snprintf(notes[nnotes++], sizeof *notes, "FAIL %s at %s: %s", name, label,
                         ex.detail);
        }
        ch->teardown();
    }
    notes_attach(NULL, NULL, 0);
    table_print(&t, stdout, a->format);
    print_notes(stdout, notes, nnotes);
    printf("\nexercises: %d PASS, %d FAIL, %d TODO (the stage column times the reference)\n",
           pass, fail, todo);
    table_free(&t);
    free(notes);
    return failed ? EXIT_KERNEL_FAILED : EXIT_ALL_OK;
}

/* make test: TEST lines, one per row and shape, read by tests/run.sh. Exercises that say
 * LAUNCH_TODO report TODO. */
static int mode_test(const chapter *ch, const run_args *a, const gpu_report *g,
                     const shape *shapes, int nshapes) {
    const setup_env env = {g, a->seed, a->library_off};
    bool failed = false;
    char err[ERR_LEN];
    for (int si = 0; si < nshapes; si++) {
        const shape *s = &shapes[si];
        char label[64];
        shape_label(ch, s, label, sizeof label);
        if (ch->setup(s, &env, err, sizeof err)) {
            printf("TEST FAIL %s setup %s %s\n", ch->name, label, err);
            return EXIT_KERNEL_FAILED;
        }
        for (int i = 0; i < ch->nrows; i++) {
            const row_entry *r = &ch->rows[i];
            for (int ex = 0; ex < 2; ex++) {
                if (ex && !r->ex_launch) continue;
                if (!selected(a, r, ex)) continue;
                char buf[128];
                const char *name = row_name(r, ex, buf, sizeof buf);
                row_result res = run_row(ch, r, ex, s, g, a, false);
                const char *word = res.status == ST_OK       ? "PASS"
                                   : res.status == ST_FAIL   ? "FAIL"
                                   : res.status == ST_TODO   ? "TODO"
                                   : res.status == ST_INEXACT ? "INEXACT"
                                                             : "SKIP";
                if (res.status == ST_FAIL) failed = true;
                char d[ERR_LEN] = "";
                if (res.status == ST_OK && res.checked)
                    snprintf(d, sizeof d, "rel L2 %.1e, worst entry at %.2f of its bound",
                             res.m.rel_l2, res.m.worst);
                else if (res.status == ST_SKIP)
                    snprintf(d, sizeof d, "%s%s%s", res.text, res.detail[0] ? ": " : "",
                             res.detail);
                else
                    snprintf(d, sizeof d, "%s", res.detail);
                printf("TEST %s %s %s %s %s\n", word, ch->name, name, label, d);
                fflush(stdout);
            }
        }
        ch->teardown();
    }
    return failed ? EXIT_KERNEL_FAILED : EXIT_ALL_OK;
}

/* Does table ch have a row, or an exercise twin, of this name? */
static bool table_has(const chapter *ch, const char *name) {
    for (int i = 0; i < ch->nrows; i++) {
        const row_entry *r = &ch->rows[i];
        char ex[128];
        if (!strcmp(name, r->info.name) ||
            (r->ex_launch && !strcmp(name, exercise_name(r->info.name, ex, sizeof ex))))
            return true;
    }
    return false;
}

static const char *role_word(const row_entry *r) {
    return r->role == ROLE_STAGE ? "stage" : r->role == ROLE_LIBRARY ? "library" : "ceiling";
}

static const char *arch_word(const row_entry *r) {
    return r->info.arch == ARCH_SM90A ? "sm_90a" : r->info.arch == ARCH_SM80 ? "sm_80" : "any";
}

/* What the driver itself must get right in a binary of several tables: a label on every table
 * and row names that tell the tables apart. A mistake here is the driver's, not the user's. */
static bool tables_consistent(const chapter *const chs[], int n) {
    if (n < 1 || n > MAX_TABLES) {
        fprintf(stderr, "run_chapters: %d tables; a binary has 1 to %d\n", n, MAX_TABLES);
        return false;
    }
    for (int t = 0; t < n && n > 1; t++) {
        if (!chs[t]->table) {
            fprintf(stderr, "%s: table %d has no `table` label (every table of several needs one)\n",
                    chs[t]->name, t);
            return false;
        }
        for (int i = 0; i < chs[t]->nrows; i++)
            for (int u = t + 1; u < n; u++)
                if (table_has(chs[u], chs[t]->rows[i].info.name)) {
                    fprintf(stderr, "%s: row '%s' is in the %s and the %s table: --kernel could "
                                    "not tell which\n",
                            chs[t]->name, chs[t]->rows[i].info.name, chs[t]->table, chs[u]->table);
                    return false;
                }
    }
    return true;
}

int run_chapters(const chapter *const chs[], int n, int argc, char **argv) {
    if (!tables_consistent(chs, n)) return EXIT_BAD_USAGE;
    const char *prog = chs[0]->name;
    char err[2048];
    int rc;

    /* --table-from: a README table from saved CSVs (table_from.h); no GPU, nothing run */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--table-from", 12) && (!argv[i][12] || argv[i][12] == '=')) {
            rc = table_from_main(argc, argv, stdout, err, sizeof err);
            if (rc) fprintf(stderr, "%s: %s\n", prog, err);
            return rc;
        }

    /* The size options: the union of the tables', each with its tables' help. */
    const char *dims[MAX_SIZE_OPTIONS];
    static char help_text[MAX_SIZE_OPTIONS][512];
    const char *helps[MAX_SIZE_OPTIONS];
    int ndims = 0;
    for (int t = 0; t < n; t++) {
        const chapter *ch = chs[t];
        for (int d = 0; d < ch->ndims; d++) {
            int k = 0;
            while (k < ndims && strcmp(dims[k], ch->dim_names[d])) k++;
            if (k == ndims) {
                if (ndims == MAX_SIZE_OPTIONS) {
                    fprintf(stderr, "%s: more than %d size options across the tables\n", prog,
                            MAX_SIZE_OPTIONS);
                    return EXIT_BAD_USAGE;
                }
                dims[ndims] = ch->dim_names[d];
                help_text[ndims][0] = 0;
                helps[ndims] = help_text[ndims];
                ndims++;
            }
            const size_t off = strlen(help_text[k]);
            if (n == 1)
                snprintf(help_text[k], sizeof help_text[k], "%s", ch->dim_help[d]);
            else
                snprintf(help_text[k] + off, sizeof help_text[k] - off, "%s%s: %s",
                         off ? "; " : "", ch->table, ch->dim_help[d]);
        }
    }
    run_args a;
    rc = args_parse(&a, argc, argv, ndims, dims, helps, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    if (a.mode == MODE_HELP) {
        char summary[4096];
        size_t off = 0;
        summary[0] = 0;
        for (int t = 0; t < n && off < sizeof summary; t++)
            off += (size_t)snprintf(summary + off, sizeof summary - off, "%s%s", t ? "\n\n" : "",
                                    chs[t]->summary);
        if (n > 1 && off < sizeof summary)
            snprintf(summary + off, sizeof summary - off,
                     "\n\nThe tables run one after the other (--kernel NAME: the one with that row);\n"
                     "--save PREFIX writes PREFIX_<table>.md and .csv, --plot F.svg F_<table>.svg.");
        print_usage(stdout, argv[0], summary, &a);
        return EXIT_ALL_OK;
    }
    if (a.plot_from) { /* a saved table to a chart: no GPU, nothing run */
        if (!a.plot) {
            fprintf(stderr, "%s: --plot-from needs --plot FILE.svg\n", prog);
            return EXIT_BAD_USAGE;
        }
        /* one table: its name; of several, the title the CSV's run line gives */
        if (plot_csv_file(a.plot_from, a.plot, n == 1 ? prog : NULL, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, a.plot_from, err);
            return EXIT_BAD_USAGE;
        }
        return EXIT_ALL_OK;
    }
    if (a.plot && (a.mode == MODE_TEST || a.mode == MODE_CHECK || a.mode == MODE_LIST ||
                   a.mode == MODE_SASS_SPEC)) {
        fprintf(stderr, "%s: --plot draws a timed table: use it without --test, --check, --list\n",
                prog);
        return EXIT_BAD_USAGE;
    }
    if (a.mode == MODE_LIST) {
        for (int t = 0; t < n; t++)
            for (int i = 0; i < chs[t]->nrows; i++) {
                const row_entry *r = &chs[t]->rows[i];
                printf("%-22s %-8s %-7s %s\n", r->info.name, role_word(r), arch_word(r),
                       r->info.description);
            }
        for (int t = 0; t < n; t++)
            for (int i = 0; i < chs[t]->nrows; i++) {
                const row_entry *r = &chs[t]->rows[i];
                char ex[128];
                if (r->ex_launch)
                    printf("%-22s %-8s %-7s your version of %s\n",
                           exercise_name(r->info.name, ex, sizeof ex), "exercise", arch_word(r),
                           r->info.name);
            }
        return EXIT_ALL_OK;
    }
    if (a.mode == MODE_LAUNCHERS) {
        /* ROW<TAB>FUNCTION for every stage and exercise row: the C name of the function it calls
         * (ex_add_f32_naive for ex_naive), found in the binary's dynamic symbols (chapter
         * binaries are linked with --export-dynamic for this); "-" where none is found. make
         * progress finds an exercise's file by the function that file defines. */
        for (int t = 0; t < n; t++)
            for (int i = 0; i < chs[t]->nrows; i++) {
                const row_entry *r = &chs[t]->rows[i];
                for (int ex = 0; ex < 2; ex++) {
                    const any_fn fn = ex ? r->ex_launch : r->launch;
                    if (!fn || (ex == 0 && r->role != ROLE_STAGE)) continue;
                    Dl_info info;
                    const bool named = dladdr((const void *)fn, &info) && info.dli_sname &&
                                       info.dli_saddr == (void *)fn;
                    char name[128];
                    printf("%s\t%s\n", ex ? exercise_name(r->info.name, name, sizeof name)
                                           : r->info.name,
                           named ? info.dli_sname : "-");
                }
            }
        return EXIT_ALL_OK;
    }
    if (a.mode == MODE_SASS_SPEC) {
        for (int t = 0; t < n; t++)
            for (int i = 0; i < chs[t]->nrows; i++)
                if (chs[t]->rows[i].role == ROLE_STAGE && chs[t]->rows[i].info.sass_symbol)
                    print_sass_spec(stdout, chs[t]->name, &chs[t]->rows[i].info);
        return EXIT_ALL_OK;
    }
    const char *names[256];
    int nnames = 0;
    bool any_ex = false;
    for (int t = 0; t < n; t++)
        for (int i = 0; i < chs[t]->nrows && nnames < 256; i++) {
            names[nnames++] = chs[t]->rows[i].info.name;
            any_ex |= chs[t]->rows[i].ex_launch != NULL;
        }
    rc = args_check_kernels(&a, names, nnames, any_ex, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }

    /* Each table's own arguments (its size options in its order, its --kernel names) and shapes. */
    static run_args ta[MAX_TABLES];
    static shape shapes[MAX_TABLES][MAX_SHAPES];
    int nshapes[MAX_TABLES];
    bool runs[MAX_TABLES];
    bool sizes_given = false;
    for (int k = 0; k < ndims; k++) sizes_given |= a.sizes[k].count > 0;
    for (int t = 0; t < n; t++) {
        const chapter *ch = chs[t];
        ta[t] = a;
        for (int d = 0; d < ch->ndims; d++)
            for (int k = 0; k < ndims; k++)
                if (!strcmp(dims[k], ch->dim_names[d])) ta[t].sizes[d] = a.sizes[k];
        ta[t].nsizes = ch->ndims;
        ta[t].nkernels = 0;
        for (int k = 0; k < a.nkernels; k++)
            if (table_has(ch, a.kernels[k])) ta[t].kernels[ta[t].nkernels++] = a.kernels[k];
        runs[t] = a.nkernels == 0 || ta[t].nkernels > 0;
        if (!runs[t]) continue;
        nshapes[t] = 0;
        if ((a.mode == MODE_TEST || a.mode == MODE_CHECK) && !sizes_given) {
            nshapes[t] = a.quick ? ch->nquick_shapes : ch->ntest_shapes;
            memcpy(shapes[t], ch->test_shapes, sizeof(shape) * (size_t)nshapes[t]);
        } else if (a.mode == MODE_BENCH && !sizes_given) {
            nshapes[t] = ch->nbench_shapes;
            memcpy(shapes[t], ch->bench_shapes, sizeof(shape) * (size_t)nshapes[t]);
        } else if ((rc = shapes_from_args(ch, &ta[t], shapes[t], &nshapes[t], err, sizeof err))) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return rc;
        }
    }

    gpu_report g;
    rc = gpu_open(&g, err, sizeof err);
    if (rc) {
        if (a.mode == MODE_TEST) {
            /* Every test that would have run is reported as skipped, never as passed. */
            for (int t = 0; t < n; t++) {
                if (!runs[t]) continue;
                const chapter *ch = chs[t];
                for (int si = 0; si < nshapes[t]; si++) {
                    char label[64];
                    shape_label(ch, &shapes[t][si], label, sizeof label);
                    for (int i = 0; i < ch->nrows; i++)
                        for (int ex = 0; ex < 2; ex++) {
                            const row_entry *r = &ch->rows[i];
                            if ((ex && !r->ex_launch) || !selected(&ta[t], r, ex)) continue;
                            char name[128];
                            printf("TEST SKIP %s %s %s no GPU\n", ch->name,
                                   row_name(r, ex, name, sizeof name), label);
                        }
                }
            }
        }
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    if (a.mode != MODE_TEST) gpu_print_header(&g, stdout, a.format);
    int worst = EXIT_ALL_OK;
    bool first = true;
    for (int t = 0; t < n; t++) {
        if (!runs[t]) continue;
        if (a.mode != MODE_TEST) {
            if (!first && a.format != FORMAT_CSV) printf("\n");
            print_problem(chs[t], &ta[t], stdout, a.format);
            if (a.format != FORMAT_CSV) printf("\n");
        }
        first = false;
        switch (a.mode) {
        case MODE_CHECK: rc = mode_check(chs[t], &ta[t], &g, shapes[t], nshapes[t]); break;
        case MODE_TEST: rc = mode_test(chs[t], &ta[t], &g, shapes[t], nshapes[t]); break;
        default: rc = mode_run(chs[t], &ta[t], &g, shapes[t], nshapes[t]); break;
        }
        if (rc == EXIT_BAD_USAGE || rc == EXIT_NO_GPU) {
            worst = rc; /* a shape that does not fit: the next table would say the same */
            break;
        }
        if (rc > worst) worst = rc;
    }
    l2_flush_free();
    return worst;
}

int run_chapter(const chapter *ch, int argc, char **argv) {
    const chapter *const one[1] = {ch};
    return run_chapters(one, 1, argc, argv);
}
