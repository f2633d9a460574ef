/* The GEMM references every GEMM chapter uses (C11, common/gemm_ref.c and gemm_exact.cu).
 *
 * Three parts:
 *   - the exact reference (gemm_exact): every entry of the product in fp64 on the GPU, from the
 *     bytes the kernels read. It judges every row, the library's included (gemm_check, with a
 *     bound that follows from the arithmetic of the row: gemm_bound);
 *   - the vendor library's product into the caller's buffer: cuBLAS for fp32, fp16 and bf16,
 *     cuBLASLt for FP8. Plain launch-like functions taking a stream, which a chapter puts in
 *     its table as the library row: timed as a user of the library gets it (its default
 *     algorithm), and checked like any row; a library less exact than our bound is reported
 *     (`inexact`), not trusted;
 *   - the fp64 product on the CPU, from host copies of the inputs: one entry at a time for the
 *     spot check of the exact reference (corners plus seeded samples), or the whole matrix for
 *     the tests' small shapes.
 *
 * The cuBLAS and cuBLASLt handles, one workspace of GEMM_REF_WORKSPACE_BYTES and the cuBLASLt
 * descriptors (one set per shape, with the algorithm cuBLASLt's heuristic chose) are created
 * once per process, at the first library call, and destroyed at exit (atexit), so that
 * compute-sanitizer's leak check finds everything freed. The workspace is shared by all the
 * calls, which keep it stream-ordered: a call on a different stream than the previous one first
 * waits for that stream. */
#ifndef GEMM_REF_H
#define GEMM_REF_H

#include <cublasLt.h>

#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUBLAS_CHECK (gpu.h) for cuBLASLt calls, with the status's name and meaning. */
#define CUBLASLT_CHECK(call)                                                                       \
    do {                                                                                           \
        cublasStatus_t lst_ = (call);                                                              \
        if (lst_ != CUBLAS_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: cuBLASLt error %s (%s) in %s\n", __FILE__, __LINE__,          \
                    cublasLtGetStatusName(lst_), cublasLtGetStatusString(lst_), #call);            \
            exit(EXIT_KERNEL_FAILED);                                                              \
        }                                                                                          \
    } while (0)

/* GPU memory the reference holds for the whole run (count it in a setup()'s memory check). */
#define GEMM_REF_WORKSPACE_BYTES ((size_t)32 << 20)

/* ---- the library products ---------------------------------------------------------------------
 * Each enqueues its work on `stream` and returns LAUNCH_OK, or LAUNCH_UNSUPPORTED (with the
 * reason given to launch_unsupported()) when the library cannot compute this shape; a failed
 * library call stops the program with exit code 1. */

/* Chapter 04: C = alpha * A * B + beta * C in fp32, all row-major: A m x k, B k x n, C m x n.
 * cublasSgemm with CUBLAS_DEFAULT_MATH (fp32 FFMA, never TF32). */
int gemm_ref_f32_nn(int m, int n, int k, float alpha, const float *a, const float *b, float beta,
                    float *c, cudaStream_t stream);

/* The "TN" product C = A * B^T of chapters 05 and 06: A M x K row-major, B N x K row-major
 * (B^T is column-major K x N), C M x N row-major; inputs and output in fp16 (bf16), products
 * accumulated in fp32 (cublasGemmEx, CUBLAS_COMPUTE_32F). */
int gemm_ref_f16_tn(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                    cudaStream_t stream);
int gemm_ref_bf16_tn(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                     cudaStream_t stream);

/* Chapter 07, through cuBLASLt on Hopper (compute capability 9.0):
 *   D = (A (.) scale_A) (B (.) scale_B)^T,
 * A e4m3 M x K row-major, B e4m3 N x K row-major, D bf16 M x N row-major, products
 * accumulated in fp32 (CUBLAS_COMPUTE_32F, fast accumulation off). Scale pointers are device
 * pointers to fp32, 16-byte aligned.
 *   _tensor: scale_a and scale_b point to one value each (per-tensor scaling);
 *   _block:  scale_a holds one value per 1 x 128 slice of a row of A, scale_b one per 128 x 128
 *            block of B, in the layouts below (DeepSeek-V3's recipe). */
int gemm_ref_e4m3_tn_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                            const float *scale_b, bf16_t *D, int M, int N, int K,
                            cudaStream_t stream);
int gemm_ref_e4m3_tn_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                           const float *scale_b, bf16_t *D, int M, int N, int K,
                           cudaStream_t stream);

/* The shape rules of the two FP8 calls (cuBLAS documentation, cublasLtMatmul() and "Scaling
 * factors layouts"): K % 16 == 0 and N % 16 == 0 (16-byte rows of A and B, 16-byte rows of
 * D^T), and for block scaling also M % 4 == 0. A row's supports() can call it. */
bool gemm_ref_e4m3_supports(long M, long N, long K, bool block_scaled, char *why, size_t len);

/* Destroys the handles, descriptors and workspace now (atexit does it otherwise); a later call
 * creates them again. */
void gemm_ref_release(void);

