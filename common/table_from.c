/* README tables from saved bench CSVs (table_from.h): read the CSVs, select rows and sizes, lay
 * out the long form, the pivot or the target rows, print them with table.c's Markdown. */
#define _POSIX_C_SOURCE 200809L
#include "table_from.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TF_FIELD 96
#define TF_MAX_FILES 8
#define TF_MAX_LIST 64
#define TF_MAX_LABELS 4
#define TF_MAX_DIMS 4
#define TF_MAX_CSV_COLS 16

/* One row of a CSV, its fields by role ("" where the CSV has no such column). */
typedef struct {
    char shape[TF_FIELD], kernel[TF_FIELD], dtype[TF_FIELD], time[TF_FIELD], tput[TF_FIELD],
        pct[TF_FIELD], ratio[TF_FIELD], err[TF_FIELD], status[TF_FIELD];
    char extra[TF_MAX_CSV_COLS - 2][TF_FIELD]; /* a profile CSV's columns after size and kernel */
    int file;
} tf_row;

/* What a CSV's '#' lines and header say. */
typedef struct {
    char gpu[TF_FIELD]; /* its name: "H100", from "# GPU: NVIDIA H100 80GB HBM3 (...", or NAME= */
    char shape_head[TF_FIELD], time_head[TF_FIELD], tput_head[TF_FIELD], pct_head[TF_FIELD],
        ratio_head[TF_FIELD];                /* "" where the CSV has no such column */
    bool has_dtype, has_err;
    bool profile; /* a "# profile:" CSV (common/profile.sh): its columns shown as they are */
    int nextra;
    char extra_head[TF_MAX_CSV_COLS - 2][TF_FIELD];
} tf_file;

/* The column keys of --columns, in the order of the long form's default. */
enum { C_SHAPE, C_GPU, C_KERNEL, C_DTYPE, C_TIME, C_TPUT, C_PCT, C_RATIO, C_ERR, C_STATUS, NKEYS };
static const char *const KEYS[NKEYS] = {"shape", "gpu",   "kernel", "dtype", "time",
                                        "tput",  "pct",   "ratio",  "err",   "status"};

/* A --shape value: each dimension a size or any. */
typedef struct {
    long d[TF_MAX_DIMS];
    bool any[TF_MAX_DIMS];
    int n;
    bool wild;
    char text[TF_FIELD];
} tf_pattern;

typedef struct {
    char files[TF_MAX_FILES][1024], names[TF_MAX_FILES][TF_FIELD]; /* names: NAME=CSV, or "" */
    int nfiles;
    char kernels[TF_MAX_LIST][TF_FIELD];
    int nkernels;
    tf_pattern patterns[TF_MAX_LIST];
    int npatterns;
    int columns[NKEYS];
    int ncolumns;
    bool pivot, transpose, best, pool;
    int value;               /* C_TIME, C_TPUT, C_PCT, C_RATIO, or -1: the form's default */
    bool has_target;
    char op[3], target_text[TF_FIELD];
    double target;
    char versus_from[TF_FIELD], versus_to[TF_FIELD];
    char base[TF_FIELD]; /* --base NAME: the ratio is over the same row of the CSV named NAME */
    char label_head[TF_MAX_LABELS][TF_FIELD], label_text[TF_MAX_LABELS][TABLE_CELL * 2];
    int nlabels;
} tf_query;

typedef struct {
    tf_query q;
    tf_file files[TF_MAX_FILES];
    tf_row *rows;
    int nrows, cap;
    char shapes[TF_MAX_LIST][TF_FIELD]; /* the sizes selected, in order */
    int nshapes;
    char kernels[TF_MAX_LIST][TF_FIELD]; /* the kernels selected, in order */
    int nkernels;
} tf_data;

static int fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return EXIT_BAD_USAGE;
}

static void copy(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src ? src : ""); }

/* ---- reading ----------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1))) {
        *len = fread(text, 1, (size_t)n, f);
        text[*len] = '\0';
    }
    fclose(f);
    return text;
}

/* The fields of the record at *at (a line; fields quoted as table.c writes them, "" for a quote
 * inside) into f; returns how many, and moves *at to the next line. */
static int split_record(const char **at, char f[TF_MAX_CSV_COLS][TF_FIELD]) {
    const char *s = *at;
    int n = 0;
    size_t k = 0;
    bool quoted = false;
    f[0][0] = '\0';
    for (; *s && (quoted || (*s != '\n' && *s != '\r')); s++) {
        if (quoted && *s == '"' && s[1] == '"') {
            s++;
        } else if (*s == '"') {
            quoted = !quoted;
            continue;
        } else if (!quoted && *s == ',') {
            if (n + 1 < TF_MAX_CSV_COLS) f[++n][0] = '\0';
            k = 0;
            continue;
        }
        if (k + 1 < TF_FIELD) {
            f[n][k++] = *s;
            f[n][k] = '\0';
        }
    }
    while (*s == '\r' || *s == '\n') s++;
    *at = s;
    return n + 1;
}

static int column_named(char h[TF_MAX_CSV_COLS][TF_FIELD], int n, const char *name) {
    for (int c = 0; c < n; c++)
        if (!strcmp(h[c], name)) return c;
    return -1;
}

/* "H100" from "GPU: NVIDIA H100 80GB HBM3 (sm_90, ...)". */
static void gpu_short_name(const char *line, char *out, size_t len) {
    const char *s = line + strlen("GPU:");
    while (*s == ' ') s++;
    if (!strncmp(s, "NVIDIA ", 7)) s += 7;
    size_t n = strcspn(s, " (\n");
    snprintf(out, len, "%.*s", (int)n, s);
}

static tf_row *new_row(tf_data *d) {
    if (d->nrows == d->cap) {
        int cap = d->cap ? 2 * d->cap : 256;
        tf_row *p = realloc(d->rows, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        d->rows = p, d->cap = cap;
    }
    tf_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof *r);
    return r;
}

/* A row of compare_sdpa.py's CSV in 08's names: "fp16", "flash", "yes" -> f16_sdpa_flash_causal. */
static void sdpa_name(const char *dtype, const char *backend, const char *causal, char *out,
                      size_t len) {
    const char *rest = !strncmp(dtype, "fp", 2) ? dtype + 2 : dtype;
    snprintf(out, len, "%s%s_sdpa_%s%s", rest == dtype ? "" : "f", rest, backend,
             !strcmp(causal, "yes") ? "_causal" : "");
}

