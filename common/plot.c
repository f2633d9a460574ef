/* The ladder chart (plot.h): parse the bench CSV, lay out one panel per size, write SVG. */
#include "plot.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 8192
#define MAX_COLS 16
#define MAX_SHAPES 64
#define MAX_SERIES 64
#define MAX_NOTES 3
#define FIELD 160

typedef struct {
    char shape[FIELD], kernel[FIELD], dtype[FIELD];
    double value;            /* throughput */
    char ratios[FIELD * 2];  /* "x cuBLAS 1.003, % memcpy 97.0%" for the hover text */
    bool baseline;
} plot_row;

typedef struct {
    plot_row *rows;
    int nrows;
    char unit[FIELD], shape_name[FIELD];
    char notes[MAX_NOTES][FIELD * 2];
    int nnotes;
    char shapes[MAX_SHAPES][FIELD];
    int nshapes;
    char series[MAX_SERIES][FIELD]; /* bars, in first-appearance order */
    int nseries;
    char baselines[MAX_SERIES][FIELD];
    int nbaselines;
} plot_data;

/* One CSV record from *p (quoted fields as table.c writes them); returns the field count, -1 at
 * the end of the text. Advances *p past the record. */
static int next_record(const char **p, const char *end, char fields[MAX_COLS][FIELD]) {
    if (*p >= end) return -1;
    int n = 0;
    const char *s = *p;
    for (;;) {
        char *out = n < MAX_COLS ? fields[n] : NULL;
        size_t k = 0;
        if (s < end && *s == '"') {
            s++;
            while (s < end) {
                if (*s == '"') {
                    if (s + 1 < end && s[1] == '"') s++;
                    else break;
                }
                if (out && k + 1 < FIELD) out[k++] = *s;
                s++;
            }
            if (s < end) s++; /* the closing quote */
        }
        while (s < end && *s != ',' && *s != '\n' && *s != '\r') {
            if (out && k + 1 < FIELD) out[k++] = *s;
            s++;
        }
        if (out) out[k] = '\0';
        n++;
        if (s < end && *s == ',') {
            s++;
            continue;
        }
        while (s < end && (*s == '\r' || *s == '\n')) s++;
        break;
    }
    *p = s;
    return n < MAX_COLS ? n : MAX_COLS;
}

static bool parse_number(const char *s, double *v) {
    char *e;
    if (!*s) return false;
    *v = strtod(s, &e);
    return e != s && (*e == '\0' || *e == '%') && isfinite(*v);
}

static int find_name(char list[][FIELD], int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], name)) return i;
    return -1;
}

static int add_name(char list[][FIELD], int *n, int cap, const char *name) {
    int i = find_name(list, *n, name);
    if (i >= 0 || *n >= cap) return i;
    snprintf(list[*n], FIELD, "%s", name);
    return (*n)++;
}

/* A new stage goes right after the stage before it in the table (its predecessor in the same
 * size), so that a stage missing from the first sizes (a skip) still takes its table place. */
static int add_series(plot_data *d, const char *name, const char *after) {
    int i = find_name(d->series, d->nseries, name);
    if (i >= 0 || d->nseries >= MAX_SERIES) return i;
    int at = after ? find_name(d->series, d->nseries, after) + 1 : 0;
    memmove(d->series[at + 1], d->series[at], (size_t)(d->nseries - at) * FIELD);
    snprintf(d->series[at], FIELD, "%s", name);
    d->nseries++;
    return at;
}