/* ---- the block scales' layout ------------------------------------------------------------------
 * cuBLASLt is column-major and wants FP8 in its "TN" form, D' = op(A') op(B') with A'
 * transposed. Our row-major D (M x N) is a column-major N x M matrix D^T = B A^T, so we pass
 * cuBLASLt's A' = our B (N rows of K: a column-major K x N matrix, transposed: N x K) and
 * B' = our A (a column-major K x M matrix, not transposed), with m' = N, n' = M, k' = K. The
 * scales follow their operands: cuBLASLt's A scale is our scale_b, its B scale our scale_a.
 *
 * cuBLAS 13 documentation, 3.1.4.5.1 "Scaling factors layouts" (VEC128_32F: "M-major for A
 * with shape M x L, N-major for B with shape N x L"; BLK128x128_32F: "K-major, the stride
 * between consecutive columns must be a multiple of 4", shape L4 x ceil(M/128) for A; M and N
 * multiples of 4; scale arrays 16-byte aligned), with L = ceil(K / 128) and L4 = L rounded up
 * to a multiple of 4, read in our terms:
 *
 *   scale_a (VEC128_32F, cuBLASLt's B operand): L columns of M values, M contiguous.
 *       The scale of A[i][kb*128 .. kb*128+127] is scale_a[kb * M + i]; M * L floats.
 *       (Row-major A with its scales transposed: DeepGEMM's "MN-major" activation scales.)
 *   scale_b (BLK128x128_32F, cuBLASLt's A operand): ceil(N/128) columns of L4 values, K blocks
 *       contiguous. The scale of B[nb*128 .. +127][kb*128 .. +127] is scale_b[nb * L4 + kb];
 *       L4 * ceil(N/128) floats, entries kb >= L unused (padding).
 *
 * NVIDIA's CUDALibrarySamples (cuBLASLt/Common/helpers.h, getScaleTensorSize) sizes the two
 * arrays the same way: ceil(K/128) * M and roundoff(ceil(K/128), 4) * ceil(N/128).
 * tests/test_gemm_ref.c checks this layout on the GPU with scales that differ per block, and
 * that the transposed layouts do not match (all PASS on an H100 with cuBLAS 13.1, including
 * M = 100, partial N and K blocks, and NaN in scale_b's padding, which cuBLASLt never reads). */
#ifdef __CUDACC__
#define GEMM_REF_HD __host__ __device__ /* the exact reference's kernel reads scales with these */
#else
#define GEMM_REF_HD
#endif
static inline GEMM_REF_HD long gemm_ref_k_blocks(long K) { return (K + 127) / 128; }
static inline GEMM_REF_HD long gemm_ref_k_blocks4(long K) {
    return (gemm_ref_k_blocks(K) + 3) / 4 * 4;
}
static inline GEMM_REF_HD long gemm_ref_scale_a_index(long M, long i, long kb) {
    return kb * M + i;
}
static inline long gemm_ref_scale_a_count(long M, long K) { return M * gemm_ref_k_blocks(K); }
static inline GEMM_REF_HD long gemm_ref_scale_b_index(long K, long nb, long kb) {
    return nb * gemm_ref_k_blocks4(K) + kb;
}
static inline long gemm_ref_scale_b_count(long N, long K) {
    return gemm_ref_k_blocks4(K) * ((N + 127) / 128);
}

/* ---- the fp64 product on the CPU --------------------------------------------------------------- */
typedef enum { GEMM_F32, GEMM_F16, GEMM_BF16, GEMM_E4M3, GEMM_F64 } gemm_dtype;

typedef enum {
    GEMM_NN, /* A M x K row-major, B K x N row-major (chapter 04) */
    GEMM_TN  /* A M x K row-major, B N x K row-major (chapters 05-07) */
} gemm_layout;

typedef enum { GEMM_SCALE_NONE, GEMM_SCALE_TENSOR, GEMM_SCALE_BLOCK } gemm_scaling;

/* A problem from host copies of its inputs:
 *   out[i][j] = alpha * sum_t A~[i][t] B~[t][j] + beta * c0[i][j],
 * where A~ and B~ are A and B dequantized by their scales (scaling != NONE, e4m3 only). */
typedef struct {
    gemm_layout layout;
    gemm_dtype type;          /* of A and B: GEMM_F32, GEMM_F16, GEMM_BF16 or GEMM_E4M3 */
    long M, N, K;
    const void *a, *b;        /* host, densely packed */
    double alpha, beta;       /* set alpha: 1 for a plain product */
    const float *c0;          /* host, row-major M x N fp32; NULL: no beta term */
    gemm_scaling scaling;
    const float *scale_a, *scale_b; /* host: one value each (TENSOR) or the layouts above (BLOCK) */
} gemm_problem;

/* fp64 value of out[i][j]; *abs_sum (if not NULL) gets the same sum over |terms|, the scale of
 * the accumulation's rounding error. */
double gemm_ref_exact(const gemm_problem *p, long i, long j, double *abs_sum);

/* Bound on one entry: |out - exact| <= atol + rtol |exact| + sum_tol * abs_sum. */
typedef struct {
    double atol, rtol, sum_tol;
} gemm_tolerance;