/* The run named run in a bundle (several CSVs in one file, each after a line "# run: NAME"):
 * text cut to that run's lines; NULL when the bundle has no such run. */
static const char *bundle_run(char *text, const char *run) {
    const size_t n = strlen(run);
    for (char *line = text; *line; line += strcspn(line, "\n"), line += *line == '\n') {
        if (strncmp(line, "# run: ", 7) || strncmp(line + 7, run, n) ||
            (line[7 + n] != '\n' && line[7 + n] != '\r' && line[7 + n] != '\0'))
            continue;
        char *start = line + 7 + n;
        start += strspn(start, "\r\n");
        for (char *next = start; *next; next += strcspn(next, "\n"), next += *next == '\n')
            if (!strncmp(next, "# run: ", 7)) {
                *next = '\0';
                break;
            }
        return start;
    }
    return NULL;
}

static int load(tf_data *d, int fi, char *err, size_t errlen) {
    char path[sizeof d->q.files[0]];
    copy(path, sizeof path, d->q.files[fi]);
    char *hash = strchr(path, '#'); /* FILE#RUN: one run of a bundle */
    if (hash) *hash = '\0';
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return fail(err, errlen, "cannot read %s", path);
    tf_file *F = &d->files[fi];
    /* not copy(): inlined here, it trips gcc 12's -Wrestrict, which sees d on both sides */
    const size_t named = strnlen(d->q.names[fi], sizeof F->gpu - 1);
    memcpy(F->gpu, d->q.names[fi], named);
    F->gpu[named] = '\0';
    const char *at = text;
    if (!hash && !strncmp(text, "# run: ", 7)) {
        free(text);
        return fail(err, errlen, "%s is a bundle of runs: name one as %s#RUN", path, path);
    }
    if (hash && !(at = bundle_run(text, hash + 1))) {
        free(text);
        return fail(err, errlen, "%s has no run '%s' (a line \"# run: %s\")", path, hash + 1,
                    hash + 1);
    }
    while (*at == '#') {
        const char *s = at + 1;
        while (*s == ' ') s++;
        if (!strncmp(s, "GPU:", 4) && !d->q.names[fi][0]) gpu_short_name(s, F->gpu, sizeof F->gpu);
        if (!strncmp(s, "profile:", 8)) F->profile = true;
        at += strcspn(at, "\n");
        if (*at) at++;
    }
    static char h[TF_MAX_CSV_COLS][TF_FIELD], f[TF_MAX_CSV_COLS][TF_FIELD];
    const int nh = *at ? split_record(&at, h) : 0;
    const int c_kernel = column_named(h, nh, "kernel"), c_time = column_named(h, nh, "time (us)");
    const int c_dtype = column_named(h, nh, "dtype"), c_err = column_named(h, nh, "rel err");
    const int c_status = column_named(h, nh, "status"), c_backend = column_named(h, nh, "backend");
    const int c_d = column_named(h, nh, "D"), c_causal = column_named(h, nh, "causal");
    const bool sdpa = c_backend >= 0 && c_d >= 0 && c_causal >= 0 && c_dtype >= 0;
    if (F->profile) { /* size, kernel, then every metric as it is */
        if (c_kernel != 1 || nh < 3) {
            free(text);
            return fail(err, errlen, "%s: a profile CSV's header is size, kernel, metrics...", path);
        }
        copy(F->shape_head, sizeof F->shape_head, h[0]);
        F->nextra = nh - 2;
        for (int c = 2; c < nh; c++) copy(F->extra_head[c - 2], TF_FIELD, h[c]);
    } else if ((!sdpa && c_kernel != 1) || c_time < 1 || c_time + 1 >= nh) {
        free(text);
        return fail(err, errlen,
                    "%s: no header row of a bench CSV (size, kernel, ..., time (us), "
                    "throughput, ...) or of compare_sdpa.py's",
                    path);
    }
    int c_pct = -1, c_ratio = -1;
    for (int c = c_time + 2; c < nh && !F->profile; c++) {
        if (!strncmp(h[c], "% ", 2) && c_pct < 0) c_pct = c;
        if (!strncmp(h[c], "x ", 2) && c_ratio < 0) c_ratio = c;
    }
    if (sdpa) snprintf(F->shape_head, sizeof F->shape_head, "%.80sx%s", h[0], "d");
    else if (!F->profile) copy(F->shape_head, sizeof F->shape_head, h[0]);
    if (!F->profile) {
        copy(F->time_head, sizeof F->time_head, h[c_time]);
        copy(F->tput_head, sizeof F->tput_head, h[c_time + 1]);
    }
    if (c_pct >= 0) copy(F->pct_head, sizeof F->pct_head, h[c_pct]);
    if (c_ratio >= 0) copy(F->ratio_head, sizeof F->ratio_head, h[c_ratio]);
    F->has_dtype = c_dtype >= 0 && !sdpa;
    F->has_err = c_err >= 0;
    while (*at) {
        const int n = split_record(&at, f);
        if (n < nh) continue;
        tf_row *r = new_row(d);
        if (!r) {
            free(text);
            return fail(err, errlen, "out of memory reading %s", path);
        }
        r->file = fi;
        if (F->profile) { /* size, kernel, then every metric as it is */
            copy(r->shape, sizeof r->shape, f[0]);
            copy(r->kernel, sizeof r->kernel, f[1]);
            for (int c = 2; c < nh; c++) copy(r->extra[c - 2], TF_FIELD, f[c]);
            continue;
        }
        if (sdpa) {
            snprintf(r->shape, sizeof r->shape, "%.80sx%.8s", f[0], f[c_d]);
            sdpa_name(f[c_dtype], f[c_backend], f[c_causal], r->kernel, sizeof r->kernel);
        } else {
            copy(r->shape, sizeof r->shape, f[0]);
            copy(r->kernel, sizeof r->kernel, f[c_kernel]);
        }
        if (c_dtype >= 0) copy(r->dtype, sizeof r->dtype, f[c_dtype]);
        copy(r->time, sizeof r->time, f[c_time]);
        copy(r->tput, sizeof r->tput, f[c_time + 1]);
        if (c_pct >= 0) copy(r->pct, sizeof r->pct, f[c_pct]);
        if (c_ratio >= 0) copy(r->ratio, sizeof r->ratio, f[c_ratio]);
        if (c_err >= 0) copy(r->err, sizeof r->err, f[c_err]);
        if (c_status >= 0) copy(r->status, sizeof r->status, f[c_status]);
    }
    free(text);
    return 0;
}

