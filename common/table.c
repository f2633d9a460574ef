/* The table printer: aligned text for the terminal, Markdown for READMEs, CSV for scripts. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

void table_init(table *t, int ncols, const char *const headers[], const bool right[]) {
    memset(t, 0, sizeof *t);
    t->ncols = ncols > TABLE_MAX_COLS ? TABLE_MAX_COLS : ncols;
    for (int c = 0; c < t->ncols; c++) {
        t->headers[c] = headers[c];
        t->right[c] = right ? right[c] : false;
    }
}

void table_add(table *t, const char *const cells[]) {
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        void *p = realloc(t->cells, (size_t)cap * sizeof *t->cells);
        if (!p) {
            fprintf(stderr, "out of host memory for the table\n");
            exit(EXIT_KERNEL_FAILED);
        }
        t->cells = p;
        t->cap = cap;
    }
    for (int c = 0; c < t->ncols; c++)
        snprintf(t->cells[t->nrows][c], TABLE_CELL, "%s", cells[c] ? cells[c] : "");
    t->nrows++;
}

static void print_csv_cell(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void print_md_cell(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s, f);
    }
}

void table_print(const table *t, FILE *f, table_format fmt) {
    if (fmt == FORMAT_CSV) {
        for (int c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            print_csv_cell(f, t->headers[c]);
        }
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c) fputc(',', f);
                print_csv_cell(f, t->cells[r][c]);
            }
            fputc('\n', f);
        }
        return;
    }
    if (fmt == FORMAT_MD) {
        fputc('|', f);
        for (int c = 0; c < t->ncols; c++) {
            fputc(' ', f);
            print_md_cell(f, t->headers[c]);
            fputs(" |", f);
        }
        fputs("\n|", f);
        for (int c = 0; c < t->ncols; c++) fputs(t->right[c] ? " ---: |" : " --- |", f);
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            fputc('|', f);
            for (int c = 0; c < t->ncols; c++) {
                fputc(' ', f);
                print_md_cell(f, t->cells[r][c]);
                fputs(" |", f);
            }
            fputc('\n', f);
        }
        return;
    }
    int width[TABLE_MAX_COLS];
    for (int c = 0; c < t->ncols; c++) {
        width[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->nrows; r++) {
            int w = (int)strlen(t->cells[r][c]);
            if (w > width[c]) width[c] = w;
        }
    }
    /* The last column is left unpadded when left-aligned, so lines carry no trailing blanks. */
    for (int c = 0; c < t->ncols; c++) {
        bool pad = t->right[c] || c < t->ncols - 1;
        fprintf(f, "%s%*s", c ? "  " : "", pad ? (t->right[c] ? width[c] : -width[c]) : 0,
                t->headers[c]);
    }
    fputc('\n', f);
    for (int c = 0; c < t->ncols; c++) {
        fprintf(f, "%s", c ? "  " : "");
        for (int i = 0; i < width[c]; i++) fputc('-', f);
    }
    fputc('\n', f);
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            if (c == t->ncols - 1 && !t->right[c])
                fprintf(f, "%s%s", c ? "  " : "", t->cells[r][c]);
            else
                fprintf(f, "%s%*s", c ? "  " : "", t->right[c] ? width[c] : -width[c],
                        t->cells[r][c]);
        }
        fputc('\n', f);
    }
}

void table_free(table *t) {
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

void fmt_size(char *buf, size_t len, double bytes) {
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    if (bytes == (double)(long)bytes) snprintf(buf, len, "%ld %s", (long)bytes, unit[u]);
    else snprintf(buf, len, "%.1f %s", bytes, unit[u]);
}
