/* Exercise 2 — interleaved addressing without divergence.
 *
 * Hints:
 *  - Start from exercise 1. Give the adds of step s to the first threads: index = 2 * s * tid,
 *    and if (index < 256) sdata[index] += sdata[index + s].
 *  - Same pairs, same order as exercise 1: the result is bit for bit the same.
 *  - Then run make profile-02 KERNEL=interleaved and find the shared-memory bank conflicts.
 *
 * Check it:  make check-02 ARGS="--kernel interleaved"
 * (the stage in kernels/02_interleaved.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_interleaved(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