/* ---- sizes ------------------------------------------------------------------------------- */

/* "4096x4096x4096" into dims; false when a dimension is not a size (or '*' where allowed). */
static bool parse_dims(const char *label, tf_pattern *p, bool wild_ok) {
    memset(p, 0, sizeof *p);
    copy(p->text, sizeof p->text, label);
    char buf[TF_FIELD];
    copy(buf, sizeof buf, label);
    char *save = NULL;
    for (char *t = strtok_r(buf, "x", &save); t; t = strtok_r(NULL, "x", &save)) {
        if (p->n == TF_MAX_DIMS) return false;
        if (wild_ok && !strcmp(t, "*")) p->any[p->n] = p->wild = true;
        else if (!parse_size(t, &p->d[p->n])) return false;
        p->n++;
    }
    return p->n > 0;
}

static bool matches(const tf_pattern *p, const char *label) {
    tf_pattern s;
    if (!parse_dims(label, &s, false) || s.n != p->n) return false;
    for (int i = 0; i < p->n; i++)
        if (!p->any[i] && p->d[i] != s.d[i]) return false;
    return true;
}

/* A size as the READMEs write it: 2^28 (one dimension, a power of two), 4096³ (three equal),
 * else the dimensions joined by ×; a pattern's * kept. */
static void pretty_size(const tf_pattern *p, char *out, size_t len) {
    const long v = p->d[0];
    if (p->n == 1 && !p->wild && v > 1 && (v & (v - 1)) == 0) {
        int e = 0;
        while ((1L << e) < v) e++;
        snprintf(out, len, "2^%d", e);
        return;
    }
    if (p->n == 3 && !p->wild && p->d[1] == v && p->d[2] == v) {
        snprintf(out, len, "%ld³", v);
        return;
    }
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < p->n && k < len; i++) {
        if (p->any[i]) k += (size_t)snprintf(out + k, len - k, "%s*", i ? "×" : "");
        else k += (size_t)snprintf(out + k, len - k, "%s%ld", i ? "×" : "", p->d[i]);
    }
}

static void pretty_label(const char *label, char *out, size_t len) {
    tf_pattern p;
    if (parse_dims(label, &p, false)) pretty_size(&p, out, len);
    else copy(out, len, label);
}

/* The size column's heading: "mxnxk" -> "M×N×K", "rowsxcols" -> "rows×cols", "n" stays. */
static void pretty_head(const char *head, char *out, size_t len) {
    char buf[TF_FIELD];
    copy(buf, sizeof buf, head);
    size_t k = 0;
    int parts = 0;
    out[0] = '\0';
    const bool several = strchr(head, 'x') != NULL;
    char *save = NULL;
    for (char *t = strtok_r(buf, "x", &save); t && k < len; t = strtok_r(NULL, "x", &save)) {
        if (several && strlen(t) == 1) t[0] = (char)toupper((unsigned char)t[0]);
        k += (size_t)snprintf(out + k, len - k, "%s%s", parts++ ? "×" : "", t);
    }
}

/* ---- selecting --------------------------------------------------------------------------- */

static const tf_row *find(const tf_data *d, int file, const char *shape, const char *kernel) {
    for (int i = 0; i < d->nrows; i++) {
        const tf_row *r = &d->rows[i];
        if ((file < 0 || r->file == file) && !strcmp(r->shape, shape) && !strcmp(r->kernel, kernel))
            return r;
    }
    return NULL;
}

static bool listed(char list[][TF_FIELD], int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], name)) return true;
    return false;
}

static int select_rows(tf_data *d, char *err, size_t errlen) {
    const tf_query *q = &d->q;
    for (int p = 0; p < q->npatterns; p++) {
        int found = 0;
        for (int i = 0; i < d->nrows; i++) {
            const char *s = d->rows[i].shape;
            if (!matches(&q->patterns[p], s)) continue;
            found++;
            if (listed(d->shapes, d->nshapes, s)) continue;
            if (d->nshapes == TF_MAX_LIST) return fail(err, errlen, "more than %d sizes", TF_MAX_LIST);
            copy(d->shapes[d->nshapes++], TF_FIELD, s);
        }
        if (!found) return fail(err, errlen, "--shape %s: no such size in the CSVs", q->patterns[p].text);
    }
    for (int i = 0; i < d->nrows && q->npatterns == 0; i++) {
        if (listed(d->shapes, d->nshapes, d->rows[i].shape)) continue;
        if (d->nshapes == TF_MAX_LIST) return fail(err, errlen, "more than %d sizes", TF_MAX_LIST);
        copy(d->shapes[d->nshapes++], TF_FIELD, d->rows[i].shape);
    }
    for (int k = 0; k < q->nkernels; k++) {
        bool found = false;
        for (int i = 0; i < d->nrows && !found; i++) found = !strcmp(d->rows[i].kernel, q->kernels[k]);
        if (!found) return fail(err, errlen, "--kernel %s: no such row in the CSVs", q->kernels[k]);
        copy(d->kernels[d->nkernels++], TF_FIELD, q->kernels[k]);
    }
    for (int i = 0; i < d->nrows && q->nkernels == 0; i++) {
        const char *k = d->rows[i].kernel;
        if (!strncmp(k, "ex_", 3) || listed(d->kernels, d->nkernels, k)) continue;
        if (d->nkernels == TF_MAX_LIST) return fail(err, errlen, "more than %d kernels", TF_MAX_LIST);
        copy(d->kernels[d->nkernels++], TF_FIELD, k);
    }
    if (d->nshapes == 0 || d->nkernels == 0) return fail(err, errlen, "nothing to show: the CSVs have no rows");
    return 0;
}

/* Does file f have kernel k at any size selected? */
static bool file_has(const tf_data *d, int f, const char *k) {
    for (int s = 0; s < d->nshapes; s++)
        if (find(d, f, d->shapes[s], k)) return true;
    return false;
}

