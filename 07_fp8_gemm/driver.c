/* Chapter 07 driver: FP8 (e4m3) GEMM with per-tensor and block scales, and the quantize kernels
 * that make its inputs. Two tables in one binary (run_chapters, docs/design.md):
 *
 * The quantize table (GB/s, "% memcpy"): a bf16 matrix, rows x cols (--m --k), to e4m3 with
 * one scale for the tensor, one per 1 x 128 slice of a row, or one per 128 x 128 block
 * (gemm07.h has the convention and the layouts). A stream: 2 bytes read and 1 written per
 * element (the per-tensor scale reads the input twice: 5), so the floor is DRAM bandwidth and
 * the ceiling row is cudaMemcpy of the input (bytes read + written). The input is
 * quant07_make_input's (uniform values, each 1 x 128 slice times its own power of two, an
 * all-zero block and slice). The check is exact: a host quantizer following the same
 * convention (gemm07.h's quant07_scale and quant07_inverse, then f32_to_e4m3 from common/)
 * must give every byte of q and every scale bit for bit, scale_b's padding (0) included.
 *
 * The GEMM table (TFLOPS, "x cuBLASLt"): D = (A (.) scale_A)(B (.) scale_B)^T, A M x K and B
 * N x K e4m3 (both K-major), D M x N bf16, fp32 accumulation. A and B are drawn in bf16 (the
 * same generator, without the zero blocks) and quantized by stage 1's kernels: per tensor for
 * the per-tensor rows, A in 1 x 128 slices and B in 128 x 128 blocks for the block rows. Each
 * scaling's rows are checked against the exact product of what they read (common/gemm_ref.h,
 * gemm_exact: every entry in fp64 on the GPU from the e4m3 bytes times their scales, itself
 * held to the CPU's fp64 product at 256 entries). cublas_bf16 multiplies the unquantized bf16
 * inputs (what FP8 saves), checked against their exact product; how far each FP8 product is
 * from that one is printed as a note below the table (README, "Correctness").
 * Bounds (README, "Correctness"; docs/design.md, "Checking"), per entry, with spread =
 * sqrt(sum of the squares of its K terms):
 *   promoted (every FP8 row from stage 3 on, and cuBLASLt's):
 *       |out - exact| <= 2^-8 |exact| + 8 * 2^-12 * sqrt(4) * spread:
 *       one rounding to bf16; each 128-wide K tile summed by the FP8 tensor core in 4 steps of
 *       32, then added into fp32 registers. The tensor core's accumulator keeps about 13-14
 *       bits here (DeepSeek-V3's report, and what the measured errors fit); 2^-12 leaves room;
 *   not promoted (stage 2, V_UNPROMOTED): the tensor core's own sum runs the whole K loop,
 *       and its truncation errors pile up with K: 2^-4 |exact| + 2^-4 spread (measured worst:
 *       1.4% of a typical entry at K = 4096 on an H100, 1.9% of the entry at K = 16384 on an
 *       H200; a wrong index is still an error of a whole entry);
 *   bf16 (cublas_bf16): 2^-8 |exact| + 8 * 2^-23 * sqrt(K) * spread.
 * A library row beyond its bound says `inexact` (a fact about the library, not a failure). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm07.h"
#include "gemm_ref.h"
#include "runner.h"

#define NO_SPILLS "LDL STL"
#define REL_L2 1e-2

/* Every e4m3 value as a float, looked up rather than converted in the checks' loops. */
static float E4M3[256];

static void e4m3_table(void) {
    for (int v = 0; v < 256; v++) E4M3[v] = e4m3_to_f32((uint8_t)v);
}

static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "07_fp8_gemm: out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_KERNEL_FAILED);
    }
    return p;
}

static int no_room(char *err, size_t len, const char *what, double need, const gpu_report *g) {
    char want[32], have[32];
    fmt_size(want, sizeof want, need);
    fmt_size(have, sizeof have, (double)g->free_bytes);
    snprintf(err, len, "%s needs %s of GPU memory; %s is free", what, want, have);
    return EXIT_BAD_USAGE;
}

/* ================================ the quantize table ======================================= */

typedef enum { Q_COPY, Q_TENSOR, Q_1X128, Q_128X128 } quant_variant;

#define MEMCPY "memcpy"

static struct {
    int rows, cols;
    bf16_t *x, *copy; /* device: the input, the memcpy row's destination */
    e4m3_t *q;
    float *scale;
    long nscale;      /* floats in `scale`: the most any variant writes */
    uint16_t *hx;     /* host: the input, the device's output, the host's answer */
    uint8_t *hq, *hq_ref;
    float *hs, *hs_ref;
} Q;

static int memcpy_ceiling(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                          cudaStream_t st) {
    (void)q, (void)scale;
    CUDA_CHECK(cudaMemcpyAsync(Q.copy, x, (size_t)rows * (size_t)cols * 2,
                               cudaMemcpyDeviceToDevice, st));
    return LAUNCH_OK;
}

