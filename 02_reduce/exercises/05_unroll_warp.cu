/* Exercise 5 — unroll the last warp.
 *
 * Hints:
 *  - Run the tree loop only while s > 32, then let threads 0..31 finish sdata[0..64) alone.
 *  - Write the warp's steps (s = 32, 16, ..., 1) through a volatile float * and put
 *    __syncwarp() between each read and the write that follows it: since Volta the lanes of a
 *    warp are not guaranteed to run in lockstep (make sanitize-02 runs racecheck).
 *
 * Check it:  make check-02 ARGS="--kernel unroll_warp"
 * (the stage in kernels/05_unroll_warp.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_unroll_warp(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
