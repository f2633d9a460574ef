/* Host unit tests of the harness: statistics, error metrics, argument parsing, table output,
 * and the fp16/bf16/fp8 conversions. No GPU needed. Prints PASS/FAIL lines for tests/run.sh. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int failures;

#define EXPECT(cond, name)                                                                         \
    do {                                                                                           \
        if (cond) printf("PASS %s\n", name);                                                       \
        else {                                                                                     \
            printf("FAIL %s (%s:%d: %s)\n", name, __FILE__, __LINE__, #cond);                      \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void test_stats(void) {
    float odd[] = {5, 1, 3};
    time_stats s = stats_compute(odd, 3);
    EXPECT(s.median_ms == 3 && s.min_ms == 1 && s.max_ms == 5 && s.count == 3, "stats: median of odd count");
    float even[] = {4, 1, 3, 2};
    s = stats_compute(even, 4);
    EXPECT(s.median_ms == 2.5 && s.mean_ms == 2.5, "stats: median of even count is the middle mean");
    s = stats_compute(NULL, 0);
    EXPECT(s.count == 0 && s.median_ms == 0, "stats: empty input");
    float outlier[] = {1, 1, 1, 1, 100};
    s = stats_compute(outlier, 5);
    EXPECT(s.median_ms == 1 && s.max_ms == 100, "stats: median ignores one outlier");
}

static void test_metrics(void) {
    error_metrics m;
    metrics_init(&m);
    for (long i = 0; i < 100; i++) metrics_add(&m, i, (double)i, (double)i, 0, 0);
    metrics_finish(&m);
    EXPECT(metrics_pass(&m, 1e-6) && m.rel_l2 == 0 && m.first_bad == -1, "metrics: exact match passes");

    metrics_init(&m);
    metrics_add(&m, 0, 1.0, 1.0, 0, 1e-6);
    metrics_add(&m, 1, NAN, 2.0, 0, 1e-6);
    metrics_add(&m, 2, 3.0, 3.0, 0, 1e-6);
    metrics_finish(&m);
    EXPECT(!metrics_pass(&m, 1) && m.nonfinite == 1 && m.first_bad == 1, "metrics: NaN detected at its index");
    EXPECT(isnan(m.rel_l2), "metrics: NaN output makes rel_l2 NaN");

    /* 0xFFFFFFFF, the poison pattern, is a NaN in fp32 */
    uint32_t poison = 0xFFFFFFFFu;
    float pf;
    memcpy(&pf, &poison, 4);
    metrics_init(&m);
    metrics_add(&m, 7, pf, 0.5, 1, 1);
    metrics_finish(&m);
    EXPECT(!metrics_pass(&m, 1e9) && m.first_bad == 7, "metrics: poisoned element fails even with huge tolerance");

    metrics_init(&m);
    metrics_add(&m, 0, INFINITY, 1.0, 0, 1);
    metrics_finish(&m);
    EXPECT(!metrics_pass(&m, 1e9) && m.nonfinite == 1, "metrics: Inf output detected");

    metrics_init(&m);
    metrics_add(&m, 0, INFINITY, INFINITY, 0, 0);
    metrics_finish(&m);
    EXPECT(m.bad == 0, "metrics: Inf equal to an Inf reference is not an error");

    metrics_init(&m);
    metrics_add(&m, 0, 1.001, 1.0, 0, 1e-2);
    metrics_add(&m, 1, 2.0, 2.0, 0, 1e-2);
    metrics_finish(&m);
    EXPECT(m.bad == 0 && fabs(m.rel_l2 - 0.001 / sqrt(5.0)) < 1e-9, "metrics: rel L2 value");
    EXPECT(!metrics_pass(&m, 1e-4), "metrics: rel L2 above the bound fails");

    metrics_init(&m);
    metrics_add(&m, 0, 1.1, 1.0, 0, 1e-2);
    metrics_finish(&m);
    EXPECT(!metrics_pass(&m, 1) && m.bad == 1, "metrics: element outside tolerance fails");

    char buf[256];
    metrics_describe(&m, buf, sizeof buf);
    EXPECT(strstr(buf, "index 0") != NULL, "metrics: description names the first wrong index");

    metrics_init(&m);
    metrics_finish(&m);
    EXPECT(!metrics_pass(&m, 1), "metrics: nothing compared never passes");
}

