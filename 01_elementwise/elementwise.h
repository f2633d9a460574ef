/* Chapter 01: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA). Each launcher enqueues its kernel(s) on `stream` and returns LAUNCH_OK,
 * or LAUNCH_TODO from an unfinished exercise. n is the number of elements, any n >= 1. */
#ifndef ELEMENTWISE_H
#define ELEMENTWISE_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ELEMENTWISE_LAUNCHERS(p)                                                                   \
    int p##add_f32_naive(const float *a, const float *b, float *c, long n, cudaStream_t stream);   \
    int p##add_f32_grid_stride(const float *a, const float *b, float *c, long n,                   \
                               cudaStream_t stream);                                               \
    int p##add_f32_float4(const float *a, const float *b, float *c, long n, cudaStream_t stream);  \
    int p##add_f16_pack8(const f16_t *a, const f16_t *b, f16_t *c, long n, cudaStream_t stream);   \
    int p##add_bf16_pack8(const bf16_t *a, const bf16_t *b, bf16_t *c, long n,                     \
                          cudaStream_t stream);                                                    \
    int p##add_f32_unroll(const float *a, const float *b, float *c, long n, cudaStream_t stream);  \
    int p##add_f16_unroll(const f16_t *a, const f16_t *b, f16_t *c, long n, cudaStream_t stream);  \
    int p##add_bf16_unroll(const bf16_t *a, const bf16_t *b, bf16_t *c, long n,                    \
                           cudaStream_t stream);                                                   \
    int p##relu_add_unfused(const float *a, const float *b, float *c, long n,                      \
                            cudaStream_t stream);                                                  \
    int p##relu_add_fused(const float *a, const float *b, float *c, long n, cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in exercises/. */
ELEMENTWISE_LAUNCHERS()
ELEMENTWISE_LAUNCHERS(ex_)

#ifdef __cplusplus
}
#endif
#endif
