/* Exercise 1 — interleaved addressing (the first tree).
 *
 * Hints:
 *  - Write a kernel (in, out, n): each block of THREADS = 256 threads loads in[blockIdx.x * 256
 *    + tid] into __shared__ float sdata[256] (0 past the end of the input), then
 *    __syncthreads().
 *  - Tree: for s = 1, 2, 4, ... < 256, threads whose tid is a multiple of 2s add sdata[tid + s]
 *    into sdata[tid]; a __syncthreads() after every step (outside the if!).
 *  - Thread 0 writes sdata[0] to out[blockIdx.x].
 *  - The launcher: reduce_in_passes(kernel, 256, 256, 0, in, n, out, scratch, stream) from
 *    multi_pass.cuh runs it until one value is left. Read that file: it is 20 lines.
 *
 * Check it:  make check-02 ARGS="--kernel interleaved_divergent"
 * (the stage in kernels/01_interleaved_divergent.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_interleaved_divergent(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
