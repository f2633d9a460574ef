/* Host unit tests of the harness: statistics, error metrics, argument parsing, table output,
 * the fp16/bf16/fp8 conversions, and the tensor-map checks. No GPU needed. Prints PASS/FAIL
 * lines for tests/run.sh. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "plot.h"
#include "table_from.h"
#include "tensor_map.h"

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

/* What runs where: a learner's GPU, by compute capability. */
static void test_arch(void) {
    EXPECT(arch_skip_reason(ARCH_ANY, 90) == NULL && arch_skip_reason(ARCH_SM80, 90) == NULL &&
               arch_skip_reason(ARCH_SM90A, 90) == NULL,
           "arch: Hopper (sm_90) runs every row");
    EXPECT(arch_skip_reason(ARCH_ANY, 86) == NULL && arch_skip_reason(ARCH_SM80, 86) == NULL &&
               arch_skip_reason(ARCH_SM90A, 86) && !strcmp(arch_skip_reason(ARCH_SM90A, 86), "skip: needs sm_90a"),
           "arch: Ampere (sm_86) skips only the sm_90a rows");
    EXPECT(arch_skip_reason(ARCH_SM80, 89) == NULL && arch_skip_reason(ARCH_SM90A, 89) != NULL,
           "arch: Ada (sm_89) skips only the sm_90a rows");
    EXPECT(arch_skip_reason(ARCH_ANY, 120) == NULL && arch_skip_reason(ARCH_SM80, 100) == NULL &&
               arch_skip_reason(ARCH_SM90A, 100) != NULL && arch_skip_reason(ARCH_SM90A, 120) != NULL,
           "arch: Blackwell (sm_100, sm_120) runs the generic rows, not wgmma");
    EXPECT(arch_skip_reason(ARCH_ANY, 75) != NULL && arch_skip_reason(ARCH_SM80, 75) != NULL,
           "arch: Turing (sm_75) runs nothing: everything needs sm_80");
    EXPECT(arch_cc_override(NULL) == 0 && arch_cc_override("") == 0 && arch_cc_override("86") == 86 &&
               arch_cc_override("120") == 120 && arch_cc_override("sm_86") == -1 &&
               arch_cc_override("8.6") == -1 && arch_cc_override("5") == -1,
           "arch: HARNESS_CC parses 86 and 120, refuses sm_86, 8.6, 5");
}