/* Do the rows selected come from more than one GPU? Then each row or column names its GPU. */
static bool several_gpus(const tf_data *d) {
    int first = -1;
    for (int f = 0; f < d->q.nfiles; f++)
        for (int k = 0; k < d->nkernels; k++) {
            if (!file_has(d, f, d->kernels[k])) continue;
            if (first < 0) first = f;
            else if (strcmp(d->files[f].gpu, d->files[first].gpu)) return true;
        }
    return false;
}

/* What the names of the CSVs are: "GPU", or "run" where one was given as NAME=CSV. */
static const char *name_head(const tf_data *d) {
    for (int f = 0; f < d->q.nfiles; f++)
        if (d->q.names[f][0]) return "run";
    return "GPU";
}

/* ---- cells ------------------------------------------------------------------------------- */

static bool number(const char *s, double *v) {
    char *e;
    if (!s || !*s) return false;
    *v = strtod(s, &e);
    return e != s && (*e == '\0' || !strcmp(e, "%")) && isfinite(*v);
}

/* The ratio of --versus: r's throughput over that of the row named with TO for FROM. */
static void versus(const tf_data *d, const tf_row *r, char *out, size_t len) {
    const char *at = strstr(r->kernel, d->q.versus_from);
    copy(out, len, "-");
    if (!at) return;
    char other[TF_FIELD];
    snprintf(other, sizeof other, "%.*s%s%s", (int)(at - r->kernel), r->kernel, d->q.versus_to,
             at + strlen(d->q.versus_from));
    const tf_row *o = find(d, r->file, r->shape, other);
    for (int f = 0; !o && f < d->q.nfiles; f++) /* else from a CSV of the same GPU (or name) */
        if (!strcmp(d->files[f].gpu, d->files[r->file].gpu)) o = find(d, f, r->shape, other);
    double a, b;
    if (o && number(r->tput, &a) && number(o->tput, &b) && b > 0) snprintf(out, len, "%.3f", a / b);
}

/* The ratio of --base: r's throughput over the same kernel's at the same size in the CSV named
 * NAME (an A/B table: each variant over the stage it was built from). */
static void over_base(const tf_data *d, const tf_row *r, char *out, size_t len) {
    copy(out, len, "-");
    for (int f = 0; f < d->q.nfiles; f++) {
        if (strcmp(d->q.names[f], d->q.base)) continue;
        const tf_row *o = find(d, f, r->shape, r->kernel);
        double a, b;
        if (o && number(r->tput, &a) && number(o->tput, &b) && b > 0) snprintf(out, len, "%.3f", a / b);
        return;
    }
}

/* Field `key` of row r (the ratio of --versus or --base in its place). */
static const char *field(const tf_data *d, const tf_row *r, int key, char *buf, size_t len) {
    switch (key) {
    case C_SHAPE: pretty_label(r->shape, buf, len); return buf;
    case C_GPU: return d->files[r->file].gpu;
    case C_KERNEL: snprintf(buf, len, "`%s`", r->kernel); return buf;
    case C_DTYPE: return r->dtype;
    case C_TIME: return r->time;
    case C_TPUT: return r->tput;
    case C_PCT: return r->pct;
    case C_RATIO:
        if (d->q.base[0]) over_base(d, r, buf, len);
        else if (d->q.versus_from[0]) versus(d, r, buf, len);
        else return r->ratio;
        return buf;
    case C_ERR: return r->err;
    default: return r->status;
    }
}

static const char *heading(const tf_data *d, int key, char *buf, size_t len) {
    static const char *const fixed[NKEYS] = {NULL, NULL, "kernel", "dtype", NULL,
                                             NULL, NULL,  NULL,     "rel err", "status"};
    if (fixed[key]) return fixed[key];
    if (key == C_GPU) return name_head(d);
    if (key == C_RATIO && (d->q.versus_from[0] || d->q.base[0])) {
        snprintf(buf, len, "x %s", d->q.base[0] ? d->q.base : d->q.versus_to);
        return buf;
    }
    buf[0] = '\0';
    for (int f = 0; f < d->q.nfiles && !buf[0]; f++) {
        const tf_file *F = &d->files[f];
        if (key == C_SHAPE) pretty_head(F->shape_head, buf, len);
        else copy(buf, len, key == C_TIME ? F->time_head : key == C_TPUT ? F->tput_head
                            : key == C_PCT ? F->pct_head : F->ratio_head);
    }
    return buf;
}

/* A pivot cell: the value, with the row's ratio in parentheses for time and throughput; a row
 * without a number shows its status (skip: shape); a size it was not run at, nothing. */
static void pivot_cell(const tf_data *d, const tf_row *r, int key, char *out, size_t len) {
    char b1[TF_FIELD], b2[TF_FIELD];
    double v;
    out[0] = '\0';
    if (!r) return;
    const char *val = field(d, r, key, b1, sizeof b1);
    if (!number(val, &v)) {
        copy(out, len, strcmp(r->status, "ok") && r->status[0] ? r->status : val);
        return;
    }
    const char *ratio = "";
    if (key == C_TIME || key == C_TPUT) {
        ratio = field(d, r, C_RATIO, b2, sizeof b2);
        if (!number(ratio, &v)) ratio = number(r->pct, &v) ? r->pct : "";
    }
    if (ratio[0]) snprintf(out, len, "%s (%s)", val, ratio);
    else copy(out, len, val);
}

/* ---- the table --------------------------------------------------------------------------- */

typedef struct {
    table t;
    const char *heads[TABLE_MAX_COLS];
    char head_text[TABLE_MAX_COLS][TF_FIELD];
    bool right[TABLE_MAX_COLS];
    int ncols;
    char cells[TABLE_MAX_COLS][TF_FIELD * 2];
    bool begun;
} tf_out;

static int add_col(tf_out *o, const char *head, bool right, char *err, size_t errlen) {
    if (o->ncols == TABLE_MAX_COLS)
        return fail(err, errlen, "more than %d columns (fewer sizes, or --transpose)", TABLE_MAX_COLS);
    copy(o->head_text[o->ncols], TF_FIELD, head);
    o->heads[o->ncols] = o->head_text[o->ncols];
    o->right[o->ncols++] = right;
    return 0;
}