static bool whole_16(const shape *s, char *why, size_t len) {
    if (s->d[1] % 16) {
        snprintf(why, len, "cols %% 16 != 0: rows of whole 16 bytes of e4m3 (what the FP8 GEMMs "
                           "need of K, and the 16-byte stores)");
        return false;
    }
    return true;
}

static long k_blocks(long cols) { return (cols + 127) / 128; }
static long k_blocks4(long cols) { return (k_blocks(cols) + 3) / 4 * 4; }

/* Floats of scale a variant writes for a rows x cols matrix. */
static long scale_count(quant_variant v, long rows, long cols) {
    switch (v) {
    case Q_1X128: return rows * k_blocks(cols);
    case Q_128X128: return k_blocks4(cols) * ((rows + 127) / 128);
    default: return 1;
    }
}

/* Which scale element (i, j) of the matrix was divided by. */
static long scale_index(quant_variant v, long rows, long cols, long i, long j) {
    switch (v) {
    case Q_1X128: return gemm_ref_scale_a_index(rows, i, j / 128);
    case Q_128X128: return gemm_ref_scale_b_index(cols, i / 128, j / 128);
    default: return 0;
    }
}

/* The host's quantizer, the convention of gemm07.h: the group rows [r0, r1) x columns [c0, c1)
 * of x (bf16, cols wide) shares one scale, returned; its bytes go to q. */
static float quantize_group(const uint16_t *x, long cols, long r0, long r1, long c0, long c1,
                            uint8_t *q) {
    float amax = 0.0f;
    for (long i = r0; i < r1; i++)
        for (long j = c0; j < c1; j++) amax = fmaxf(amax, fabsf(bf16_to_f32(x[i * cols + j])));
    const float s = quant07_scale(amax), inv = quant07_inverse(s);
    for (long i = r0; i < r1; i++)
        for (long j = c0; j < c1; j++) {
            const float v = bf16_to_f32(x[i * cols + j]) * inv; /* one fp32 rounding, as on the GPU */
            q[i * cols + j] = f32_to_e4m3(v);
        }
    return s;
}

/* The whole answer of variant v into q and s (scale_b's padding as 0). */
static void quantize_host(quant_variant v, const uint16_t *x, long rows, long cols, uint8_t *q,
                          float *s) {
    const long L = k_blocks(cols), L4 = k_blocks4(cols);
    switch (v) {
    case Q_TENSOR: s[0] = quantize_group(x, cols, 0, rows, 0, cols, q); break;
    case Q_1X128:
        for (long i = 0; i < rows; i++)
            for (long kb = 0; kb < L; kb++)
                s[gemm_ref_scale_a_index(rows, i, kb)] =
                    quantize_group(x, cols, i, i + 1, kb * 128, kb * 128 + 128 < cols ? kb * 128 + 128 : cols, q);
        break;
    case Q_128X128:
        for (long rb = 0; rb * 128 < rows; rb++) {
            for (long kb = 0; kb < L4; kb++) s[rb * L4 + kb] = 0.0f;
            for (long kb = 0; kb < L; kb++)
                s[gemm_ref_scale_b_index(cols, rb, kb)] = quantize_group(
                    x, cols, rb * 128, rb * 128 + 128 < rows ? rb * 128 + 128 : rows, kb * 128,
                    kb * 128 + 128 < cols ? kb * 128 + 128 : cols, q);
        }
        break;
    default: break;
    }
}

#define QUANT_ROW(nm, desc, var, fn, sym, must)                                                    \
    {{nm, desc, ARCH_ANY, sym, must, NO_SPILLS}, ROLE_STAGE, var, (any_fn)fn, (any_fn)ex_##fn,     \
     MEMCPY, NULL, whole_16}

