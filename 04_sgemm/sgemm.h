/* Chapter 04: the launchers of every stage and exercise, shared by the driver (C) and the kernel
 * files (CUDA). Each computes C = alpha * A * B + beta * C in fp32, all matrices row-major and
 * densely packed: A is m x k, B is k x n, C is m x n. A launcher enqueues its kernel on `stream`
 * and returns LAUNCH_OK, or LAUNCH_TODO from an unfinished exercise. The driver only calls a
 * stage at shapes its supports() predicate accepts (see driver.c); every stage assumes
 * m * k, k * n and m * n are below 2^31, so that 32-bit indices do not overflow. */
#ifndef SGEMM_H
#define SGEMM_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGEMM_ARGS                                                                                 \
    int m, int n, int k, float alpha, const float *a, const float *b, float beta, float *c,        \
        cudaStream_t stream

#define SGEMM_LAUNCHERS(p)                                                                         \
    int p##sgemm_naive(SGEMM_ARGS);                                                                \
    int p##sgemm_coalesced(SGEMM_ARGS);                                                            \
    int p##sgemm_smem(SGEMM_ARGS);                                                                 \
    int p##sgemm_tile1d(SGEMM_ARGS);                                                               \
    int p##sgemm_tile2d(SGEMM_ARGS);                                                               \
    int p##sgemm_vec4(SGEMM_ARGS);                                                                 \
    int p##sgemm_noconflict(SGEMM_ARGS);                                                           \
    int p##sgemm_warptile(SGEMM_ARGS);                                                             \
    int p##sgemm_cp_async(SGEMM_ARGS);                                                             \
    int p##sgemm_tuned(SGEMM_ARGS);

/* The reference stages, in kernels/, and your exercises (same names with ex_), in exercises/. */
SGEMM_LAUNCHERS()
SGEMM_LAUNCHERS(ex_)

#ifdef __cplusplus
}
#endif
#endif