static int add_labels(tf_out *o, const tf_query *q, char *err, size_t errlen) {
    int rc = 0;
    for (int i = 0; i < q->nlabels && !rc; i++) rc = add_col(o, q->label_head[i], false, err, errlen);
    return rc;
}

/* Adds the row in o->cells (the labels first); a cell the printer would cut is an error. */
static int emit(tf_out *o, const tf_query *q, char *err, size_t errlen) {
    if (!o->begun) {
        table_init(&o->t, o->ncols, o->heads, o->right);
        o->begun = true;
    }
    const char *cells[TABLE_MAX_COLS];
    for (int c = 0; c < o->ncols; c++) {
        cells[c] = c < q->nlabels ? q->label_text[c] : o->cells[c];
        if (strlen(cells[c]) >= TABLE_CELL)
            return fail(err, errlen, "the cell '%s' is longer than %d characters", cells[c],
                        TABLE_CELL - 1);
    }
    table_add(&o->t, cells);
    return 0;
}

/* A profile CSV's long form: size (several), GPU (several), kernel, then its metrics. */
static int profile_form(const tf_data *d, tf_out *o, char *err, size_t errlen) {
    const tf_query *q = &d->q;
    const tf_file *F0 = &d->files[0];
    for (int f = 1; f < q->nfiles; f++) {
        const tf_file *F = &d->files[f];
        bool same = F->nextra == F0->nextra;
        for (int c = 0; same && c < F->nextra; c++) same = !strcmp(F->extra_head[c], F0->extra_head[c]);
        if (!same) return fail(err, errlen, "profile CSVs of different columns in one table");
    }
    const bool shapes = d->nshapes > 1, gpus = several_gpus(d);
    int rc = add_labels(o, q, err, errlen);
    if (!rc && shapes) rc = add_col(o, F0->shape_head, false, err, errlen);
    if (!rc && gpus) rc = add_col(o, "GPU", false, err, errlen);
    if (!rc) rc = add_col(o, "kernel", false, err, errlen);
    for (int c = 0; c < F0->nextra && !rc; c++)
        rc = add_col(o, F0->extra_head[c], !strstr(F0->extra_head[c], "stall"), err, errlen);
    for (int f = 0; f < q->nfiles && !rc; f++)
        for (int s = 0; s < d->nshapes && !rc; s++)
            for (int k = 0; k < d->nkernels && !rc; k++) {
                const tf_row *r = find(d, f, d->shapes[s], d->kernels[k]);
                if (!r) continue;
                int c = q->nlabels;
                if (shapes) pretty_label(r->shape, o->cells[c++], sizeof o->cells[0]);
                if (gpus) copy(o->cells[c++], sizeof o->cells[0], d->files[f].gpu);
                snprintf(o->cells[c++], sizeof o->cells[0], "`%s`", r->kernel);
                for (int e = 0; e < F0->nextra; e++) copy(o->cells[c++], sizeof o->cells[0], r->extra[e]);
                rc = emit(o, q, err, errlen);
            }
    return rc;
}

static int long_form(const tf_data *d, tf_out *o, char *err, size_t errlen) {
    const tf_query *q = &d->q;
    int cols[NKEYS], n = 0, rc = 0;
    bool any[NKEYS] = {false};
    for (int f = 0; f < q->nfiles; f++) {
        any[C_DTYPE] |= d->files[f].has_dtype;
        any[C_PCT] |= d->files[f].pct_head[0] != '\0';
        any[C_RATIO] |= d->files[f].ratio_head[0] || q->versus_from[0] || q->base[0];
        any[C_ERR] |= d->files[f].has_err;
    }
    if (q->ncolumns) {
        memcpy(cols, q->columns, sizeof cols);
        n = q->ncolumns;
    } else {
        if (d->nshapes > 1) cols[n++] = C_SHAPE;
        if (several_gpus(d)) cols[n++] = C_GPU;
        for (int k = C_KERNEL; k <= C_ERR; k++)
            if (k == C_KERNEL || k == C_TIME || k == C_TPUT || any[k]) cols[n++] = k;
    }
    char buf[TF_FIELD];
    rc = add_labels(o, q, err, errlen);
    for (int c = 0; c < n && !rc; c++)
        rc = add_col(o, heading(d, cols[c], buf, sizeof buf), cols[c] >= C_TIME && cols[c] <= C_ERR,
                     err, errlen);
    for (int f = 0; f < q->nfiles && !rc; f++)
        for (int s = 0; s < d->nshapes && !rc; s++)
            for (int k = 0; k < d->nkernels && !rc; k++) {
                const tf_row *r = find(d, f, d->shapes[s], d->kernels[k]);
                if (!r) continue;
                for (int c = 0; c < n; c++)
                    copy(o->cells[q->nlabels + c], sizeof o->cells[0],
                         field(d, r, cols[c], buf, sizeof buf));
                rc = emit(o, q, err, errlen);
            }
    return rc;
}

/* A line of the pivot (a row, or a column when transposed) or of the targets: one CSV's kernel,
 * or with --best the best of the kernels selected (k == BEST), or with --pool all of them
 * (k == POOL). */
enum { BEST = -1, POOL = -2 };
typedef struct {
    int f, k;
} tf_series;

static int series_of(const tf_data *d, bool kernel_major, tf_series *out) {
    int n = 0;
    kernel_major |= !several_gpus(d); /* CSVs of one GPU complete each other: --kernel's order */
    const bool one = d->q.best || d->q.pool;
    const int nk = one ? 1 : d->nkernels;
    for (int a = 0; a < (kernel_major ? nk : d->q.nfiles); a++)
        for (int b = 0; b < (kernel_major ? d->q.nfiles : nk); b++) {
            const int f = kernel_major ? b : a;
            const int k = d->q.best ? BEST : d->q.pool ? POOL : kernel_major ? a : b;
            /* --base with --value ratio: the base's own rows would read 1.000 throughout */
            if (d->q.base[0] && d->q.value == C_RATIO && !strcmp(d->q.names[f], d->q.base)) continue;
            bool has = false;
            for (int j = 0; j < d->nkernels && !has; j++)
                has = (k < 0 || j == k) && file_has(d, f, d->kernels[j]);
            if (has && n < TF_MAX_LIST) out[n++] = (tf_series){f, k};
        }
    return n;
}

