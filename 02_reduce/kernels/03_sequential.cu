/* Stage 3 — sequential addressing (Harris's kernel 3).
 *
 * Change from stage 2: fold the array in half instead of pairing neighbours. At step s (from
 * THREADS / 2 down to 1) thread tid < s adds sdata[tid + s] into sdata[tid]. Consecutive lanes
 * now touch consecutive words, one per bank: no bank conflicts, and the active threads are
 * still contiguous, so whole warps retire together.
 *
 * What is still wasted: half of the threads are idle from the very first step, having only
 * loaded one value each (stage 4), and the last five steps run inside one warp but still pay
 * for a block-wide barrier each (stage 5). */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    sequential_kernel(const float *in, float *out, long n) {
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * THREADS + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" int STAGE(reduce_sequential)(const float *in, long n, float *out, float *scratch,
                                        cudaStream_t stream) {
    reduce_in_passes(sequential_kernel, THREADS, THREADS, 0, in, n, out, scratch, stream);
    return LAUNCH_OK;
}