static void test_plot_args(void) {
    run_args a;
    char err[256];
    const char *names1[] = {"n"};
    EXPECT(parse(&a, "--plot out.svg", 1, names1, err) == 0 && a.plot && !strcmp(a.plot, "out.svg") &&
               !a.plot_from,
           "args: --plot FILE");
    EXPECT(parse(&a, "--plot-from t.csv --plot=o.svg", 1, names1, err) == 0 && a.plot_from &&
               !strcmp(a.plot_from, "t.csv") && a.plot && !strcmp(a.plot, "o.svg"),
           "args: --plot-from CSV with --plot=FILE");
    EXPECT(parse(&a, "--plot", 1, names1, err) == EXIT_BAD_USAGE, "args: --plot needs a file");
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

/* A valid map: a 256 x 192 row-major bf16 matrix (rows padded to 512 bytes), 64 x 128 boxes
 * swizzled for wgmma. Each case below breaks one field and expects the message to name it. The
 * base is never dereferenced: tensor_map_check only looks at its alignment. */
static tensor_map_desc good_map(void) {
    tensor_map_desc d = {.base = (const void *)0x10000, .type = TMAP_BF16, .rank = 2,
                         .dims = {192, 256}, .strides = {512}, .box = {64, 128},
                         .swizzle = TMAP_SWIZZLE_128B};
    return d;
}

/* True when d fails the check with a message containing want. */
static bool map_fails(const tensor_map_desc *d, const char *want) {
    char err[256] = "";
    int rc = tensor_map_check(d, err, sizeof err);
    if (rc != TENSOR_MAP_BAD_FIELD || !strstr(err, want)) {
        printf("  (tensor_map_check returned %d: \"%s\", expected \"%s\")\n", rc, err, want);
        return false;
    }
    return true;
}

static void test_tensor_map(void) {
    char err[256] = "";
    tensor_map_desc d = good_map();
    EXPECT(tensor_map_check(&d, err, sizeof err) == TENSOR_MAP_OK, "tensor map: GEMM operand map is valid");
    d = good_map();
    d.rank = 3, d.dims[2] = 4, d.strides[1] = 512 * 256, d.box[2] = 2, d.type = TMAP_U8, d.box[0] = 128;
    EXPECT(tensor_map_check(&d, err, sizeof err) == TENSOR_MAP_OK, "tensor map: 3D u8 map is valid");
    d = good_map();
    d.type = TMAP_F32, d.strides[0] = 1024, d.box[0] = 32, d.fill = TMAP_FILL_NAN;
    EXPECT(tensor_map_check(&d, err, sizeof err) == TENSOR_MAP_OK, "tensor map: f32 map with NaN fill is valid");

    d = good_map(), d.type = TMAP_TYPE_UNSET;
    EXPECT(map_fails(&d, "type is not set"), "tensor map: type not set");
    d = good_map(), d.type = (tensor_map_type)9;
    EXPECT(map_fails(&d, "type = 9"), "tensor map: unknown type");
    d = good_map(), d.rank = 1;
    EXPECT(map_fails(&d, "rank = 1, must be 2 or 3"), "tensor map: rank 1");
    d = good_map(), d.rank = 4;
    EXPECT(map_fails(&d, "rank = 4, must be 2 or 3"), "tensor map: rank 4");
    d = good_map(), d.base = NULL;
    EXPECT(map_fails(&d, "base is NULL"), "tensor map: NULL base");
    d = good_map(), d.base = (const void *)0x10008;
    EXPECT(map_fails(&d, "not 16-byte aligned"), "tensor map: base alignment");
    d = good_map(), d.dims[1] = 0;
    EXPECT(map_fails(&d, "dims[1] = 0, must be 1 .. 2^32"), "tensor map: zero dim");
    d = good_map(), d.dims[0] = (1ull << 32) + 1, d.strides[0] = 1ull << 36;
    EXPECT(map_fails(&d, "dims[0] = 4294967297, must be 1 .. 2^32"), "tensor map: dim above 2^32");
    d = good_map(), d.strides[0] = 392;
    EXPECT(map_fails(&d, "strides[0] = 392 bytes, not a multiple of 16"), "tensor map: stride alignment");
    d = good_map(), d.strides[0] = 1ull << 40;
    EXPECT(map_fails(&d, "strides[0] = 1099511627776 bytes, must be less than 2^40"), "tensor map: stride above 2^40");
    d = good_map(), d.strides[0] = 256;
    EXPECT(map_fails(&d, "strides[0] = 256 bytes, less than one row of dims[0] = 192 bf16 = 384 bytes"),
           "tensor map: rows overlap");
    d = good_map(), d.rank = 3, d.dims[2] = 2, d.strides[1] = 512 * 255, d.box[2] = 1;
    EXPECT(map_fails(&d, "strides[1] = 130560 bytes, less than dims[1] = 256 rows of strides[0] = 512 bytes"),
           "tensor map: planes overlap");
    d = good_map(), d.swizzle = (tensor_map_swizzle)7;
    EXPECT(map_fails(&d, "swizzle = 7"), "tensor map: unknown swizzle");
    d = good_map(), d.box[1] = 0;
    EXPECT(map_fails(&d, "box[1] = 0, must be 1 .. 256"), "tensor map: zero box");
    d = good_map(), d.box[1] = 512;
    EXPECT(map_fails(&d, "box[1] = 512, must be 1 .. 256"), "tensor map: box above 256");
    d = good_map(), d.box[0] = 4, d.swizzle = TMAP_SWIZZLE_NONE;
    EXPECT(map_fails(&d, "box[0] = 4 bf16 = 8 bytes, not a multiple of 16 bytes"), "tensor map: box row bytes");
    d = good_map(), d.box[0] = 128;
    EXPECT(map_fails(&d, "box[0] = 128 bf16 = 256 bytes, more than the 128-byte swizzle span"),
           "tensor map: box wider than the 128-byte swizzle");
    d = good_map(), d.box[0] = 64, d.swizzle = TMAP_SWIZZLE_64B;
    EXPECT(map_fails(&d, "box[0] = 64 bf16 = 128 bytes, more than the 64-byte swizzle span"),
           "tensor map: box wider than the 64-byte swizzle");
    d = good_map(), d.fill = (tensor_map_fill)3;
    EXPECT(map_fails(&d, "fill = 3"), "tensor map: unknown fill");
    d = good_map(), d.type = TMAP_U8, d.box[0] = 128, d.fill = TMAP_FILL_NAN;
    EXPECT(map_fails(&d, "fill = TMAP_FILL_NAN needs a floating-point type"), "tensor map: NaN fill of bytes");
}

/* How often needle occurs in hay. */
static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* Well-formed enough for a browser: every element opened is closed in order, attribute values
 * quoted, no bare '<' or '&' in text. */
static bool svg_well_formed(const char *s) {
    char stack[64][32];
    int depth = 0;
    bool root = false;
    for (const char *p = s; *p; p++) {
        if (*p == '&') {
            if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) &&
                strncmp(p, "&quot;", 6))
                return false;
            continue;
        }
        if (*p != '<') continue;
        if (p[1] == '?') { /* the XML declaration */
            p = strstr(p, "?>");
            if (!p) return false;
            continue;
        }
        const char *close = strchr(p, '>');
        if (!close) return false;
        bool quoted = false;
        for (const char *q = p + 1; q < close; q++) {
            if (*q == '"') quoted = !quoted;
            if (*q == '<' && !quoted) return false;
        }
        if (quoted) return false;
        if (p[1] == '/') {
            size_t len = strcspn(p + 2, " >");
            if (depth == 0 || strncmp(stack[depth - 1], p + 2, len) || stack[depth - 1][len])
                return false;
            depth--;
        } else if (close[-1] != '/') {
            size_t len = strcspn(p + 1, " />");
            if (depth == 64 || len >= 32) return false;
            memcpy(stack[depth], p + 1, len);
            stack[depth][len] = '\0';
            if (depth == 0) {
                if (root || strcmp(stack[0], "svg")) return false;
                root = true;
            }
            depth++;
        }
        p = close;
    }
    return root && depth == 0;
}