/* Which way is better for a measure: more, or for time less. */
static bool better(int key, double a, double b) { return key == C_TIME ? a < b : a > b; }

/* The series' row at a size: the kernel's, or the best of the kernels by the measure. */
static const tf_row *series_row(const tf_data *d, tf_series sr, const char *shape, int key) {
    if (sr.k >= 0) return find(d, sr.f, shape, d->kernels[sr.k]);
    const tf_row *best = NULL;
    double vb = 0, v;
    char buf[TF_FIELD];
    for (int k = 0; k < d->nkernels; k++) {
        const tf_row *r = find(d, sr.f, shape, d->kernels[k]);
        if (r && number(field(d, r, key, buf, sizeof buf), &v) && (!best || better(key, v, vb)))
            best = r, vb = v;
    }
    return best;
}

/* The series' name: "`fast`" ("H100 `fast`" among several GPUs); for the best, the kernels'
 * data type where they share one ("fp32"), else "best". */
static void series_head(const tf_data *d, tf_series sr, char *out, size_t len) {
    const char *gpu = several_gpus(d) ? d->files[sr.f].gpu : "";
    if (sr.k >= 0) {
        snprintf(out, len, "%s%s`%s`", gpu, *gpu ? " " : "", d->kernels[sr.k]);
        return;
    }
    const char *dtype = NULL;
    for (int i = 0; i < d->nrows; i++) {
        const tf_row *r = &d->rows[i];
        bool mine = false;
        for (int k = 0; k < d->nkernels; k++) mine |= !strcmp(r->kernel, d->kernels[k]);
        if (r->file != sr.f || !mine) continue;
        if (!dtype) dtype = r->dtype;
        else if (strcmp(dtype, r->dtype)) dtype = "";
    }
    snprintf(out, len, "%s%s%s", gpu, *gpu ? " " : "", dtype && *dtype ? dtype : "best");
}

static void series_cell(const tf_data *d, tf_series sr, const char *shape, int key, char *out,
                        size_t len) {
    const tf_row *r = series_row(d, sr, shape, key);
    pivot_cell(d, r, key, out, len);
    if (sr.k < 0 && r) {
        const size_t n = strlen(out);
        snprintf(out + n, len - n, " `%s`", r->kernel);
    }
}

static int pivot(const tf_data *d, tf_out *o, char *err, size_t errlen) {
    const tf_query *q = &d->q;
    const int key = q->value >= 0 ? q->value : C_TPUT;
    const int L = q->nlabels;
    char buf[TF_FIELD * 2];
    tf_series sr[TF_MAX_LIST];
    const int ns = series_of(d, false, sr);
    int rc = add_labels(o, q, err, errlen);
    if (!q->transpose) {
        const char *what = q->best ? "best stage" : "kernel";
        if (several_gpus(d)) snprintf(buf, sizeof buf, "%s, %s", name_head(d), what);
        else copy(buf, sizeof buf, what);
        const char *head = buf;
        if (!rc) rc = add_col(o, head, false, err, errlen);
        for (int s = 0; s < d->nshapes && !rc; s++) {
            pretty_label(d->shapes[s], buf, sizeof buf);
            rc = add_col(o, buf, true, err, errlen);
        }
        for (int i = 0; i < ns && !rc; i++) {
            series_head(d, sr[i], o->cells[L], sizeof o->cells[0]);
            for (int s = 0; s < d->nshapes; s++)
                series_cell(d, sr[i], d->shapes[s], key, o->cells[L + 1 + s], sizeof o->cells[0]);
            rc = emit(o, q, err, errlen);
        }
        return rc;
    }
    if (!rc) rc = add_col(o, heading(d, C_SHAPE, buf, sizeof buf), false, err, errlen);
    for (int i = 0; i < ns && !rc; i++) {
        series_head(d, sr[i], buf, sizeof buf);
        rc = add_col(o, buf, true, err, errlen);
    }
    for (int s = 0; s < d->nshapes && !rc; s++) {
        pretty_label(d->shapes[s], o->cells[L], sizeof o->cells[0]);
        for (int i = 0; i < ns; i++)
            series_cell(d, sr[i], d->shapes[s], key, o->cells[L + 1 + i], sizeof o->cells[0]);
        rc = emit(o, q, err, errlen);
    }
    return rc;
}

static bool meets(const tf_query *q, double v) {
    if (!strcmp(q->op, ">=")) return v >= q->target;
    if (!strcmp(q->op, ">")) return v > q->target;
    if (!strcmp(q->op, "<=")) return v <= q->target;
    return v < q->target;
}

/* The target form's "sizes" cell: up to 3 sizes by name; more, with the patterns that chose
 * them where one has a * (and the cell has room), else with the first and the last. */
static void shapes_cell(const tf_data *d, char *out, size_t len) {
    size_t k = 0;
    out[0] = '\0';
    char a[TF_FIELD], b[TF_FIELD];
    bool wild = false;
    for (int p = 0; p < d->q.npatterns; p++) wild |= d->q.patterns[p].wild;
    if (d->nshapes <= 3) {
        for (int s = 0; s < d->nshapes && k < len; s++) {
            pretty_label(d->shapes[s], a, sizeof a);
            k += (size_t)snprintf(out + k, len - k, "%s%s", s ? ", " : "", a);
        }
        return;
    }
    if (wild) {
        k = (size_t)snprintf(out, len, "%d sizes:", d->nshapes);
        for (int p = 0; p < d->q.npatterns && k < len; p++) {
            pretty_size(&d->q.patterns[p], a, sizeof a);
            k += (size_t)snprintf(out + k, len - k, d->q.patterns[p].wild ? "%s `%s`" : "%s %s",
                                  p ? "," : "", a);
        }
    }
    if (!wild || k >= TABLE_CELL) { /* too long for a cell: the first and the last */
        pretty_label(d->shapes[0], a, sizeof a);
        pretty_label(d->shapes[d->nshapes - 1], b, sizeof b);
        snprintf(out, len, "%d sizes: %s … %s", d->nshapes, a, b);
    }
}