static const row_entry QUANT_ROWS[] = {
    {{MEMCPY, "cudaMemcpyAsync device-to-device of the bf16 input: the ceiling (read+write)",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_CEILING, Q_COPY, (any_fn)memcpy_ceiling, NULL, NULL, NULL},
    QUANT_ROW("quantize_tensor",
              "1: one scale: amax pass (last block finishes), then a backward quantize pass",
              Q_TENSOR, quant07_tensor, "quant07_tensor_",
              "LDG.E.128 STG.E.128 SHFL.BFLY ATOMG MEMBAR"),
    QUANT_ROW("quantize_1x128", "1: a scale per 1x128 slice: 8 threads per slice, one pass",
              Q_1X128, quant07_1x128, "quant07_1x128_kernel", "LDG.E.128 STG.E.128 SHFL.BFLY"),
    QUANT_ROW("quantize_128x128",
              "1: a scale per 128x128 block: the tile in registers, block_max, one pass",
              Q_128X128, quant07_128x128, "quant07_128x128_kernel",
              "LDG.E.128 STG.E.128 SHFL.BFLY BAR"),
};

static int q_setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const long rows = s->d[0], cols = s->d[1];
    if (rows > INT_MAX || cols > INT_MAX || (double)rows * (double)cols > 0x1p40) {
        snprintf(err, len, "%ldx%ld: too large for this chapter's int sizes and GPU memory", rows,
                 cols);
        return EXIT_BAD_USAGE;
    }
    const long n = rows * cols;
    long ns = 4; /* at least 16 bytes */
    for (int v = Q_TENSOR; v <= Q_128X128; v++)
        if (scale_count((quant_variant)v, rows, cols) > ns) ns = scale_count((quant_variant)v, rows, cols);
    const double need = 5.0 * (double)n + 4.0 * (double)ns; /* x, copy, q, scales */
    char what[64];
    snprintf(what, sizeof what, "%ldx%ld", rows, cols);
    if (!gpu_fits(env->gpu, need)) return no_room(err, len, what, need, env->gpu);
    Q.rows = (int)rows, Q.cols = (int)cols, Q.nscale = ns;
    Q.x = gpu_alloc((size_t)n * 2);
    Q.copy = gpu_alloc((size_t)n * 2);
    Q.q = gpu_alloc((size_t)n);
    Q.scale = gpu_alloc((size_t)ns * 4);
    Q.hx = host_alloc((size_t)n * 2);
    Q.hq = host_alloc((size_t)n);
    Q.hq_ref = host_alloc((size_t)n);
    Q.hs = host_alloc((size_t)ns * 4);
    Q.hs_ref = host_alloc((size_t)ns * 4);
    quant07_make_input(Q.x, rows, cols, env->seed, 1, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(Q.hx, Q.x, (size_t)n * 2, cudaMemcpyDeviceToHost));
    return 0;
}

static void q_teardown(void) {
    CUDA_CHECK(cudaFree(Q.x));
    CUDA_CHECK(cudaFree(Q.copy));
    CUDA_CHECK(cudaFree(Q.q));
    CUDA_CHECK(cudaFree(Q.scale));
    free(Q.hx), free(Q.hq), free(Q.hq_ref), free(Q.hs), free(Q.hs_ref);
    memset(&Q, 0, sizeof Q);
}