static char *plot_text(const char *csv, const char *title, int *rc, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = plot_csv(csv, strlen(csv), title, f, err, errlen);
    fclose(f);
    return buf;
}

static void test_plot(void) {
    /* two sizes; a library row and a ceiling row (ratio "-"), a TODO exercise, a skipped stage,
     * a quoted status with a comma, and a stage ("late") missing from the first size */
    const char *csv =
        "# GPU: Test GPU <sm_90>\n# driver 1.0 & co\n# 99_test: seed 1, median of 20\n"
        "mxnxk,kernel,dtype,time (us),TFLOPS,% peak,x cuBLAS,rel err,status\n"
        "64x64x64,peak,bf16,1.0,100.0,-,-,-,ok\n"
        "64x64x64,cublas,bf16,2.0,50.0,50.0%,-,0.0e+00,ok\n"
        "64x64x64,naive,bf16,10.0,10.0,10.0%,0.200,0.0e+00,ok\n"
        "64x64x64,ex_naive,bf16,-,-,-,-,-,TODO\n"
        "64x64x64,tiled,bf16,4.0,25.0,25.0%,0.500,0.0e+00,ok\n"
        "64x64x64,final,bf16,2.5,40.0,40.0%,0.800,0.0e+00,ok\n"
        "128x128x128,peak,bf16,1.0,800.0,-,-,-,ok\n"
        "128x128x128,cublas,bf16,2.0,400.0,50.0%,-,0.0e+00,ok\n"
        "128x128x128,naive,bf16,10.0,80.0,10.0%,0.200,0.0e+00,ok\n"
        "128x128x128,late,bf16,8.0,90.0,11.0%,0.225,0.0e+00,ok\n"
        "128x128x128,tiled,bf16,4.0,-,-,-,-,\"skip: shape, K % 8\"\n"
        "128x128x128,final,bf16,2.5,320.0,40.0%,0.800,0.0e+00,ok\n";
    char err[256] = "";
    int rc;
    char *svg = plot_text(csv, "99_test", &rc, err, sizeof err);
    EXPECT(rc == 0, "plot: a bench CSV draws");
    EXPECT(svg && svg_well_formed(svg), "plot: the SVG is well-formed");
    /* bars: naive, tiled, final at 64; naive, late, final at 128 (tiled skipped there) */
    EXPECT(svg && count_of(svg, "class=\"bar\"") == 6, "plot: one bar per stage row with a throughput");
    EXPECT(svg && count_of(svg, "class=\"baseline\"") == 4, "plot: library and ceiling as lines per size");
    EXPECT(svg && count_of(svg, "class=\"panel\"") == 2, "plot: one panel per size");
    EXPECT(svg && !strstr(svg, "ex_naive"), "plot: rows without a number are left out");
    EXPECT(svg && strstr(svg, "99_test: TFLOPS by stage") && strstr(svg, ">TFLOPS</text>"),
           "plot: title and axis name the unit");
    EXPECT(svg && strstr(svg, "Test GPU &lt;sm_90&gt;") && strstr(svg, "1.0 &amp; co"),
           "plot: text is escaped");
    /* legend order follows the table: naive, late, tiled, final */
    const char *n = svg ? strstr(svg, ">naive</text>") : NULL, *l = svg ? strstr(svg, ">late</text>") : NULL,
               *t = svg ? strstr(svg, ">tiled</text>") : NULL, *f = svg ? strstr(svg, ">final</text>") : NULL;
    EXPECT(n && l && t && f && n < l && l < t && t < f, "plot: stages in table order");
    EXPECT(svg && strstr(svg, "final (bf16) at 128x128x128: 320 TFLOPS, % peak 40.0%, x cuBLAS 0.800"),
           "plot: hover text carries the numbers");
    free(svg);
    svg = plot_text("mxnxk,kernel,time (us)\n", NULL, &rc, err, sizeof err);
    EXPECT(rc != 0 && strstr(err, "header"), "plot: a CSV without a throughput column is refused");
    free(svg);
    svg = plot_text("n,kernel,time (us),GB/s,status\n64,a,-,-,TODO\n", NULL, &rc, err, sizeof err);
    EXPECT(rc != 0 && strstr(err, "nothing") == NULL && strstr(err, "no row"),
           "plot: a table with nothing measured is refused");
    free(svg);
}