static int targets(const tf_data *d, tf_out *o, char *err, size_t errlen) {
    const tf_query *q = &d->q;
    bool ratio = q->versus_from[0] != '\0' || q->base[0] != '\0';
    for (int f = 0; f < q->nfiles; f++) ratio |= d->files[f].ratio_head[0] != '\0';
    const int key = q->value >= 0 ? q->value : ratio ? C_RATIO : C_PCT;
    const char *const heads[] = {"kernel", name_head(d), "sizes", "target", "measured", "met"};
    int rc = add_labels(o, q, err, errlen);
    for (int c = 0; c < 6 && !rc; c++) rc = add_col(o, heads[c], c == 4, err, errlen);
    char buf[TF_FIELD], sizes[TF_FIELD * 2], target[TF_FIELD * 2];
    shapes_cell(d, sizes, sizeof sizes);
    const char *sym = !strcmp(q->op, ">=") ? "≥" : !strcmp(q->op, "<=") ? "≤" : q->op;
    snprintf(target, sizeof target, "%s %s %s", heading(d, key, buf, sizeof buf), sym, q->target_text);
    tf_series sr[TF_MAX_LIST];
    const int ns = series_of(d, true, sr);
    const int L = q->nlabels;
    for (int i = 0; i < ns && !rc; i++) {
        int met = 0, lo = -1, hi = -1;
        double vlo = 0, vhi = 0;
        static char vals[TF_MAX_LIST * TF_MAX_LIST][TF_FIELD];
        char list[TF_FIELD * 2] = "";
        bool won[TF_MAX_LIST] = {false};
        size_t used = 0;
        /* the measurements: a size each, or with --pool a size and kernel each */
        const int nk = sr[i].k == POOL ? d->nkernels : 1, n = d->nshapes * nk;
        for (int m = 0; m < n; m++) {
            tf_series one = sr[i];
            if (one.k == POOL) one.k = m % nk;
            const tf_row *r = series_row(d, one, d->shapes[m / nk], key);
            double v;
            copy(vals[m], TF_FIELD, r ? field(d, r, key, buf, sizeof buf) : "-");
            for (int k = 0; r && k < d->nkernels; k++) won[k] |= !strcmp(r->kernel, d->kernels[k]);
            if (number(vals[m], &v)) {
                met += meets(q, v);
                if (lo < 0 || v < vlo) lo = m, vlo = v;
                if (hi < 0 || v > vhi) hi = m, vhi = v;
            }
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", m ? ", " : "", vals[m]);
        }
        char *kc = o->cells[L];
        const size_t kl = sizeof o->cells[0];
        kc[0] = '\0';
        for (int k = 0, w = 0; k < d->nkernels; k++)
            if (sr[i].k == k || (sr[i].k < 0 && won[k]))
                w += snprintf(kc + w, kl - (size_t)w, "%s`%s`", w ? ", " : "", d->kernels[k]);
        if (strlen(kc) >= TABLE_CELL) /* too many names for a cell */
            snprintf(kc, kl, "`%s` and %d more", d->kernels[0], d->nkernels - 1);
        copy(o->cells[L + 1], sizeof o->cells[0], d->files[sr[i].f].gpu);
        copy(o->cells[L + 2], sizeof o->cells[0], sizes);
        copy(o->cells[L + 3], sizeof o->cells[0], target);
        if (n <= 3 || lo < 0) copy(o->cells[L + 4], sizeof o->cells[0], list);
        else if (lo == hi) copy(o->cells[L + 4], sizeof o->cells[0], vals[lo]);
        else snprintf(o->cells[L + 4], sizeof o->cells[0], "%s to %s", vals[lo], vals[hi]);
        if (met == n) copy(o->cells[L + 5], sizeof o->cells[0], "met");
        else if (n == 1) copy(o->cells[L + 5], sizeof o->cells[0], "not met");
        else snprintf(o->cells[L + 5], sizeof o->cells[0], "not met (%d of %d)", met, n);
        rc = emit(o, q, err, errlen);
    }
    return rc;
}

/* ---- the options ------------------------------------------------------------------------- */

/* "--opt=value" or "--opt value": the value (NULL if arg is not opt), advancing *i. */
static const char *value_of(int argc, char **argv, int *i, const char *opt) {
    const size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n)) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n]) return NULL;
    return *i + 1 < argc ? argv[++*i] : "";
}

static int key_of(const char *name) {
    for (int k = 0; k < NKEYS; k++)
        if (!strcmp(KEYS[k], name)) return k;
    return -1;
}