static void q_prepare(const row_entry *r, const shape *s) {
    (void)r, (void)s;
    poison(Q.q, (size_t)Q.rows * (size_t)Q.cols, 0);
    poison(Q.scale, (size_t)Q.nscale * 4, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int q_launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    quant07_fn fn = (quant07_fn)(exercise ? r->ex_launch : r->launch);
    return fn(Q.x, Q.rows, Q.cols, Q.q, Q.scale, st);
}

/* Exact: every byte of q and every scale as the host computes them. The metrics run over the
 * dequantized values (q * its scale, the device's against the host's; a wrong scale shows in
 * every element of its group), then over the scales themselves (index rows*cols + their
 * index). Equal values with different bytes (-0 against 0) count as wrong too. */
static bool q_check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    const quant_variant v = (quant_variant)r->variant;
    if (v == Q_COPY) return false;
    const long rows = Q.rows, cols = Q.cols, n = rows * cols, ns = scale_count(v, rows, cols);
    quantize_host(v, Q.hx, rows, cols, Q.hq_ref, Q.hs_ref);
    CUDA_CHECK(cudaMemcpy(Q.hq, Q.q, (size_t)n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(Q.hs, Q.scale, (size_t)ns * 4, cudaMemcpyDeviceToHost));
    *bound = 0;
    metrics_init(m);
    for (long i = 0; i < rows; i++)
        for (long j0 = 0; j0 < cols; j0 += 128) { /* one 128-wide piece shares a scale */
            const long si = scale_index(v, rows, cols, i, j0), j1 = j0 + 128 < cols ? j0 + 128 : cols;
            const double s_out = Q.hs[si], s_ref = Q.hs_ref[si];
            for (long at = i * cols + j0; at < i * cols + j1; at++) {
                const double out = E4M3[Q.hq[at]] * s_out, ref = E4M3[Q.hq_ref[at]] * s_ref;
                const long bad_before = m->bad;
                metrics_add(m, at, out, ref, 0, 0);
                if (m->bad == bad_before && Q.hq[at] != Q.hq_ref[at]) { /* -0 against 0 */
                    if (m->first_bad < 0)
                        m->first_bad = at, m->first_bad_out = out, m->first_bad_ref = ref;
                    m->bad++;
                }
            }
        }
    long first_scale = -1;
    for (long k = 0; k < ns; k++) {
        const long bad_before = m->bad;
        metrics_add(m, n + k, Q.hs[k], Q.hs_ref[k], 0, 0);
        if (m->bad != bad_before && first_scale < 0) first_scale = k;
    }
    metrics_finish(m);
    if (first_scale >= 0)
        fprintf(stderr, "07_fp8_gemm %s at %ldx%ld: scale[%ld] is %.9g, want %.9g (%s)\n",
                r->info.name, rows, cols, first_scale, Q.hs[first_scale], Q.hs_ref[first_scale],
                v == Q_1X128   ? "scale[kb * rows + i]: slice kb of row i"
                : v == Q_128X128 ? "scale[rb * L4 + kb]: block (rb, kb); kb >= L is padding, 0"
                                 : "the one scale");
    return true;
}

static double q_work(const row_entry *r, const shape *s) {
    const double n = (double)s->d[0] * (double)s->d[1];
    const quant_variant v = (quant_variant)r->variant;
    if (v == Q_COPY) return 4.0 * n;                 /* bf16 read and written */
    const double scales = 4.0 * (double)scale_count(v, s->d[0], s->d[1]);
    return (v == Q_TENSOR ? 5.0 : 3.0) * n + scales; /* per tensor: x read twice */
}

/* rows x cols: quick ones first (one row; a partial slice; partial blocks in both directions),
 * then the odd M (4097) and wide rows. */
static const shape QUANT_TEST_SHAPES[] = {{{1, 16}},      {{33, 144}},    {{130, 272}},
                                          {{257, 1040}},  {{1000, 4112}}, {{4097, 7168}},
                                          {{2048, 16384}}};
/* DeepSeek-V3's activations (4096 x 7168) and a Llama-style FFN width (14336), squares. */
static const shape QUANT_BENCH_SHAPES[] = {{{2048, 2048}},  {{4096, 4096}}, {{4096, 7168}},
                                           {{4096, 14336}}, {{8192, 8192}}, {{16384, 16384}}};

/* ================================== the GEMM table ========================================= */

typedef enum { V_TENSOR, V_BLOCK, V_BF16, NVARIANTS } gemm_variant;
/* Added to a row's variant: a stage that lets the tensor core accumulate the whole K loop
 * (stage 2). Its products are off by the tensor core's short accumulator (README,
 * "Correctness"), so its element bound is wider; everything else goes by the scaling alone. */
#define V_UNPROMOTED 0x10
static int scaling_of(const row_entry *r) { return r->variant & 0xF; }

#define LT_TENSOR "cublaslt_tensor"
#define LT_BLOCK "cublaslt_block"

typedef int (*bf16_fn)(const bf16_t *, const bf16_t *, bf16_t *, int, int, int, cudaStream_t);

static bool lt_tensor_supports(const shape *s, char *why, size_t len) {
    return gemm_ref_e4m3_supports(s->d[0], s->d[1], s->d[2], false, why, len);
}
static bool lt_block_supports(const shape *s, char *why, size_t len) {
    return gemm_ref_e4m3_supports(s->d[0], s->d[1], s->d[2], true, why, len);
}

/* Stage 4 loads A's scales with TMA: rows of M floats, a multiple of 16 bytes. */
static bool m_in_4s(const shape *s, char *why, size_t len) {
    if (s->d[0] % 4 == 0) return true;
    snprintf(why, len, "M %% 4 != 0: the TMA map of A's scales needs rows of M floats in 16 bytes");
    return false;
}

/* A GEMM stage row (from stage 2 on): name, description, scaling (V_TENSOR or V_BLOCK),
 * launcher (gemm07.h), kernel symbol, must-have opcodes, shape predicate, dynamic shared
 * memory. sm_90a only, checked for spills, compared with the cuBLASLt row of its scaling. */
#define GEMM_ROW(nm, desc, var, fn, sym, must, sup, smem)                                          \
    {{nm, desc, ARCH_SM90A, sym, must, NO_SPILLS}, ROLE_STAGE, var, (any_fn)fn, (any_fn)ex_##fn,   \
     NULL, ((var) & 0xF) == V_BLOCK ? LT_BLOCK : LT_TENSOR, sup, smem}

static const row_entry GEMM_ROWS[] = {
    {{LT_TENSOR, "cublasLtMatmul e4m3 x e4m3 -> bf16, one fp32 scale per operand, fp32 accumulation",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_LIBRARY, V_TENSOR, (any_fn)gemm_ref_e4m3_tn_tensor, NULL, NULL, NULL, lt_tensor_supports},
    {{LT_BLOCK, "cublasLtMatmul, A scales per 1x128 (VEC128_32F), B per 128x128 (BLK128x128_32F)",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_LIBRARY, V_BLOCK, (any_fn)gemm_ref_e4m3_tn_block, NULL, NULL, NULL, lt_block_supports},
    {{"cublas_bf16", "cublasGemmEx on the unquantized bf16 inputs (fp32 accumulation): what FP8 buys",
      ARCH_ANY, NULL, NULL, NULL},
     ROLE_LIBRARY, V_BF16, (any_fn)gemm_ref_bf16_tn, NULL, NULL, NULL},
    GEMM_ROW("tensor_scaled",
             "2: chapter 06's warp-specialized pipeline with wgmma e4m3 (m64n256k32), 128x256 tile",
             V_TENSOR | V_UNPROMOTED, gemm07_tensor_scaled, "tensor_scaled_kernel",
             "QGMMA.64x256x32.F32.E4M3.E4M3 UTMALDG SYNCS USETMAXREG", NULL,
             GEMM07_SMEM_TENSOR_SCALED),
    GEMM_ROW("promoted",
             "3: each 128-wide K tile summed by the tensor core, then added into fp32 registers",
             V_TENSOR, gemm07_promoted, "promoted_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG SYNCS USETMAXREG FADD", NULL,
             GEMM07_SMEM_PROMOTED),
    GEMM_ROW("block_scaled",
             "4: A's 1x128 and B's 128x128 scales applied to each K tile's sum as it is promoted",
             V_BLOCK, gemm07_block_scaled, "block_scaled_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG SYNCS USETMAXREG FFMA", m_in_4s,
             GEMM07_SMEM_BLOCK_SCALED),
    GEMM_ROW("overlapped",
             "5: two accumulators in turn: K tile t+1 issued before tile t is promoted",
             V_BLOCK, gemm07_overlapped, "overlapped_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG SYNCS USETMAXREG FFMA", m_in_4s,
             GEMM07_SMEM_OVERLAPPED),
    GEMM_ROW("persistent",
             "6: resident 2-CTA clusters walking the tiles, B's tile multicast; store from registers",
             V_BLOCK, gemm07_persistent, "persistent_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_PERSISTENT),
    GEMM_ROW("handoff",
             "7: the epilogue staged in shared memory, stored by TMA from a producer thread",
             V_BLOCK, gemm07_handoff, "handoff_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_HANDOFF),
    GEMM_ROW("lean",
             "8: a lean K loop: uniform registers, descriptors by adds, B's scales ahead",
             V_BLOCK, gemm07_lean, "lean_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_LEAN),
    GEMM_ROW("tiles",
             "9: a tile per size: 64x128 beside 128x128 by rounds, blocks alone, K split when tiles are few",
             V_BLOCK, gemm07_tiles, "tiles07_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_FINAL),
    GEMM_ROW("wide",
             "10: the wide tile, 256x128, its cluster's blocks side by side sharing A; one accumulator turning",
             V_BLOCK, gemm07_wide, "wide07_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_FINAL),
    GEMM_ROW("narrow",
             "11: narrow tiles at small M (64x64/32/16), every SM its own columns of B; elected producer",
             V_BLOCK, gemm07_narrow, "narrow07_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_FINAL),
    GEMM_ROW("fitted",
             "12: tiles fitted to the rounds, 128x144 and 128x192, straddling B's scale blocks",
             V_BLOCK, gemm07_fitted, "fitted07_kernel",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA",
             m_in_4s, GEMM07_SMEM_FINAL),
    GEMM_ROW("final_tensor",
             "13: stage 12 with taller groups (16 pair rows) at 4 K tiles or fewer; per tensor",
             V_TENSOR, gemm07_final_tensor, "final07_kernelILb0E",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FADD", NULL,
             GEMM07_SMEM_FINAL),
    GEMM_ROW("final_block",
             "13: the same, block-scaled (A 1x128, B 128x128 scales)",
             V_BLOCK, gemm07_final_block, "final07_kernelILb1E",
             "QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UCGABAR_ARV UTMASTG STSM SYNCS USETMAXREG FFMA", m_in_4s,
             GEMM07_SMEM_FINAL),
};

static struct {
    int M, N, K;
    uint64_t seed;
    bf16_t *A, *B, *D;           /* device: bf16 inputs, every row's output */
    e4m3_t *Aq[2], *Bq[2];       /* device, per scaling (V_TENSOR, V_BLOCK) */
    float *sa[2], *sb[2];
    long nsa[2], nsb[2];
    uint16_t *hA, *hB, *hD;      /* host */
    uint8_t *hAq[2], *hBq[2];
    float *hsa[2], *hsb[2];
    gemm_exact exact[NVARIANTS]; /* each variant's exact product */
} G;

/* The problem of variant v, from host copies or (on_device) from the device buffers. */
static gemm_problem problem_of(gemm_variant v, bool on_device) {
    if (v == V_BF16)
        return (gemm_problem){.layout = GEMM_TN, .type = GEMM_BF16, .M = G.M, .N = G.N,
                              .K = G.K, .a = on_device ? (const void *)G.A : G.hA,
                              .b = on_device ? (const void *)G.B : G.hB, .alpha = 1.0};
    return (gemm_problem){.layout = GEMM_TN, .type = GEMM_E4M3, .M = G.M, .N = G.N, .K = G.K,
                          .a = on_device ? (const void *)G.Aq[v] : G.hAq[v],
                          .b = on_device ? (const void *)G.Bq[v] : G.hBq[v], .alpha = 1.0,
                          .scaling = v == V_TENSOR ? GEMM_SCALE_TENSOR : GEMM_SCALE_BLOCK,
                          .scale_a = on_device ? G.sa[v] : G.hsa[v],
                          .scale_b = on_device ? G.sb[v] : G.hsb[v]};
}

/* What a row of this variant may differ from its exact product (the opening comment). */
static gemm_bound bound_of(const row_entry *r) {
    if (scaling_of(r) == V_BF16) return gemm_bound_of(GEMM_BF16, 0x1p-23, G.K);
    if (r->variant & V_UNPROMOTED) return (gemm_bound){0x1p-4, 0x1p-4};
    return gemm_bound_of(GEMM_BF16, 0x1p-12, 128 / 32);
}

static void download(void *host, const void *dev, size_t bytes) {
    CUDA_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

/* The note learners read below the table: how far each FP8 product is from the product of the
 * bf16 matrices it was quantized from (relative L2, and DeepGEMM's test metric
 * 1 - 2 sum(xy) / sum(x^2 + y^2), about half the square of the relative L2), both exact. */
static void fp8_note(void) {
    const size_t c_n = (size_t)G.M * G.N;
    char part[2][160];
    for (int v = V_TENSOR; v <= V_BLOCK; v++) {
        double dd = 0, xx = 0, yy = 0, xy = 0;
        for (size_t e = 0; e < c_n; e++) {
            const double x = G.exact[v].value[e], y = G.exact[V_BF16].value[e];
            dd += (x - y) * (x - y), xx += x * x, yy += y * y, xy += x * y;
        }
        snprintf(part[v], sizeof part[v], "%s rel L2 %.2e (DeepGEMM's diff %.1e)",
                 v == V_TENSOR ? "per tensor" : "block-scaled",
                 yy > 0 ? sqrt(dd / yy) : sqrt(dd), xx + yy > 0 ? 1 - 2 * xy / (xx + yy) : 0.0);
    }
    runner_note("FP8 accuracy at %dx%dx%d, against the bf16 product of the unquantized inputs: "
                "%s; %s",
                G.M, G.N, G.K, part[0], part[1]);
}

static void quantize_input(quant07_fn fn, const bf16_t *x, int rows, e4m3_t *q, float *s) {
    if (fn(x, rows, G.K, q, s, 0) != LAUNCH_OK) {
        char why[256];
        fprintf(stderr, "07_fp8_gemm: stage 1 cannot quantize a %dx%d input: %s\n", rows, G.K,
                launch_unsupported_take(why, sizeof why));
        exit(EXIT_KERNEL_FAILED);
    }
    CUDA_CHECK(cudaGetLastError());
}

static int g_setup(const shape *s, const setup_env *env, char *err, size_t len) {
    const long m = s->d[0], n = s->d[1], k = s->d[2];
    char what[96];
    snprintf(what, sizeof what, "%ldx%ldx%ld", m, n, k);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || (double)m * (double)k > 0x1p36 ||
        (double)n * (double)k > 0x1p36 || (double)m * (double)n > 0x1p36) {
        snprintf(err, len, "%s: too large for this chapter's int sizes and GPU memory", what);
        return EXIT_BAD_USAGE;
    }
    memset(&G, 0, sizeof G);
    G.M = (int)m, G.N = (int)n, G.K = (int)k;
    G.seed = env->seed;
    if (k % 16) return 0; /* the chapter's supports() skips every row */
    G.nsa[V_TENSOR] = G.nsb[V_TENSOR] = 4; /* one value, in 16 bytes (cuBLASLt's alignment) */
    G.nsa[V_BLOCK] = gemm_ref_scale_a_count(m, k);
    G.nsb[V_BLOCK] = gemm_ref_scale_b_count(n, k);
    const double mk = (double)m * k, nk = (double)n * k, mn = (double)m * n;
    const double scales = 4.0 * (8 + G.nsa[V_BLOCK] + G.nsb[V_BLOCK]);
    /* bf16 A and B, e4m3 A and B twice, D, one exact product at a time, the library workspace */
    const double need = 4.0 * (mk + nk) + 2.0 * mn + gemm_exact_device_bytes(m, n) + scales +
                        (env->library_off ? 0.0 : (double)GEMM_REF_WORKSPACE_BYTES);
    if (!gpu_fits(env->gpu, need)) return no_room(err, len, what, need, env->gpu);

    G.A = gpu_alloc((size_t)mk * 2);
    G.B = gpu_alloc((size_t)nk * 2);
    G.D = gpu_alloc((size_t)mn * 2);
    G.hA = host_alloc((size_t)mk * 2);
    G.hB = host_alloc((size_t)nk * 2);
    G.hD = host_alloc((size_t)mn * 2);
    /* A and B get different seeds, so a kernel that reads one operand twice fails */
    quant07_make_input(G.A, m, k, env->seed, 0, 0);
    quant07_make_input(G.B, n, k, env->seed + 1, 0, 0);
    for (int v = V_TENSOR; v <= V_BLOCK; v++) {
        G.Aq[v] = gpu_alloc((size_t)mk);
        G.Bq[v] = gpu_alloc((size_t)nk);
        G.sa[v] = gpu_alloc((size_t)G.nsa[v] * 4);
        G.sb[v] = gpu_alloc((size_t)G.nsb[v] * 4);
        G.hAq[v] = host_alloc((size_t)mk);
        G.hBq[v] = host_alloc((size_t)nk);
        G.hsa[v] = host_alloc((size_t)G.nsa[v] * 4);
        G.hsb[v] = host_alloc((size_t)G.nsb[v] * 4);
        poison(G.sa[v], (size_t)G.nsa[v] * 4, 0); /* what stage 1 does not write stays NaN */
        poison(G.sb[v], (size_t)G.nsb[v] * 4, 0);
    }
    /* stage 1's kernels make the FP8 inputs: per tensor, and A by 1 x 128 / B by 128 x 128 */
    quantize_input(quant07_tensor, G.A, G.M, G.Aq[V_TENSOR], G.sa[V_TENSOR]);
    quantize_input(quant07_tensor, G.B, G.N, G.Bq[V_TENSOR], G.sb[V_TENSOR]);
    quantize_input(quant07_1x128, G.A, G.M, G.Aq[V_BLOCK], G.sa[V_BLOCK]);
    quantize_input(quant07_128x128, G.B, G.N, G.Bq[V_BLOCK], G.sb[V_BLOCK]);
    CUDA_CHECK(cudaDeviceSynchronize());
    download(G.hA, G.A, (size_t)mk * 2);
    download(G.hB, G.B, (size_t)nk * 2);
    for (int v = V_TENSOR; v <= V_BLOCK; v++) {
        download(G.hAq[v], G.Aq[v], (size_t)mk);
        download(G.hBq[v], G.Bq[v], (size_t)nk);
        download(G.hsa[v], G.sa[v], (size_t)G.nsa[v] * 4);
        download(G.hsb[v], G.sb[v], (size_t)G.nsb[v] * 4);
    }
    for (int v = 0; v < NVARIANTS; v++) {
        const gemm_problem on_device = problem_of((gemm_variant)v, true),
                           on_host = problem_of((gemm_variant)v, false);
        gemm_exact_compute(&on_device, &on_host, env->seed, &G.exact[v]);
    }
    fp8_note();
    return 0;
}

static void free_dev(void *p) {
    if (p) CUDA_CHECK(cudaFree(p));
}

static void g_teardown(void) {
    free_dev(G.A), free_dev(G.B), free_dev(G.D);
    free(G.hA), free(G.hB), free(G.hD);
    for (int v = V_TENSOR; v <= V_BLOCK; v++) {
        free_dev(G.Aq[v]), free_dev(G.Bq[v]), free_dev(G.sa[v]), free_dev(G.sb[v]);
        free(G.hAq[v]), free(G.hBq[v]), free(G.hsa[v]), free(G.hsb[v]);
    }
    for (int v = 0; v < NVARIANTS; v++) gemm_exact_free(&G.exact[v]);
    memset(&G, 0, sizeof G);
}

/* What every row needs: inputs (K % 16 == 0, for the quantize kernels and every FP8 GEMM). */
static bool g_supports(const row_entry *r, const shape *s, char *why, size_t len) {
    (void)r;
    if (s->d[2] % 16) {
        snprintf(why, len, "K %% 16 != 0: the quantize kernels and every FP8 GEMM need rows of "
                           "whole 16 bytes");
        return false;
    }
    return true;
}

static void g_prepare(const row_entry *r, const shape *s) {
    (void)r, (void)s;
    poison(G.D, (size_t)G.M * G.N * 2, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static int g_launch(const row_entry *r, bool exercise, const shape *s, cudaStream_t st) {
    (void)s;
    const any_fn fn = exercise ? r->ex_launch : r->launch;
    const int v = scaling_of(r);
    if (v == V_BF16) return ((bf16_fn)fn)(G.A, G.B, G.D, G.M, G.N, G.K, st);
    return ((gemm07_fn)fn)(G.Aq[v], G.Bq[v], G.sa[v], G.sb[v], G.D, G.M, G.N, G.K, st);
}

static bool g_check(const row_entry *r, const shape *s, error_metrics *m, double *bound) {
    (void)s;
    download(G.hD, G.D, (size_t)G.M * G.N * 2);
    const gemm_bound b = bound_of(r);
    *bound = gemm_check(&G.exact[scaling_of(r)], G.hD, GEMM_BF16, &b, m);
    return true;
}

static double g_work(const row_entry *r, const shape *s) {
    (void)r;
    return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2];
}

static const char *g_dtype(const row_entry *r) {
    return scaling_of(r) == V_TENSOR ? "e4m3/tensor" : scaling_of(r) == V_BLOCK ? "e4m3/block" : "bf16";
}

/* m x n x k. The first five are small enough for --quick (the sanitizer): one block of
 * everything; M = 64 with L = 3 (scale_b padded to 4); M = 1 (no block-scaled cuBLASLt: M % 4);
 * odd M with partial N and K blocks; K below 128. Then N % 16 != 0 (no cuBLASLt), M = 4097 (no
 * block-scaled cuBLASLt), M = 64 on a DeepSeek-V3 shape, two squares, and two shapes where
 * cuBLAS's default bf16 algorithm was measured less exact than one rounding of the fp32 sum
 * (H100, cuBLAS 13.1: the cublas_bf16 row says `inexact` there). */
static const shape GEMM_TEST_SHAPES[] = {
    {{128, 128, 128}},    {{64, 256, 384}},     {{1, 128, 256}},     {{100, 144, 320}},
    {{36, 48, 80}},       {{1000, 1000, 1008}}, {{4097, 256, 512}},  {{64, 2112, 7168}},
    {{2048, 2048, 2048}}, {{4096, 4096, 4096}}, {{41, 540, 672}},    {{897, 4731, 1296}}};
/* Squares, then DeepSeek-V3's GEMMs: M in {64, 128, 4096} (tokens) x (N, K) of its layers. */
static const shape GEMM_BENCH_SHAPES[] = {
    {{1024, 1024, 1024}},   {{2048, 2048, 2048}},   {{4096, 4096, 4096}},   {{8192, 8192, 8192}},
    {{64, 2112, 7168}},     {{64, 24576, 1536}},    {{64, 32768, 512}},     {{64, 7168, 16384}},
    {{64, 4096, 7168}},     {{64, 7168, 2048}},     {{128, 2112, 7168}},    {{128, 24576, 1536}},
    {{128, 32768, 512}},    {{128, 7168, 16384}},   {{128, 4096, 7168}},    {{128, 7168, 2048}},
    {{4096, 2112, 7168}},   {{4096, 24576, 1536}},  {{4096, 32768, 512}},   {{4096, 7168, 16384}},
    {{4096, 4096, 7168}},   {{4096, 7168, 2048}}};

int main(int argc, char **argv) {
    const chapter quantize = {
        .name = "07_fp8_gemm",
        .table = "quantize",
        .summary =
            "Chapter 07, table 1 (quantize): a bf16 matrix (--m rows, --k cols) to e4m3 with a\n"
            "scale per tensor, per 1x128 slice of a row, or per 128x128 block; checked bit for\n"
            "bit against the host, timed against cudaMemcpy of the input.",
        .ndims = 2,
        .dim_names = {"m", "k"},
        .dim_help = {"rows of the bf16 matrix (default 8192)",
                     "its columns, a multiple of 16 (default 8192)"},
        .default_shape = {{8192, 8192}},
        .test_shapes = QUANT_TEST_SHAPES,
        .ntest_shapes = sizeof QUANT_TEST_SHAPES / sizeof QUANT_TEST_SHAPES[0],
        .nquick_shapes = 4,
        .bench_shapes = QUANT_BENCH_SHAPES,
        .nbench_shapes = sizeof QUANT_BENCH_SHAPES / sizeof QUANT_BENCH_SHAPES[0],
        .unit = UNIT_GBPS,
        .ceiling_col = "% memcpy",
        .library_col = NULL,
        .flush_l2 = true,
        .rows = QUANT_ROWS,
        .nrows = sizeof QUANT_ROWS / sizeof QUANT_ROWS[0],
        .setup = q_setup,
        .teardown = q_teardown,
        .supports = NULL,
        .prepare = q_prepare,
        .launch = q_launch,
        .check = q_check,
        .work = q_work,
        .dtype = NULL,
    };
    const chapter gemm = {
        .name = "07_fp8_gemm",
        .table = "gemm",
        .summary =
            "Chapter 07, table 2 (gemm): D = (A scale_A)(B scale_B)^T, A and B e4m3 (both K-major,\n"
            "made from bf16 by table 1's kernels), D bf16, fp32 accumulation; per-tensor and\n"
            "block scales (A 1x128, B 128x128), checked against the exact product (fp64) and\n"
            "timed against cuBLASLt and the bf16 product of the unquantized inputs (cuBLAS).\n"
            "Stages 2-13: per tensor, promoted, block scales, overlapped, persistent, handoff,\n"
            "lean, tiles, wide, narrow, fitted, final.",
        .ndims = 3,
        .dim_names = {"m", "n", "k"},
        .dim_help = {"rows of A and D (default 4096)", "rows of B, columns of D (default 4096)",
                     "the shared dimension, a multiple of 16 (default 4096)"},
        .default_shape = {{4096, 4096, 4096}},
        .test_shapes = GEMM_TEST_SHAPES,
        .ntest_shapes = sizeof GEMM_TEST_SHAPES / sizeof GEMM_TEST_SHAPES[0],
        .nquick_shapes = 5,
        .bench_shapes = GEMM_BENCH_SHAPES,
        .nbench_shapes = sizeof GEMM_BENCH_SHAPES / sizeof GEMM_BENCH_SHAPES[0],
        .unit = UNIT_TFLOPS,
        .ceiling_col = NULL,
        .library_col = "x cuBLASLt",
        .flush_l2 = true,
        .rows = GEMM_ROWS,
        .nrows = sizeof GEMM_ROWS / sizeof GEMM_ROWS[0],
        .setup = g_setup,
        .teardown = g_teardown,
        .supports = g_supports,
        .prepare = g_prepare,
        .launch = g_launch,
        .check = g_check,
        .work = g_work,
        .dtype = g_dtype,
        .inexact_cause = "cuBLAS's default algorithm at such shapes splits K and keeps each "
                         "piece's partial sums in the output type, so an entry is rounded to "
                         "bf16 more than once (README, \"Correctness\")",
    };
    e4m3_table();
    const chapter *const tables[] = {&quantize, &gemm};
    return run_chapters(tables, 2, argc, argv);
}
