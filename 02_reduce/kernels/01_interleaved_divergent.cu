/* Stage 1 — interleaved addressing with a divergent branch (Harris's kernel 1).
 *
 * The plan every stage up to 7 keeps: each block loads its share of the input into shared
 * memory, halves it in a tree of log2(blockDim) steps with a barrier between steps, and thread
 * 0 writes the block's partial. The launcher runs the kernel again on the partials until one
 * value is left (multi_pass.cuh): 2^28 values take four launches (2^20, 4096, 16, 1 partials).
 *
 * This first tree pairs neighbours: at step s, thread tid adds sdata[tid + s] if tid is a
 * multiple of 2s. It is correct and slow: the `tid % (2 * s) == 0` test leaves most lanes of
 * every warp idle (at s = 1 half of them, at s = 16 all but one), yet each warp still pays for
 * the step; and the modulo itself is an integer division. Every later stage is measured against
 * this one. In the SASS: LDS/STS for the tree, BAR.SYNC for the barriers. */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    interleaved_divergent_kernel(const float *in, float *out, long n) {
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * THREADS + tid;
    sdata[tid] = i < n ? in[i] : 0.0f; /* 0: the identity of +, for the block past the end */
    __syncthreads();
    for (unsigned int s = 1; s < THREADS; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" int STAGE(reduce_interleaved_divergent)(const float *in, long n, float *out,
                                                   float *scratch, cudaStream_t stream) {
    reduce_in_passes(interleaved_divergent_kernel, THREADS, THREADS, 0, in, n, out, scratch,
                     stream);
    return LAUNCH_OK;
}
