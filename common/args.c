/* Command-line parsing shared by every chapter driver. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static int usage_error(char *err, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return EXIT_BAD_USAGE;
}

bool parse_size(const char *text, long *out) {
    if (!text || !*text) return false;
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '-' || *p == '+') return false;
    if (!isdigit((unsigned char)*p)) return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno == ERANGE || v > (unsigned long long)LONG_MAX) return false;
    if (end[0] == '^') { /* 2^N */
        if (v != 2) return false;
        char *end2 = NULL;
        if (!isdigit((unsigned char)end[1])) return false;
        unsigned long long e = strtoull(end + 1, &end2, 10);
        if (e > 62 || *end2) return false;
        v = 1ull << e;
        end = end2;
    } else if (*end) {
        int shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return false;
        }
        if (end[1]) return false;
        if (v > ((unsigned long long)LONG_MAX >> shift)) return false;
        v <<= shift;
    }
    if (v == 0) return false;
    *out = (long)v;
    return true;
}

static bool parse_int(const char *text, int lo, int hi, int *out) {
    if (!text || !*text) return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static bool parse_u64(const char *text, uint64_t *out) {
    if (!text || !*text || *text == '-') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end) return false;
    *out = (uint64_t)v;
    return true;
}

/* "--opt=value" or "--opt value": returns the value and advances *i, or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *opt) {
    const char *arg = argv[*i];
    size_t len = strlen(opt);
    if (strncmp(arg, opt, len) != 0) return NULL;
    if (arg[len] == '=') return arg + len + 1;
    if (arg[len] != '\0') return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}

static bool is_option(const char *arg, const char *opt) {
    size_t len = strlen(opt);
    return strncmp(arg, opt, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

int args_parse(run_args *a, int argc, char **argv, int nsizes, const char *const size_names[],
               const char *const size_help[], char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->mode = MODE_RUN;
    a->iters = 20;
    a->warmup = 3;
    a->format = FORMAT_TEXT;
    if (nsizes > MAX_SIZE_OPTIONS) nsizes = MAX_SIZE_OPTIONS;
    a->nsizes = nsizes;
    for (int s = 0; s < nsizes; s++) {
        a->sizes[s].name = size_names[s];
        a->sizes[s].help = size_help ? size_help[s] : "";
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        bool matched = false;
        for (int s = 0; s < nsizes && !matched; s++) {
            char opt[64];
            snprintf(opt, sizeof opt, "--%s", size_names[s]);
            if (!is_option(arg, opt)) continue;
            matched = true;
            v = option_value(argc, argv, &i, opt);
            size_option *so = &a->sizes[s];
            so->count = 0;
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", v);
            if (!buf[0]) return usage_error(err, errlen, "%s needs a value", opt);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (so->count == MAX_SIZE_VALUES)
                    return usage_error(err, errlen, "%s: at most %d values", opt, MAX_SIZE_VALUES);
                if (!parse_size(tok, &so->values[so->count]))
                    return usage_error(err, errlen,
                                       "%s: '%s' is not a positive size (use e.g. 4096, 64K, 2^20)",
                                       opt, tok);
                so->count++;
            }
            if (so->count == 0) return usage_error(err, errlen, "%s needs a value", opt);
        }
        if (matched) continue;
        if ((v = option_value(argc, argv, &i, "--kernel"))) {
            if (!*v) return usage_error(err, errlen, "--kernel needs a name (see --list)");
            if (a->nkernels == MAX_KERNEL_ARGS)
                return usage_error(err, errlen, "too many --kernel options");
            a->kernels[a->nkernels++] = v;
        } else if ((v = option_value(argc, argv, &i, "--iters"))) {
            if (!parse_int(v, 1, 100000, &a->iters))
                return usage_error(err, errlen, "--iters: '%s' is not a whole number from 1 to 100000", v);
        } else if ((v = option_value(argc, argv, &i, "--warmup"))) {
            if (!parse_int(v, 0, 10000, &a->warmup))
                return usage_error(err, errlen, "--warmup: '%s' is not a whole number from 0 to 10000", v);
        } else if ((v = option_value(argc, argv, &i, "--seed"))) {
            if (!parse_u64(v, &a->seed))
                return usage_error(err, errlen, "--seed: '%s' is not a non-negative integer", v);
            a->seed_given = true;
        } else if ((v = option_value(argc, argv, &i, "--format"))) {
            if (!strcmp(v, "text")) a->format = FORMAT_TEXT;
            else if (!strcmp(v, "md")) a->format = FORMAT_MD;
            else if (!strcmp(v, "csv")) a->format = FORMAT_CSV;
            else return usage_error(err, errlen, "--format: '%s' is not one of text, md, csv", v);
        } else if ((v = option_value(argc, argv, &i, "--save"))) {
            if (!*v) return usage_error(err, errlen, "--save needs a path prefix");
            a->save = v;
        } else if ((v = option_value(argc, argv, &i, "--plot-from"))) {
            if (!*v) return usage_error(err, errlen, "--plot-from needs a CSV file (from --save)");
            a->plot_from = v;
        } else if ((v = option_value(argc, argv, &i, "--plot"))) {
            if (!*v) return usage_error(err, errlen, "--plot needs an output file name (.svg)");
            a->plot = v;
        } else if (!strcmp(arg, "--list")) {
            a->mode = MODE_LIST;
        } else if (!strcmp(arg, "--check")) {
            a->mode = MODE_CHECK;
        } else if (!strcmp(arg, "--test")) {
            a->mode = MODE_TEST;
        } else if (!strcmp(arg, "--bench")) {
            a->mode = MODE_BENCH;
        } else if (!strcmp(arg, "--quick")) {
            a->quick = true;
        } else if (!strcmp(arg, "--no-library")) {
            a->library_off = true;
        } else if (!strcmp(arg, "--sass-spec")) {
            a->mode = MODE_SASS_SPEC;
        } else if (!strcmp(arg, "--launchers")) {
            a->mode = MODE_LAUNCHERS;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            a->mode = MODE_HELP;
        } else {
            return usage_error(err, errlen, "unknown option '%s' (try --help)", arg);
        }
    }
    if (!a->seed_given) a->seed = fresh_seed();
    return 0;
}

const char *exercise_name(const char *stage_name, char *buf, size_t len) {
    snprintf(buf, len, "ex_%s", stage_name);
    return buf;
}

int args_check_kernels(const run_args *a, const char *const names[], int count, bool exercises,
                       char *err, size_t errlen) {
    for (int k = 0; k < a->nkernels; k++) {
        bool found = false;
        for (int j = 0; j < count && !found; j++) {
            char ex[128];
            found = !strcmp(a->kernels[k], names[j]) ||
                    (exercises && !strcmp(a->kernels[k], exercise_name(names[j], ex, sizeof ex)));
        }
        if (!found) {
            size_t off = (size_t)snprintf(err, errlen, "unknown kernel '%s'; known kernels:",
                                          a->kernels[k]);
            for (int j = 0; j < count && off < errlen; j++)
                off += (size_t)snprintf(err + off, errlen - off, " %s", names[j]);
            if (exercises && off < errlen)
                snprintf(err + off, errlen - off, " (exercises: ex_<name>)");
            return EXIT_BAD_USAGE;
        }
    }
    return 0;
}

bool args_selects(const run_args *a, const char *name) {
    if (a->nkernels == 0) return true;
    for (int k = 0; k < a->nkernels; k++)
        if (!strcmp(a->kernels[k], name)) return true;
    return false;
}

void print_usage(FILE *f, const char *prog, const char *chapter_help, const run_args *a) {
    fprintf(f, "usage: %s [options]\n\n%s\n\nsizes (comma-separated lists; 4096, 64K, 2^20 all work):\n",
            prog, chapter_help);
    for (int s = 0; s < a->nsizes; s++)
        fprintf(f, "  --%-14s %s\n", a->sizes[s].name, a->sizes[s].help);
    fprintf(f,
            "options:\n"
            "  --kernel NAME    run only this kernel (repeatable); ex_NAME is your exercise\n"
            "  --iters N        timed launches per kernel, median reported (default 20)\n"
            "  --warmup N       untimed launches first (default 3)\n"
            "  --seed S         reproduce a run's random inputs (the seed is printed)\n"
            "  --format F       text, md or csv (default text)\n"
            "  --save PREFIX    also write PREFIX.md and PREFIX.csv\n"
            "  --plot FILE.svg  also draw the table as a chart: one panel per size, a bar per\n"
            "                   stage, the library and memcpy as dashed lines\n"
            "  --plot-from CSV  with --plot: draw a table saved by --save (no GPU needed)\n"
            "  --table-from CSV print a README table from CSVs saved by --save (no GPU needed;\n"
            "                   its options: common/table_from.h)\n"
            "  --list           list the kernels\n"
            "  --check          check your exercises at the test shapes (PASS/FAIL/TODO)\n"
            "  --test           check every kernel at the test shapes (for make test)\n"
            "  --quick          with --test/--check: small shapes only (for compute-sanitizer)\n"
            "  --no-library     leave the library rows out (the others are checked as always)\n"
            "                   (make sanitize-NN: the sanitizer then judges our kernels alone)\n"
            "  --bench          the chapter's benchmark sweep\n"
            "  --sass-spec      print the SASS expectations checked by make test\n"
            "  --launchers      each row's launcher function (make progress reads it)\n"
            "exit status: 0 all implemented kernels correct, 1 a kernel failed, 2 bad usage, "
            "3 no usable GPU\n");
}

uint64_t fresh_seed(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
}