static int parse(const char *csv, size_t len, plot_data *d, char *err, size_t errlen) {
    const char *p = csv, *end = csv + len;
    /* the '#' lines */
    while (p < end && *p == '#') {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if (d->nnotes < MAX_NOTES) {
            const char *s = p + 1;
            while (s < eol && *s == ' ') s++;
            snprintf(d->notes[d->nnotes++], sizeof d->notes[0], "%.*s", (int)(eol - s), s);
        }
        p = eol < end ? eol + 1 : end;
    }
    char f[MAX_COLS][FIELD];
    int nh = next_record(&p, end, f);
    if (nh < 4) {
        snprintf(err, errlen, "no header row (size, kernel, ..., time (us), throughput, ...)");
        return -1;
    }
    char header[MAX_COLS][FIELD];
    memcpy(header, f, sizeof header);
    int c_kernel = -1, c_dtype = -1, c_time = -1;
    for (int c = 0; c < nh; c++) {
        if (!strcmp(header[c], "kernel")) c_kernel = c;
        else if (!strcmp(header[c], "dtype")) c_dtype = c;
        else if (!strcmp(header[c], "time (us)")) c_time = c;
    }
    if (c_kernel != 1 || c_time < 0 || c_time + 1 >= nh) {
        snprintf(err, errlen, "the header row lacks \"kernel\" second or a throughput column after "
                              "\"time (us)\"");
        return -1;
    }
    const int c_value = c_time + 1;
    /* the ratio columns: "x LIB" and "% CEILING"; a baseline has "-" in the last one */
    int ratio_cols[MAX_COLS], nratio = 0;
    for (int c = c_value + 1; c < nh; c++)
        if (!strncmp(header[c], "x ", 2) || !strncmp(header[c], "% ", 2)) ratio_cols[nratio++] = c;
    snprintf(d->unit, sizeof d->unit, "%s", header[c_value]);
    snprintf(d->shape_name, sizeof d->shape_name, "%s", header[0]);
    int n;
    char prev_shape[FIELD] = "", prev_stage[FIELD] = ""; /* the last stage row, for add_series */
    while ((n = next_record(&p, end, f)) >= 0) {
        if (n <= c_value) continue;
        double v;
        if (!parse_number(f[c_value], &v)) continue; /* TODO, skip, FAIL: no bar */
        if (d->nrows >= MAX_ROWS) break;
        plot_row *r = &d->rows[d->nrows];
        memset(r, 0, sizeof *r);
        snprintf(r->shape, FIELD, "%s", f[0]);
        snprintf(r->kernel, FIELD, "%s", f[c_kernel]);
        if (c_dtype >= 0 && c_dtype < n) snprintf(r->dtype, FIELD, "%s", f[c_dtype]);
        r->value = v;
        size_t k = 0;
        for (int i = 0; i < nratio && ratio_cols[i] < n; i++) {
            const char *val = f[ratio_cols[i]];
            if (!strcmp(val, "-")) continue;
            k += (size_t)snprintf(r->ratios + k, sizeof r->ratios - k, "%s%s %s", k ? ", " : "",
                                  header[ratio_cols[i]], val);
            if (k >= sizeof r->ratios) break;
        }
        r->baseline = nratio > 0 && ratio_cols[nratio - 1] < n &&
                      !strcmp(f[ratio_cols[nratio - 1]], "-");
        if (add_name(d->shapes, &d->nshapes, MAX_SHAPES, r->shape) < 0) continue;
        if (r->baseline) {
            add_name(d->baselines, &d->nbaselines, MAX_SERIES, r->kernel);
        } else {
            const bool same = !strcmp(prev_shape, r->shape) && prev_stage[0];
            if (add_series(d, r->kernel, same ? prev_stage : NULL) < 0) continue;
            snprintf(prev_shape, FIELD, "%s", r->shape);
            snprintf(prev_stage, FIELD, "%s", r->kernel);
        }
        d->nrows++;
    }
    if (d->nseries == 0) {
        snprintf(err, errlen, "no row with a throughput to draw");
        return -1;
    }
    return 0;
}

