/* Stage 4 — first add during the global load (Harris's kernel 4).
 *
 * Change from stage 3: each block covers 2 * THREADS elements, and each thread adds its two
 * elements (tid and tid + THREADS, both coalesced across the warp) while loading. Half as many
 * blocks, every thread does useful work before the tree, and each level of the recursion
 * shrinks the data by 512 instead of 256. */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    first_add_kernel(const float *in, float *out, long n) {
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * (2 * THREADS) + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + THREADS < n) v += in[i + THREADS];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" int STAGE(reduce_first_add)(const float *in, long n, float *out, float *scratch,
                                       cudaStream_t stream) {
    reduce_in_passes(first_add_kernel, THREADS, 2 * THREADS, 0, in, n, out, scratch, stream);
    return LAUNCH_OK;
}