/* Each comma-separated item of list, through add(); stops at the first error. */
static int each_item(const char *opt, const char *list, tf_query *q,
                     int (*add)(tf_query *, const char *, const char *, char *, size_t), char *err,
                     size_t errlen) {
    if (!*list) return fail(err, errlen, "%s needs a value", opt);
    char buf[2048];
    copy(buf, sizeof buf, list);
    char *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(buf, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
        rc = add(q, opt, t, err, errlen);
    return rc;
}

static int add_file(tf_query *q, const char *opt, const char *v, char *err, size_t errlen) {
    if (q->nfiles == TF_MAX_FILES) return fail(err, errlen, "%s: at most %d CSVs", opt, TF_MAX_FILES);
    const char *eq = strchr(v, '=');
    snprintf(q->names[q->nfiles], TF_FIELD, "%.*s", eq ? (int)(eq - v) : 0, v);
    copy(q->files[q->nfiles++], sizeof q->files[0], eq ? eq + 1 : v);
    return 0;
}

static int add_kernel(tf_query *q, const char *opt, const char *v, char *err, size_t errlen) {
    if (q->nkernels == TF_MAX_LIST) return fail(err, errlen, "%s: at most %d", opt, TF_MAX_LIST);
    copy(q->kernels[q->nkernels++], TF_FIELD, v);
    return 0;
}

static int add_pattern(tf_query *q, const char *opt, const char *v, char *err, size_t errlen) {
    if (q->npatterns == TF_MAX_LIST) return fail(err, errlen, "%s: at most %d", opt, TF_MAX_LIST);
    if (!parse_dims(v, &q->patterns[q->npatterns], true))
        return fail(err, errlen, "%s: '%s' is not a size (dimensions joined by x, each a size "
                                 "such as 4096, 4K, 2^12, or *)", opt, v);
    q->npatterns++;
    return 0;
}

static int add_column(tf_query *q, const char *opt, const char *v, char *err, size_t errlen) {
    const int k = key_of(v);
    if (k < 0)
        return fail(err, errlen, "%s: '%s' is not one of shape, gpu, kernel, dtype, time, tput, "
                                 "pct, ratio, err, status", opt, v);
    if (q->ncolumns == NKEYS) return fail(err, errlen, "%s: at most %d columns", opt, NKEYS);
    q->columns[q->ncolumns++] = k;
    return 0;
}

static int parse(tf_query *q, int argc, char **argv, char *err, size_t errlen) {
    memset(q, 0, sizeof *q);
    q->value = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int rc = 0;
        if ((v = value_of(argc, argv, &i, "--table-from"))) {
            rc = each_item("--table-from", v, q, add_file, err, errlen);
        } else if ((v = value_of(argc, argv, &i, "--kernel"))) {
            rc = each_item("--kernel", v, q, add_kernel, err, errlen);
        } else if ((v = value_of(argc, argv, &i, "--shape"))) {
            rc = each_item("--shape", v, q, add_pattern, err, errlen);
        } else if ((v = value_of(argc, argv, &i, "--columns"))) {
            rc = each_item("--columns", v, q, add_column, err, errlen);
        } else if (!strcmp(argv[i], "--pivot")) {
            q->pivot = true;
        } else if (!strcmp(argv[i], "--transpose")) {
            q->transpose = true;
        } else if (!strcmp(argv[i], "--best")) {
            q->best = true;
        } else if (!strcmp(argv[i], "--pool")) {
            q->pool = true;
        } else if ((v = value_of(argc, argv, &i, "--value"))) {
            q->value = key_of(v);
            if (q->value != C_TIME && q->value != C_TPUT && q->value != C_PCT && q->value != C_RATIO)
                return fail(err, errlen, "--value: '%s' is not one of time, tput, pct, ratio", v);
        } else if ((v = value_of(argc, argv, &i, "--target"))) {
            const size_t n = strspn(v, "<>=");
            char *end;
            snprintf(q->op, sizeof q->op, "%.*s", (int)(n < 3 ? n : 2), v);
            q->target = strtod(v + n, &end);
            if ((strcmp(q->op, ">=") && strcmp(q->op, ">") && strcmp(q->op, "<=") &&
                 strcmp(q->op, "<")) || end == v + n || (*end && strcmp(end, "%")))
                return fail(err, errlen, "--target: '%s' is not a comparison such as >=1.00 or >=92%%", v);
            copy(q->target_text, sizeof q->target_text, v + n);
            q->has_target = true;
        } else if ((v = value_of(argc, argv, &i, "--versus"))) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1])
                return fail(err, errlen, "--versus: '%s' is not FROM=TO (fa2_tuned=sdpa_cudnn)", v);
            snprintf(q->versus_from, sizeof q->versus_from, "%.*s", (int)(eq - v), v);
            copy(q->versus_to, sizeof q->versus_to, eq + 1);
        } else if ((v = value_of(argc, argv, &i, "--base"))) {
            copy(q->base, sizeof q->base, v);
        } else if ((v = value_of(argc, argv, &i, "--label"))) {
            const char *eq = strchr(v, '=');
            if (!eq) return fail(err, errlen, "--label: '%s' is not HEAD=TEXT", v);
            if (q->nlabels == TF_MAX_LABELS) return fail(err, errlen, "--label: at most %d", TF_MAX_LABELS);
            snprintf(q->label_head[q->nlabels], TF_FIELD, "%.*s", (int)(eq - v), v);
            copy(q->label_text[q->nlabels++], sizeof q->label_text[0], eq + 1);
        } else {
            return fail(err, errlen, "'%s' is not an option of --table-from (see common/table_from.h)",
                        argv[i]);
        }
        if (rc) return rc;
    }
    if (q->nfiles == 0) return fail(err, errlen, "--table-from needs a CSV file (from --save)");
    if (q->transpose && !q->pivot) return fail(err, errlen, "--transpose goes with --pivot");
    if (q->has_target && (q->pivot || q->ncolumns))
        return fail(err, errlen, "--target makes its own rows: no --pivot or --columns with it");
    if (q->pivot && q->ncolumns) return fail(err, errlen, "--columns is for the long form, not --pivot");
    if (q->best && !q->pivot && !q->has_target) return fail(err, errlen, "--best goes with --pivot or --target");
    if (q->pool && (!q->has_target || q->best)) return fail(err, errlen, "--pool goes with --target, without --best");
    if (q->base[0] && q->versus_from[0]) return fail(err, errlen, "--base or --versus, not both");
    bool named = false;
    for (int f = 0; f < q->nfiles; f++) named |= !strcmp(q->names[f], q->base);
    if (q->base[0] && !named)
        return fail(err, errlen, "--base %s: no CSV is named so (give one as %s=CSV)", q->base, q->base);
    return 0;
}

int table_from_main(int argc, char **argv, FILE *out, char *err, size_t errlen) {
    tf_data *d = calloc(1, sizeof *d);
    tf_out *o = calloc(1, sizeof *o);
    int rc = d && o ? parse(&d->q, argc, argv, err, errlen) : fail(err, errlen, "out of memory");
    for (int f = 0; !rc && f < d->q.nfiles; f++) rc = load(d, f, err, errlen);
    if (!rc) rc = select_rows(d, err, errlen);
    bool profiles = false, benches = false;
    for (int f = 0; !rc && f < d->q.nfiles; f++) {
        profiles |= d->files[f].profile;
        benches |= !d->files[f].profile;
    }
    if (!rc && profiles && (benches || d->q.pivot || d->q.has_target || d->q.ncolumns ||
                            d->q.versus_from[0] || d->q.base[0]))
        rc = fail(err, errlen, "a profile CSV (common/profile.sh) prints alone, in the long form: "
                               "--kernel, --shape and --label only");
    if (!rc && profiles) rc = profile_form(d, o, err, errlen);
    else if (!rc) rc = d->q.has_target ? targets(d, o, err, errlen)
                  : d->q.pivot   ? pivot(d, o, err, errlen)
                                 : long_form(d, o, err, errlen);
    if (!rc && !o->begun) rc = fail(err, errlen, "no row of the CSVs has the kernels and sizes selected");
    if (!rc) table_print(&o->t, out, FORMAT_MD);
    if (o && o->begun) table_free(&o->t);
    if (d) free(d->rows);
    free(d);
    free(o);
    return rc;
}
