/* Exercise 9 — double buffering with cp.async.
 *
 * Hints:
 *  - Two stages: __shared__ float As[2][8][128 + 4], Bs[2][8][128].
 *  - Use common/ptx/cp_async.cuh: cp_async_4 for the transposed A (one float each), cp_async_16
 *     for B, cp_async_commit() after each tile, cp_async_wait<1>() for "all but the newest".
 *  - Order per tile: issue tile k+1 into the other stage, wait for tile k, __syncthreads, multiply,
 *     __syncthreads (so the next copies do not overwrite what others still read).
 *  - SASS: LDGSTS.
 *
 * Check it:  make check-04 ARGS="--kernel ex_cp_async"   (or make check-04) */
#include "sgemm.h"
#include "stage.h"

extern "C" int ex_sgemm_cp_async(int m, int n, int k, float alpha, const float *a, const float *b,
                                 float beta, float *c, cudaStream_t stream) {
    /* TODO */
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)beta, (void)c, (void)stream;
    return LAUNCH_TODO;
}
