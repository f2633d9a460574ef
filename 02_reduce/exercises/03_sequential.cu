/* Exercise 3 — sequential addressing.
 *
 * Hints:
 *  - Fold the array in half: for s = 128, 64, ..., 1: if (tid < s) sdata[tid] += sdata[tid + s].
 *  - Why no bank conflicts: lanes 0..31 touch 32 consecutive words, one per bank.
 *
 * Check it:  make check-02 ARGS="--kernel sequential"
 * (the stage in kernels/03_sequential.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_sequential(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