#define GEMM_REF_SPOT_SAMPLES 256

/* The spot check: `out` (host, M x N row-major, of type out_type) against the fp64 product at
 * GEMM_REF_SPOT_SAMPLES entries, the four corners first, then entries drawn from seed. Fills m
 * (metrics_finish included; index = i * N + j); the caller judges it with metrics_pass().
 * gemm_exact_compute holds the exact reference to it. */
void gemm_ref_spot_check(const gemm_problem *p, const void *out, gemm_dtype out_type,
                         uint64_t seed, const gemm_tolerance *tol, error_metrics *m);

/* The whole product into out (host, M x N row-major), each entry computed in fp64, then stored
 * as out_type: GEMM_F64, GEMM_F32, or GEMM_F16 / GEMM_BF16 (rounded through fp32). Seconds on
 * one core per 2^32 multiply-adds: for tests/test_gemm_ref.c's small shapes. */
void gemm_ref_cpu(const gemm_problem *p, void *out, gemm_dtype out_type);

/* ---- the exact reference: what every row is checked against -----------------------------------
 * Every entry of a problem's product in fp64, computed on the GPU (common/gemm_exact.cu) from
 * the same bytes the kernels read: x[i][j] = alpha sum_t A~[i][t] B~[t][j] + beta c0[i][j],
 * with A~ and B~ dequantized by their scales. Each term is exact in fp64 and the fp64 sum of K
 * terms is within K 2^-53 sum|terms| of the true one, far below what any check can see (the
 * file's opening comment says why), so nothing a library or a kernel does decides what is
 * right. gemm_exact_compute then holds the GPU's result to the CPU's fp64 product
 * (gemm_ref_exact) at GEMM_REF_SPOT_SAMPLES entries, corners first: a disagreement is a bug of
 * the harness, reported and fatal (exit 1).
 *
 * With each entry comes its spread, sqrt(sum of the squares of its terms): the size of the
 * random walk the rounding errors of an accumulation take (gemm_bound below). */
typedef struct {
    long M, N;
    long terms;               /* terms of each sum: K, plus one for beta c0 */
    double *value;            /* host, M x N row-major */
    float *spread;            /* host, M x N row-major */
    double rms_value, rms_spread;
} gemm_exact;

/* GPU memory gemm_exact_compute holds while it runs (count it in a setup()'s memory check). */
static inline double gemm_exact_device_bytes(long M, long N) { return 12.0 * (double)M * (double)N; }

/* on_device: the problem with device pointers (a, b, c0, scale_a, scale_b); on_host: the same
 * problem from host copies, for the spot check. Allocates x's host arrays (reusing them when
 * M and N did not change); synchronizes the GPU. */
void gemm_exact_compute(const gemm_problem *on_device, const gemm_problem *on_host,
                        uint64_t seed, gemm_exact *x);
void gemm_exact_free(gemm_exact *x);
/* The kernel alone (gemm_exact.cu): value and spread are device arrays of M x N. */
void gemm_exact_launch(const gemm_problem *on_device, double *value, float *spread,
                       cudaStream_t stream);

/* What one computed entry may differ from the exact one (docs/design.md, "Checking"):
 *   |out - x| <= round |x| + accumulate spread
 * round: the output type's unit roundoff, one final rounding of a sum held in higher
 * precision (fp32 2^-24, fp16 2^-11, bf16 2^-8); accumulate: GEMM_BOUND_SIGMAS u sqrt(steps),
 * for an accumulator with unit roundoff u whose longest chain of roundings has `steps` links.
 * Rounding errors of a sum of random-signed terms walk: their sum has a standard deviation of
 * at most u sqrt(steps) spread (each link rounds a partial sum, whose variance is at most
 * spread^2), and 8 standard deviations are never reached in practice (probability ~1e-15
 * per entry). The worst case, u steps sum|terms|, would be 50 to 500 times looser at these K
 * and let a wrong term through. */
#define GEMM_BOUND_SIGMAS 8.0
typedef struct {
    double round, accumulate;
} gemm_bound;
double gemm_unit_roundoff(gemm_dtype t);
gemm_bound gemm_bound_of(gemm_dtype out_type, double unit, double steps);

/* Compares out (host, M x N row-major, of out_type) with x under bound b: fills m
 * (metrics_finish included; index = i * N + j) and returns the relative L2 bound that b
 * implies, round + accumulate rms(spread) / rms(x).
 * For the tests only, GEMM_CHECK_PERTURB=term adds one typical term (spread / sqrt(terms)) to
 * the entry of smallest |x|, and GEMM_CHECK_PERTURB=ulp2 two units in the last place of
 * out_type to the entry of largest |x|, before comparing: what a kernel that drops one product,
 * or rounds a partial sum to 16 bits, would give. Both must fail (tests/run.sh). */
double gemm_check(const gemm_exact *x, const void *out, gemm_dtype out_type,
                  const gemm_bound *b, error_metrics *m);

#ifdef __cplusplus
}
#endif
#endif
