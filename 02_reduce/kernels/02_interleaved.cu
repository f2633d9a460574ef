/* Stage 2 — interleaved addressing without divergence (Harris's kernel 2).
 *
 * Change from stage 1: at step s the *first* THREADS / 2s threads do the adds, each on the
 * pair starting at index 2 * s * tid. The same pairs are added in the same order (so the result
 * is bit-identical to stage 1), but whole warps are now either all busy or all idle, and the
 * modulo is gone.
 *
 * The new problem: shared-memory bank conflicts. Shared memory has 32 banks of 4 bytes; lane
 * tid touches sdata[2 * s * tid], so at s = 1 two lanes share each bank (2-way conflict), at
 * s = 16 32 lanes hit the same bank and the access is replayed 32 times. Nsight Compute shows
 * them as "shared load bank conflicts"; stage 3 removes them. */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    interleaved_kernel(const float *in, float *out, long n) {
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * THREADS + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < THREADS; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < THREADS) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" int STAGE(reduce_interleaved)(const float *in, long n, float *out, float *scratch,
                                         cudaStream_t stream) {
    reduce_in_passes(interleaved_kernel, THREADS, THREADS, 0, in, n, out, scratch, stream);
    return LAUNCH_OK;
}
