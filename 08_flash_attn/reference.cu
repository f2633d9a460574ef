/* The check's fp32 reference (attn.h, attn_reference_f32): stage 1's three steps with nothing
 * rounded to the input type in between. S = scale Q K^T in fp32 (the products of two fp16 or
 * bf16 values are exact in fp32, the sums fp32), P = softmax(S) in fp32 over S in place
 * (softmax_rows.cuh, the same kernel as stage 1 with an fp32 P), then O = P V with every operand
 * fp32: V is widened to fp32 first, and the GEMM is cuBLAS's fp32 one (CUBLAS_COMPUTE_32F,
 * default math mode: no TF32). Its own cuBLAS handle (attn_blas.cuh). The driver checks this
 * reference against fp64 on the CPU at sampled rows before any row is compared with it. */
#include "stage.h"
#include "attn.h"
#include "attn_blas.cuh"
#include "softmax_rows.cuh"

template <typename T> static __global__ void widen_kernel(const T *in, float *out, long count) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count;
         i += (long)gridDim.x * blockDim.x)
        out[i] = (float)in[i];
}

extern "C" int attn_reference_f32(const attn_args *a, float *v32, float *o32, float *lse32,
                                  cudaStream_t stream) {
    const long n = a->n, d = a->d, pairs = (long)a->b * a->h;
    if (!a->scratch || (double)a->scratch_bytes < attn_naive_scratch_bytes(a->b, a->h, n))
        return launch_unsupported("no room for S (4 b h n^2 bytes)");
    cublasHandle_t h = attn_blas(stream);
    const cudaDataType_t type = a->dtype == ATTN_F16 ? CUDA_R_16F : CUDA_R_16BF;
    float *s = (float *)a->scratch;
    const float one = 1.0f, zero = 0.0f;

    CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)n,
                                            (int)d, &a->scale, a->k, type, (int)d, n * d, a->q,
                                            type, (int)d, n * d, &zero, s, CUDA_R_32F, (int)n,
                                            n * n, (int)pairs, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
    const int rc = attn_softmax_rows<float>(s, lse32, pairs * n, (int)n, a->causal, stream);
    if (rc != LAUNCH_OK) return rc;
    const long count = pairs * n * d;
    if (a->dtype == ATTN_F16) widen_kernel<<<1024, 256, 0, stream>>>((const __half *)a->v, v32, count);
    else widen_kernel<<<1024, 256, 0, stream>>>((const __nv_bfloat16 *)a->v, v32, count);
    CUDA_CHECK(cudaGetLastError());
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)d, (int)n,
                                            (int)n, &one, v32, CUDA_R_32F, (int)d, n * d, s,
                                            CUDA_R_32F, (int)n, n * n, &zero, o32, CUDA_R_32F,
                                            (int)d, n * d, (int)pairs, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
    return LAUNCH_OK;
}