static void test_parse_size(void) {
    long v;
    EXPECT(parse_size("4096", &v) && v == 4096, "parse_size: plain number");
    EXPECT(parse_size("64K", &v) && v == 65536, "parse_size: K suffix");
    EXPECT(parse_size("2M", &v) && v == 2L << 20, "parse_size: M suffix");
    EXPECT(parse_size("2^28", &v) && v == 1L << 28, "parse_size: 2^N");
    EXPECT(!parse_size("0", &v), "parse_size: zero rejected");
    EXPECT(!parse_size("-3", &v), "parse_size: negative rejected");
    EXPECT(!parse_size("abc", &v), "parse_size: non-numeric rejected");
    EXPECT(!parse_size("12x", &v), "parse_size: trailing junk rejected");
    EXPECT(!parse_size("", &v), "parse_size: empty rejected");
    EXPECT(!parse_size("99999999999999999999999", &v), "parse_size: overflow rejected");
    EXPECT(!parse_size("3^4", &v), "parse_size: only powers of two with ^");
    EXPECT(!parse_size("9223372036854775807G", &v), "parse_size: suffix overflow rejected");
}

static int parse(run_args *a, const char *line, int nsizes, const char *const *names, char *err) {
    static char buf[512]; /* run_args keeps pointers into argv, so it must outlive the call */
    snprintf(buf, sizeof buf, "prog %s", line);
    char *argv[32];
    int argc = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t && argc < 32; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    return args_parse(a, argc, argv, nsizes, names, NULL, err, 256);
}

static void test_args(void) {
    const char *names1[] = {"n"};
    const char *names3[] = {"m", "n", "k"};
    run_args a;
    char err[256];
    EXPECT(parse(&a, "", 1, names1, err) == 0 && a.mode == MODE_RUN && a.iters == 20 && a.sizes[0].count == 0,
           "args: defaults");
    EXPECT(parse(&a, "--n 1,33,2^20", 1, names1, err) == 0 && a.sizes[0].count == 3 &&
               a.sizes[0].values[2] == 1L << 20,
           "args: size list");
    EXPECT(parse(&a, "--n=77 --iters=5 --seed 42", 1, names1, err) == 0 && a.sizes[0].values[0] == 77 &&
               a.iters == 5 && a.seed == 42 && a.seed_given,
           "args: --opt=value and --opt value");
    EXPECT(parse(&a, "--n 0", 1, names1, err) == EXIT_BAD_USAGE && strstr(err, "--n"), "args: zero size is bad usage");
    EXPECT(parse(&a, "--n -1", 1, names1, err) == EXIT_BAD_USAGE, "args: negative size is bad usage");
    EXPECT(parse(&a, "--n", 1, names1, err) == EXIT_BAD_USAGE, "args: missing value is bad usage");
    EXPECT(parse(&a, "--m 5", 1, names1, err) == EXIT_BAD_USAGE && strstr(err, "--m"),
           "args: size option of another chapter is unknown");
    EXPECT(parse(&a, "--bogus", 1, names1, err) == EXIT_BAD_USAGE && strstr(err, "--bogus"), "args: unknown option");
    EXPECT(parse(&a, "--iters 0", 1, names1, err) == EXIT_BAD_USAGE, "args: zero iterations rejected");
    EXPECT(parse(&a, "--format xml", 1, names1, err) == EXIT_BAD_USAGE, "args: unknown format rejected");
    EXPECT(parse(&a, "--format md --list", 1, names1, err) == 0 && a.format == FORMAT_MD && a.mode == MODE_LIST,
           "args: format and list");
    EXPECT(parse(&a, "--m 128 --n 256 --k 64", 3, names3, err) == 0 && a.sizes[2].values[0] == 64,
           "args: three size options");
    EXPECT(parse(&a, "--check --quick", 1, names1, err) == 0 && a.mode == MODE_CHECK && a.quick, "args: check mode");

    const char *known[] = {"naive", "float4"};
    EXPECT(parse(&a, "--kernel float4 --kernel ex_naive", 1, names1, err) == 0 &&
               args_check_kernels(&a, known, 2, true, err, sizeof err) == 0,
           "args: known kernel and exercise names accepted");
    EXPECT(args_selects(&a, "float4") && !args_selects(&a, "naive") && args_selects(&a, "ex_naive"),
           "args: selection follows --kernel");
    EXPECT(parse(&a, "--kernel nope", 1, names1, err) == 0 &&
               args_check_kernels(&a, known, 2, true, err, sizeof err) == EXIT_BAD_USAGE &&
               strstr(err, "nope") && strstr(err, "naive") && strstr(err, "float4"),
           "args: unknown kernel lists the known names");
    EXPECT(parse(&a, "--kernel ex_naive", 1, names1, err) == 0 &&
               args_check_kernels(&a, known, 2, false, err, sizeof err) == EXIT_BAD_USAGE,
           "args: ex_ names rejected where a chapter has no exercises");
}