static void put_escaped(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* Stage i of n along viridis (light green to dark purple, the very light end left out): the
 * later the stage, the darker its bar. */
static void series_color(int i, int n, char out[8]) {
    static const unsigned char ramp[][3] = {{181, 222, 43}, {110, 206, 88}, {53, 183, 121},
                                            {31, 158, 137}, {38, 130, 142}, {49, 104, 142},
                                            {62, 73, 137},  {72, 40, 120}};
    const int nr = (int)(sizeof ramp / sizeof ramp[0]);
    double t = n > 1 ? (double)i / (n - 1) * (nr - 1) : nr - 1;
    int a = (int)t;
    if (a >= nr - 1) a = nr - 2;
    double w = t - a;
    int rgb[3];
    for (int c = 0; c < 3; c++) rgb[c] = (int)lround(ramp[a][c] * (1 - w) + ramp[a + 1][c] * w);
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static const char *const BASE_COLORS[] = {"#d62728", "#444444", "#ff7f0e", "#1f77b4"};
static const char *const BASE_DASH[] = {"6 3", "2 2", "8 2 2 2", "4 4"};

/* A round axis maximum at or above v, and its tick step (1, 2, 2.5 or 5 times a power of ten,
 * four or five steps). */
static double nice_step(double v) {
    if (v <= 0) return 1;
    double raw = v / 4, mag = pow(10, floor(log10(raw))), f = raw / mag;
    double m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
    return m * mag;
}

static void fmt_value(char *buf, size_t n, double v) {
    if (v == 0) snprintf(buf, n, "0");
    else if (fabs(v) >= 100) snprintf(buf, n, "%.0f", v);
    else if (fabs(v) >= 10) snprintf(buf, n, "%.1f", v);
    else if (fabs(v) >= 1) snprintf(buf, n, "%.2f", v);
    else snprintf(buf, n, "%.3g", v);
}

static const plot_row *find_row(const plot_data *d, const char *shape, const char *kernel) {
    for (int i = 0; i < d->nrows; i++)
        if (!strcmp(d->rows[i].shape, shape) && !strcmp(d->rows[i].kernel, kernel))
            return &d->rows[i];
    return NULL;
}

static void put_label(FILE *out, const plot_row *r, const char *unit) {
    char v[32];
    fmt_value(v, sizeof v, r->value);
    put_escaped(out, r->kernel);
    if (r->dtype[0]) {
        fputs(" (", out);
        put_escaped(out, r->dtype);
        fputs(")", out);
    }
    fprintf(out, " at ");
    put_escaped(out, r->shape);
    fprintf(out, ": %s ", v);
    put_escaped(out, unit);
    if (r->ratios[0]) {
        fputs(", ", out);
        put_escaped(out, r->ratios);
    }
}

#define PANEL_W 300
#define PANEL_H 230
#define PAD 16
#define AXIS_L 56 /* room for tick labels and the unit */
#define AXIS_B 14
#define PANEL_T 30 /* the panel's title */
#define LEGEND_COL 200
#define LINE 16

static void draw(const plot_data *d, const char *title, FILE *out) {
    const int cols = d->nshapes < 4 ? d->nshapes : 4;
    const int prow = (d->nshapes + cols - 1) / cols;
    const int width = 2 * PAD + cols * PANEL_W;
    const int legend_items = d->nseries + d->nbaselines;
    const int per_line = (width - 2 * PAD) / LEGEND_COL > 0 ? (width - 2 * PAD) / LEGEND_COL : 1;
    const int legend_lines = (legend_items + per_line - 1) / per_line;
    const int head = PAD + 24 + d->nnotes * LINE + 8;
    const int legend_top = head;
    const int panels_top = legend_top + legend_lines * LINE + 16;
    const int height = panels_top + prow * PANEL_H + PAD;

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
            "%d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height);
    fprintf(out, "<text class=\"title\" x=\"%d\" y=\"%d\" font-size=\"17\" font-weight=\"bold\">",
            PAD, PAD + 16);
    put_escaped(out, title);
    fputs(": ", out);
    put_escaped(out, d->unit);
    fputs(" by stage, one panel per size</text>\n", out);
    for (int i = 0; i < d->nnotes; i++) {
        fprintf(out, "<text class=\"note\" x=\"%d\" y=\"%d\" fill=\"#555555\">", PAD,
                PAD + 24 + (i + 1) * LINE - 4);
        put_escaped(out, d->notes[i]);
        fprintf(out, "</text>\n");
    }

    /* legend: the stages in order, then the baselines */
    fprintf(out, "<g class=\"legend\">\n");
    for (int i = 0; i < legend_items; i++) {
        const int x = PAD + (i % per_line) * LEGEND_COL, y = legend_top + (i / per_line) * LINE;
        if (i < d->nseries) {
            char color[8];
            series_color(i, d->nseries, color);
            fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y,
                    color);
            fprintf(out, "<text x=\"%d\" y=\"%d\">", x + 17, y + 10);
            put_escaped(out, d->series[i]);
        } else {
            const int b = i - d->nseries, k = b % 4;
            fprintf(out,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    "stroke-width=\"2\" stroke-dasharray=\"%s\"/>",
                    x, y + 6, x + 12, y + 6, BASE_COLORS[k], BASE_DASH[k]);
            fprintf(out, "<text x=\"%d\" y=\"%d\">", x + 17, y + 10);
            put_escaped(out, d->baselines[b]);
        }
        fprintf(out, "</text>\n");
    }
    fprintf(out, "</g>\n");

    for (int s = 0; s < d->nshapes; s++) {
        const int px = PAD + (s % cols) * PANEL_W, py = panels_top + (s / cols) * PANEL_H;
        const int x0 = px + AXIS_L, x1 = px + PANEL_W - 12;
        const int y0 = py + PANEL_H - AXIS_B - 12, y1 = py + PANEL_T; /* plot area, y0 bottom */
        double vmax = 0;
        for (int i = 0; i < d->nrows; i++)
            if (!strcmp(d->rows[i].shape, d->shapes[s]) && d->rows[i].value > vmax)
                vmax = d->rows[i].value;
        const double step = nice_step(vmax * 1.05);
        const int nticks = (int)ceil(vmax * 1.05 / step);
        const double top = step * (nticks > 0 ? nticks : 1);
#define YPOS(v) (y0 - (double)(y0 - y1) * (v) / top)
        fprintf(out, "<g class=\"panel\">\n");
        fprintf(out, "<text class=\"panel-title\" x=\"%d\" y=\"%d\" font-weight=\"bold\">", x0,
                py + 18);
        put_escaped(out, d->shape_name);
        fputs(" = ", out);
        put_escaped(out, d->shapes[s]);
        fprintf(out, "</text>\n");
        /* tick labels with as many decimals as the step has */
        int decimals = 0;
        for (double scaled = step; decimals < 6 && fabs(scaled - round(scaled)) > 1e-9 * scaled;
             scaled *= 10)
            decimals++;
        for (int t = 0; t <= nticks; t++) {
            char v[32];
            snprintf(v, sizeof v, "%.*f", decimals, step * t);
            const double y = YPOS(step * t);
            fprintf(out,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555555\">%s</text>\n",
                    x0, y, x1, y, x0 - 4, y + 4, v);
        }
        fprintf(out,
                "<text class=\"axis-label\" transform=\"translate(%d %d) rotate(-90)\" "
                "text-anchor=\"middle\" fill=\"#555555\">",
                px + 12, (y0 + y1) / 2);
        put_escaped(out, d->unit);
        fprintf(out, "</text>\n");
        fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888888\"/>\n", x0,
                y0, x1, y0);
        const double slot = (double)(x1 - x0) / d->nseries, bw = slot * 0.8;
        for (int k = 0; k < d->nseries; k++) {
            const plot_row *r = find_row(d, d->shapes[s], d->series[k]);
            if (!r) continue;
            char color[8];
            series_color(k, d->nseries, color);
            const double x = x0 + k * slot + (slot - bw) / 2, y = YPOS(r->value);
            fprintf(out,
                    "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"%s\"><title>",
                    x, y, bw, y0 - y, color);
            put_label(out, r, d->unit);
            fprintf(out, "</title></rect>\n");
        }
        for (int b = 0; b < d->nbaselines; b++) {
            const plot_row *r = find_row(d, d->shapes[s], d->baselines[b]);
            if (!r) continue;
            const int k = b % 4;
            const double y = YPOS(r->value);
            fprintf(out,
                    "<line class=\"baseline\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"><title>",
                    x0, y, x1, y, BASE_COLORS[k], BASE_DASH[k]);
            put_label(out, r, d->unit);
            fprintf(out, "</title></line>\n");
        }
        fprintf(out, "</g>\n");
#undef YPOS
    }
    fprintf(out, "</svg>\n");
}

