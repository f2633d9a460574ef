/* The cuBLAS handle of stage 1 and of the check's reference: one per translation unit (each file
 * that includes this gets its own), created at the first call, which is a checked launch or
 * setup(), never a timed one, and destroyed at exit. It uses cuBLAS's own workspace pool and
 * plain fp32 math (CUBLAS_DEFAULT_MATH: no TF32 for the reference's fp32 GEMM). */
#ifndef ATTN_BLAS_CUH
#define ATTN_BLAS_CUH

#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>

#include "gpu.h"

static cublasHandle_t g_attn_blas;

/* At exit: report, never exit. After an error that broke the context nothing can be freed, and
 * trying only adds noise. */
static void attn_blas_release(void) {
    if (!g_attn_blas) return;
    if (cudaDeviceSynchronize() == cudaSuccess) {
        const cublasStatus_t st = cublasDestroy(g_attn_blas);
        if (st != CUBLAS_STATUS_SUCCESS)
            fprintf(stderr, "08_flash_attn: cublasDestroy: %s\n", cublasGetStatusName(st));
    }
    g_attn_blas = NULL;
}

/* The handle, bound to `stream`. */
static inline cublasHandle_t attn_blas(cudaStream_t stream) {
    if (!g_attn_blas) {
        CUBLAS_CHECK(cublasCreate(&g_attn_blas));
        CUBLAS_CHECK(cublasSetMathMode(g_attn_blas, CUBLAS_DEFAULT_MATH));
        atexit(attn_blas_release);
    }
    CUBLAS_CHECK(cublasSetStream(g_attn_blas, stream));
    return g_attn_blas;
}

#endif