static char *capture(const table *t, table_format fmt) {
    static char buf[4096];
    memset(buf, 0, sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    table_print(t, f, fmt);
    fclose(f);
    return buf;
}

static void test_table(void) {
    const char *headers[] = {"kernel", "GB/s", "status"};
    const bool right[] = {false, true, false};
    table t;
    table_init(&t, 3, headers, right);
    const char *r1[] = {"naive", "3012", "ok"};
    const char *r2[] = {"a,b \"x\"", "7", "FAIL | bad"};
    table_add(&t, r1);
    table_add(&t, r2);
    char *text = capture(&t, FORMAT_TEXT);
    EXPECT(strstr(text, "kernel   GB/s  status\n") != NULL, "table: text header aligned");
    EXPECT(strstr(text, "naive    3012  ok\n") != NULL, "table: numbers right-aligned");
    EXPECT(strstr(text, "a,b \"x\"     7  FAIL | bad\n") != NULL, "table: short numbers padded");
    char *md = capture(&t, FORMAT_MD);
    EXPECT(strstr(md, "| kernel | GB/s | status |\n| --- | ---: | --- |\n") != NULL, "table: markdown header");
    EXPECT(strstr(md, "FAIL \\| bad") != NULL, "table: markdown escapes pipes");
    char *csv = capture(&t, FORMAT_CSV);
    EXPECT(strstr(csv, "kernel,GB/s,status\nnaive,3012,ok\n\"a,b \"\"x\"\"\",7,FAIL | bad\n") != NULL,
           "table: csv quoting");
    for (int i = 0; i < 100; i++) table_add(&t, r1);
    EXPECT(t.nrows == 102, "table: grows past its first allocation");
    table_free(&t);
}

static void test_conversions(void) {
    EXPECT(f32_to_f16(1.0f) == 0x3C00 && f16_to_f32(0x3C00) == 1.0f, "f16: one");
    EXPECT(f32_to_f16(-2.5f) == 0xC100, "f16: negative");
    EXPECT(f32_to_f16(65504.0f) == 0x7BFF && f32_to_f16(65520.0f) == 0x7C00, "f16: max finite, overflow to Inf");
    EXPECT(f32_to_f16(1.0f + 0x1p-11f) == 0x3C00 && f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02,
           "f16: ties round to even");
    EXPECT(f32_to_f16(0x1p-24f) == 0x0001 && f16_to_f32(0x0001) == 0x1p-24f, "f16: smallest subnormal");
    EXPECT(f32_to_f16(0x1p-26f) == 0x0000, "f16: underflow to zero");
    EXPECT((f32_to_f16(NAN) & 0x7C00) == 0x7C00 && (f32_to_f16(NAN) & 0x3FF), "f16: NaN kept");
    EXPECT(isnan(f16_to_f32(0xFFFF)), "f16: 0xFFFF (poison) is NaN");
    int roundtrip = 1;
    for (uint32_t h = 0; h < 0x7C00; h++)
        if (f32_to_f16(f16_to_f32((uint16_t)h)) != h) roundtrip = 0;
    EXPECT(roundtrip, "f16: every finite positive value round-trips");
    EXPECT(f32_to_bf16(1.0f) == 0x3F80 && bf16_to_f32(0x3F80) == 1.0f, "bf16: one");
    EXPECT(f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80 && f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82,
           "bf16: ties round to even");
    EXPECT(isnan(bf16_to_f32(f32_to_bf16(NAN))) && isnan(bf16_to_f32(0xFFFF)), "bf16: NaN kept, poison is NaN");
    EXPECT(f32_to_e4m3(448.0f) == 0x7E && e4m3_to_f32(0x7E) == 448.0f, "e4m3: max finite 448");
    EXPECT(f32_to_e4m3(1000.0f) == 0x7E && f32_to_e4m3(-1000.0f) == 0xFE, "e4m3: saturates");
    EXPECT(f32_to_e4m3(1.0f) == 0x38 && e4m3_to_f32(0x38) == 1.0f, "e4m3: one");
    EXPECT(f32_to_e4m3(0x1p-9f) == 0x01 && e4m3_to_f32(0x01) == 0x1p-9f, "e4m3: smallest subnormal");
    EXPECT(isnan(e4m3_to_f32(0x7F)) && isnan(e4m3_to_f32(f32_to_e4m3(NAN))), "e4m3: NaN");
    EXPECT(f32_to_e4m3(1.0625f) == 0x38 && f32_to_e4m3(1.1875f) == 0x3A, "e4m3: ties round to even");
    int e4_roundtrip = 1;
    for (int v = 0; v < 0x7F; v++)
        if (f32_to_e4m3(e4m3_to_f32((uint8_t)v)) != v) e4_roundtrip = 0;
    EXPECT(e4_roundtrip, "e4m3: every finite positive value round-trips");
}

int main(void) {
    test_stats();
    test_metrics();
    test_parse_size();
    test_args();
    test_table();
    test_conversions();
    return failures ? 1 : 0;
}
