/* Stage 1 — attention as you would write it without FlashAttention: three steps, S in memory.
 *
 *   1. S = scale * Q K^T for every (batch, head): one cuBLAS strided-batched GEMM over the
 *      b * h pairs, fp16/bf16 inputs, fp32 accumulation, S stored in fp32 (n x n per pair).
 *   2. P = softmax(S) row by row (softmax_rows.cuh: chapter 03's stage 5 with the causal mask
 *      and the LSE), written over S in place, rounded to the input type.
 *   3. O = P V: a second strided-batched GEMM, fp32 accumulation, O in the input type.
 *
 * Why S in fp32: the scores are the softmax's input, and the softmax subtracts the row max and
 * exponentiates; an fp16 score near 10 is only good to 2^-8, which would be an error of 0.4%
 * in every exp (bf16: 3%). fp32 costs 4 n^2 bytes per (batch, head) against 2; P is rounded to
 * the input type because that is what the tensor cores read for P V, as in FlashAttention.
 * Writing P over S keeps the memory at 4 b h n^2 bytes (the driver checks it fits the GPU and
 * skips the row otherwise).
 *
 * What to look for: the time goes into moving S. Each (batch, head) writes n^2 fp32 scores,
 * reads them back, writes P and reads P again: about 12 n^2 bytes against 8 n D bytes of
 * Q, K, V and O. At n = 4096, D = 128 that is 48 times the bytes the problem needs, and the
 * softmax kernel (a stream) runs at DRAM speed while the tensor cores wait. Stage 2 never
 * writes S.
 *
 * cuBLAS is column-major. A row-major n x n S is a column-major S^T = K Q^T: cuBLAS's
 * (OP_T, OP_N) with A = K (n rows of D: a column-major D x n matrix, transposed) and B = Q
 * (column-major D x n). Row-major O (n x D) is column-major O^T = V^T P^T: (OP_N, OP_N) with
 * A = V (column-major D x n) and B = P (row-major n x n with leading dimension 2n: column-major
 * P^T with ldb = 2n). */
#include "stage.h"
#include "attn.h"
#include "attn_blas.cuh" /* the cuBLAS handle, created at the first launch */
#include "softmax_rows.cuh"

extern "C" int STAGE(attn_naive)(const attn_args *a, cudaStream_t stream) {
    const long n = a->n, d = a->d, pairs = (long)a->b * a->h;
    if (!a->scratch || (double)a->scratch_bytes < attn_naive_scratch_bytes(a->b, a->h, n))
        return launch_unsupported("no room for S (4 b h n^2 bytes)");
    if (n > ATTN_NAIVE_MAX_SEQ)
        return launch_unsupported("seq %ld > %ld: a row of S does not fit one block's registers",
                                  n, ATTN_NAIVE_MAX_SEQ);
    const cudaDataType_t type = a->dtype == ATTN_F16 ? CUDA_R_16F : CUDA_R_16BF;
    float *s = (float *)a->scratch;
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h = attn_blas(stream);

    /* 1. S = scale Q K^T (column-major S^T = K Q^T), fp32 out. */
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)n, (int)d,
                                            &a->scale, a->k, type, (int)d, n * d, a->q, type,
                                            (int)d, n * d, &zero, s, CUDA_R_32F, (int)n, n * n,
                                            (int)pairs, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

    /* 2. P = softmax(S) over S, in the input type; LSE. */
    int rc = a->dtype == ATTN_F16
                 ? attn_softmax_rows<__half>(s, a->lse, pairs * n, (int)n, a->causal, stream)
                 : attn_softmax_rows<__nv_bfloat16>(s, a->lse, pairs * n, (int)n, a->causal, stream);
    if (rc != LAUNCH_OK) return rc;

    /* 3. O = P V (column-major O^T = V^T P^T); P's rows are 2n elements apart. */
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)d, (int)n, (int)n,
                                            &one, a->v, type, (int)d, n * d, s, type, (int)(2 * n),
                                            2 * n * n, &zero, a->o, type, (int)d, n * d,
                                            (int)pairs, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return LAUNCH_OK;
}
