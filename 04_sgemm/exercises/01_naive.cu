/* Exercise 1 — naive: one thread per element of C.
 *
 * Hints:
 *  - A 32x32 block; row = blockIdx.x * 32 + threadIdx.x, col = blockIdx.y * 32 + threadIdx.y.
 *  - Each thread: sum = sum over i < k of A[row * k + i] * B[i * n + col] (use fmaf), then
 *     C[row * n + col] = alpha * sum + beta * C[row * n + col]. C is read: beta is not 0.
 *  - Guard row < m && col < n: the test shapes 33x33x33 and 4097x511x257 have partial blocks.
 *  - Kernels are `static __global__`, so the reference stage and yours can live in one program.
 *
 * Check it:  make check-04 ARGS="--kernel ex_naive"   (or make check-04) */
#include "sgemm.h"
#include "stage.h"

extern "C" int ex_sgemm_naive(int m, int n, int k, float alpha, const float *a, const float *b,
                              float beta, float *c, cudaStream_t stream) {
    /* TODO */
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)beta, (void)c, (void)stream;
    return LAUNCH_TODO;
}