int plot_csv(const char *csv, size_t len, const char *title, FILE *out, char *err,
             size_t errlen) {
    plot_data *d = calloc(1, sizeof *d);
    if (d) d->rows = calloc(MAX_ROWS, sizeof *d->rows);
    if (!d || !d->rows) {
        if (d) free(d);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = parse(csv, len, d, err, errlen);
    if (rc == 0) {
        /* the title: given, else the chapter name that starts the run line ("06_wgmma_tma: ...") */
        char heading[FIELD];
        if (title && *title) {
            snprintf(heading, sizeof heading, "%s", title);
        } else {
            snprintf(heading, sizeof heading, "%s", d->nnotes >= 3 ? d->notes[2] : "benchmark");
            char *colon = strchr(heading, ':');
            if (colon) *colon = '\0';
        }
        draw(d, heading, out);
        if (ferror(out)) {
            snprintf(err, errlen, "write error");
            rc = -1;
        }
    }
    free(d->rows);
    free(d);
    return rc;
}

int plot_csv_file(const char *csv_path, const char *svg_path, const char *title, char *err,
                  size_t errlen) {
    FILE *in = fopen(csv_path, "rb");
    if (!in) {
        snprintf(err, errlen, "cannot read %s", csv_path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, in)) > 0) {
        len += got;
        if (len == cap) {
            char *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more, cap *= 2;
        }
    }
    fclose(in);
    if (!buf) {
        snprintf(err, errlen, "out of memory reading %s", csv_path);
        return -1;
    }
    FILE *out = fopen(svg_path, "w");
    if (!out) {
        free(buf);
        snprintf(err, errlen, "cannot write %s", svg_path);
        return -1;
    }
    int rc = plot_csv(buf, len, title, out, err, errlen);
    if (fclose(out) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write %s", svg_path);
        rc = -1;
    }
    free(buf);
    return rc;
}