/* --table-from: the README tables from fixed CSVs (two GPUs' bench runs, 08-style rows against
 * a compare_sdpa.py CSV), each form printed exactly. */
static char g_dir[64];

static void write_csv(const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The table (or NULL) and the exit code for a command line of space-separated words; a word
 * naming a CSV is taken from g_dir. */
static char *table_text(const char *line, int *rc, char *err, size_t errlen) {
    static char buf[1024], paths[8][512];
    char *argv[32], *save = NULL;
    int argc = 0, np = 0;
    snprintf(buf, sizeof buf, "prog %s", line);
    for (char *t = strtok_r(buf, " ", &save); t && argc < 32; t = strtok_r(NULL, " ", &save)) {
        if (argc > 0 && !strcmp(argv[argc - 1], "--table-from") && np < 8) {
            char *s2 = NULL;
            size_t k = 0;
            paths[np][0] = '\0';
            for (char *c = strtok_r(t, ",", &s2); c; c = strtok_r(NULL, ",", &s2)) {
                char *eq = strchr(c, '='); /* NAME=CSV */
                k += (size_t)snprintf(paths[np] + k, sizeof paths[0] - k, "%s%.*s%s/%s",
                                      k ? "," : "", eq ? (int)(eq - c + 1) : 0, c, g_dir,
                                      eq ? eq + 1 : c);
            }
            t = paths[np++];
        }
        argv[argc++] = t;
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    *rc = table_from_main(argc, argv, f, err, errlen);
    fclose(f);
    return out;
}

static void expect_table(const char *line, const char *want, const char *name) {
    char err[512] = "";
    int rc;
    char *got = table_text(line, &rc, err, sizeof err);
    const bool ok = rc == 0 && got && !strcmp(got, want);
    EXPECT(ok, name);
    if (!ok) printf("  --table-from %s\n  exit %d %s\n%s", line, rc, err, got ? got : "");
    free(got);
}

static void expect_refused(const char *line, const char *says, const char *name) {
    char err[512] = "";
    int rc;
    free(table_text(line, &rc, err, sizeof err));
    EXPECT(rc == EXIT_BAD_USAGE && strstr(err, says), name);
    if (rc != EXIT_BAD_USAGE || !strstr(err, says)) printf("  exit %d: %s\n", rc, err);
}

static void test_table_from(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/table_from_XXXXXX");
    if (!mkdtemp(g_dir)) {
        EXPECT(false, "table_from: a temporary folder");
        return;
    }
    const char *head = "mxnxk,kernel,dtype,time (us),TFLOPS,x cuBLAS,rel err,status\n";
    char h100[2048], h200[2048];
    snprintf(h100, sizeof h100, "# GPU: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n# driver 1\n# 99_test: seed 1\n%s%s", head,
             "1024x1024x1024,cublas,bf16,10.00,214.7,-,0.0e+00,ok\n"
             "1024x1024x1024,naive,bf16,100.0,21.47,0.100,1.0e-03,ok\n"
             "1024x1024x1024,fast,bf16,9.000,238.6,1.111,1.0e-03,ok\n"
             "1024x1024x1024,ex_fast,bf16,-,-,-,-,TODO\n"
             "64x4096x512,cublas,bf16,2.000,134.2,-,0.0e+00,ok\n"
             "64x4096x512,naive,bf16,-,-,-,-,\"skip: shape, K % 8\"\n"
             "64x4096x512,fast,bf16,2.500,107.4,0.800,1.0e-03,ok\n"
             "64x4096x512,ex_fast,bf16,-,-,-,-,TODO\n");
    snprintf(h200, sizeof h200, "# GPU: NVIDIA H200 (sm_90, 132 SMs)\n# driver 1\n# 99_test: seed 2\n%s%s", head,
             "1024x1024x1024,cublas,bf16,9.000,238.6,-,0.0e+00,ok\n"
             "1024x1024x1024,fast,bf16,8.571,250.5,1.050,1.0e-03,ok\n"
             "64x4096x512,cublas,bf16,2.000,134.2,-,0.0e+00,ok\n"
             "64x4096x512,fast,bf16,1.961,136.9,1.020,1.0e-03,ok\n");
    write_csv("h100.csv", h100);
    write_csv("h200.csv", h200);
    write_csv("ours.csv", "# GPU: NVIDIA H100 80GB HBM3 (sm_90)\n"
                          "bxhxnxd,kernel,dtype,time (us),TFLOPS,x naive,rel err,status\n"
                          "4x16x4096x128,f16_naive,fp16,500.0,100.0,-,1.0e-03,ok\n"
                          "4x16x4096x128,f16_fa3,fp16,80.00,600.0,6.000,1.0e-03,ok\n"
                          "4x16x4096x128,f16_fa3_causal,fp16,50.00,462.0,9.000,1.0e-03,ok\n");
    write_csv("sdpa.csv", "# GPU: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.2 GiB, L2 50 MiB)\n"
                          "# driver 1, torch 2\n# 08_flash_attn vs torch SDPA: seed 1\n"
                          "bxhxn,D,dtype,causal,backend,time (us),TFLOPS,status\n"
                          "4x16x4096,128,fp16,no,cudnn,100.0,500.0,ok\n"
                          "4x16x4096,128,fp16,yes,cudnn,60.00,420.0,ok\n"
                          "4x16x4096,128,bf16,no,flash,150.0,333.3,ok\n");

    expect_table("--table-from h100.csv --shape 1024x1024x1024",
                 "| kernel | dtype | time (us) | TFLOPS | x cuBLAS | rel err |\n"
                 "| --- | --- | ---: | ---: | ---: | ---: |\n"
                 "| `cublas` | bf16 | 10.00 | 214.7 | - | 0.0e+00 |\n"
                 "| `naive` | bf16 | 100.0 | 21.47 | 0.100 | 1.0e-03 |\n"
                 "| `fast` | bf16 | 9.000 | 238.6 | 1.111 | 1.0e-03 |\n",
                 "table_from: the long form at one size, the exercises left out");
    expect_table("--table-from h100.csv --kernel fast,naive --shape 64x4096x512,2^10x1Kx1024 "
                 "--columns shape,kernel,tput,status",
                 "| M×N×K | kernel | TFLOPS | status |\n| --- | --- | ---: | --- |\n"
                 "| 64×4096×512 | `fast` | 107.4 | ok |\n| 64×4096×512 | `naive` | - | skip: shape, K % 8 |\n"
                 "| 1024³ | `fast` | 238.6 | ok |\n| 1024³ | `naive` | 21.47 | ok |\n",
                 "table_from: --kernel, --shape and --columns choose and order");
    expect_table("--table-from h100.csv --pivot",
                 "| kernel | 1024³ | 64×4096×512 |\n| --- | ---: | ---: |\n"
                 "| `cublas` | 214.7 | 134.2 |\n| `naive` | 21.47 (0.100) | skip: shape, K % 8 |\n"
                 "| `fast` | 238.6 (1.111) | 107.4 (0.800) |\n",
                 "table_from: --pivot, the ratio in parentheses, a skip by its status");
    expect_table("--table-from h100.csv,h200.csv --kernel fast --pivot --transpose --value ratio",
                 "| M×N×K | H100 `fast` | H200 `fast` |\n| --- | ---: | ---: |\n"
                 "| 1024³ | 1.111 | 1.050 |\n| 64×4096×512 | 0.800 | 1.020 |\n",
                 "table_from: --transpose with two GPUs' CSVs, --value ratio");
    expect_table("--table-from h100.csv --table-from h200.csv --kernel fast --shape *x*x* --target >=1.00",
                 "| kernel | GPU | sizes | target | measured | met |\n"
                 "| --- | --- | --- | --- | ---: | --- |\n"
                 "| `fast` | H100 | 1024³, 64×4096×512 | x cuBLAS ≥ 1.00 | 1.111, 0.800 | not met (1 of 2) |\n"
                 "| `fast` | H200 | 1024³, 64×4096×512 | x cuBLAS ≥ 1.00 | 1.050, 1.020 | met |\n",
                 "table_from: --target, met and not met per GPU");
    expect_table("--table-from h100.csv --kernel fast --shape 64x*x* --target <0.9 --label chapter=99",
                 "| chapter | kernel | GPU | sizes | target | measured | met |\n"
                 "| --- | --- | --- | --- | --- | ---: | --- |\n"
                 "| 99 | `fast` | H100 | 64×4096×512 | x cuBLAS < 0.9 | 0.800 | met |\n",
                 "table_from: --label, a pattern, a target below");
    expect_table("--table-from h100.csv --kernel naive,fast --pivot --best --value ratio",
                 "| best stage | 1024³ | 64×4096×512 |\n| --- | ---: | ---: |\n"
                 "| bf16 | 1.111 `fast` | 0.800 `fast` |\n",
                 "table_from: --best, the best of the kernels at each size, named");
    expect_table("--table-from h100.csv,h200.csv --kernel naive,fast --best --shape 2^10x2^10x2^10 --target >1.10",
                 "| kernel | GPU | sizes | target | measured | met |\n"
                 "| --- | --- | --- | --- | ---: | --- |\n"
                 "| `fast` | H100 | 1024³ | x cuBLAS > 1.10 | 1.111 | met |\n"
                 "| `fast` | H200 | 1024³ | x cuBLAS > 1.10 | 1.050 | not met |\n",
                 "table_from: --best with --target, the winners named");
    expect_table("--table-from h100.csv --kernel naive,fast --pool --shape 1024x1024x1024 --target >=0.5",
                 "| kernel | GPU | sizes | target | measured | met |\n"
                 "| --- | --- | --- | --- | ---: | --- |\n"
                 "| `naive`, `fast` | H100 | 1024³ | x cuBLAS ≥ 0.5 | 0.100, 1.111 | not met (1 of 2) |\n",
                 "table_from: --pool, every kernel at every size a measurement");
    expect_table("--table-from before=h100.csv,after=h200.csv --kernel fast --pivot --value ratio",
                 "| run, kernel | 1024³ | 64×4096×512 |\n| --- | ---: | ---: |\n"
                 "| before `fast` | 1.111 | 0.800 |\n| after `fast` | 1.050 | 1.020 |\n",
                 "table_from: NAME=CSV names a run");
    expect_table("--table-from ours.csv,sdpa.csv --kernel f16_fa3,f16_fa3_causal --versus fa3=sdpa_cudnn "
                 "--pivot --transpose",
                 "| B×H×N×D | `f16_fa3` | `f16_fa3_causal` |\n| --- | ---: | ---: |\n"
                 "| 4×16×4096×128 | 600.0 (1.200) | 462.0 (1.100) |\n",
                 "table_from: compare_sdpa.py's rows in 08's names, --versus");
    expect_table("--table-from sdpa.csv --columns shape,kernel,dtype,tput",
                 "| B×H×N×D | kernel | dtype | TFLOPS |\n| --- | --- | --- | ---: |\n"
                 "| 4×16×4096×128 | `f16_sdpa_cudnn` | fp16 | 500.0 |\n"
                 "| 4×16×4096×128 | `f16_sdpa_cudnn_causal` | fp16 | 420.0 |\n"
                 "| 4×16×4096×128 | `bf16_sdpa_flash` | bf16 | 333.3 |\n",
                 "table_from: a compare_sdpa.py CSV alone");
    /* A bundle: both runs above in one file, each after "# run: NAME"; FILE#NAME reads one. */
    char bundle[4096];
    snprintf(bundle, sizeof bundle, "# run: before\n%s# run: after\n%s", h100, h200);
    write_csv("bundle.csv", bundle);
    expect_table("--table-from before=bundle.csv#before,after=bundle.csv#after --kernel fast --pivot "
                 "--value ratio",
                 "| run, kernel | 1024³ | 64×4096×512 |\n| --- | ---: | ---: |\n"
                 "| before `fast` | 1.111 | 0.800 |\n| after `fast` | 1.050 | 1.020 |\n",
                 "table_from: FILE#RUN reads one run of a bundle");
    expect_table("--table-from bundle.csv#after --pivot",
                 "| kernel | 1024³ | 64×4096×512 |\n| --- | ---: | ---: |\n"
                 "| `cublas` | 238.6 | 134.2 |\n| `fast` | 250.5 (1.050) | 136.9 (1.020) |\n",
                 "table_from: a bundle's run holds only its own rows");
    expect_refused("--table-from bundle.csv#after --kernel naive", "--kernel naive",
                   "table_from: a row of another run of the bundle is not found");
    expect_refused("--table-from bundle.csv", "a bundle of runs",
                   "table_from: a bundle without a run named is refused");
    expect_refused("--table-from bundle.csv#nosuch", "no run 'nosuch'",
                   "table_from: a run a bundle lacks is refused");
    /* A profile CSV (common/profile.sh): size, kernel, then its metrics, shown as they are. */
    write_csv("profile.csv",
              "# GPU: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n"
              "# profile: Version 2025.3, one launch a row (the check's)\n"
              "size,kernel,time (us),tensor pipe %,top stall\n"
              "1024x1024x1024,naive,50.0,10.5,long_scoreboard 3.20\n"
              "1024x1024x1024,fast,20.0,61.0,wait 1.05\n"
              "4096x4096x4096,fast,900.0,80.0,barrier 0.50\n");
    expect_table("--table-from profile.csv --kernel fast --shape 1024x1024x1024",
                 "| kernel | time (us) | tensor pipe % | top stall |\n| --- | ---: | ---: | --- |\n"
                 "| `fast` | 20.0 | 61.0 | wait 1.05 |\n",
                 "table_from: a profile CSV's row, every metric as it is");
    expect_table("--table-from profile.csv --kernel fast",
                 "| size | kernel | time (us) | tensor pipe % | top stall |\n"
                 "| --- | --- | ---: | ---: | --- |\n| 1024³ | `fast` | 20.0 | 61.0 | wait 1.05 |\n"
                 "| 4096³ | `fast` | 900.0 | 80.0 | barrier 0.50 |\n",
                 "table_from: a profile CSV at several sizes names each");
    expect_refused("--table-from profile.csv --pivot", "prints alone",
                   "table_from: a profile CSV in a pivot is refused");
    expect_refused("--table-from profile.csv,h100.csv --kernel fast", "prints alone",
                   "table_from: a profile CSV beside a bench CSV is refused");
    expect_refused("--table-from h100.csv --kernel fastest", "--kernel fastest",
                   "table_from: an unknown kernel is refused");
    expect_refused("--table-from h100.csv --shape 4096x4096x4096", "no such size",
                   "table_from: a size no CSV has is refused");
    expect_refused("--table-from nosuch.csv", "cannot read", "table_from: a missing CSV is refused");
    expect_refused("--table-from h100.csv --n 4096", "not an option", "table_from: a run option is refused");
    expect_refused("--table-from h100.csv --target =>1", "not a comparison",
                   "table_from: a malformed target is refused");
    expect_refused("--table-from h100.csv --label "
                   "x=0123456789012345678901234567890123456789012345678901234567890123456789",
                   "longer than", "table_from: a cell the printer would cut is refused");
    const char *names[] = {"h100.csv", "h200.csv", "ours.csv", "sdpa.csv", "bundle.csv", "profile.csv"};
    for (int i = 0; i < 6; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", g_dir, names[i]);
        remove(path);
    }
    rmdir(g_dir);
}

int main(void) {
    test_stats();
    test_metrics();
    test_parse_size();
    test_args();
    test_table();
    test_conversions();
    test_tensor_map();
    test_arch();
    test_plot_args();
    test_plot();
    test_table_from();
    return failures ? 1 : 0;
}
