/* Stage 2 — interleaved addressing without divergence (Harris's kernel 2).
 *
 * Change from stage 1: at step s the *first* THREADS / 2s threads do the adds, each on the
 * pair starting at index 2 * s * tid. The same pairs are added in the same order (so the result
 * is bit-identical to stage 1), but whole warps are now either all busy or all idle (until
 * fewer than 32 threads have work, s >= 8, where warp 0 alone is partly busy), and the modulo
 * is gone.
 *
 * The new problem: shared-memory bank conflicts. Shared memory has 32 banks of 4 bytes; lane
 * tid touches sdata[2 * s * tid] (and the word s after it), so the active lanes of a warp are
 * 2s words apart and share 32 / 2s banks (one bank once 2s >= 32). How many lanes collide in a
 * bank depends on how many are active: only tid < THREADS / 2s pass `index < THREADS`. At
 * s = 1 and 2 whole warps work and 2, then 4 lanes share each bank; at s = 4 the 32 lanes of
 * warp 0 use 4 banks, 8 per bank; at s = 8, 16 lanes on 2 banks; at s = 16, 8 lanes all on one
 * bank; then 4, 2 and 1 lanes. Per step, s = 1 .. 128: 2-, 4-, 8-, 8-, 8-, 4-, 2-way, then
 * none. The degree doubles with s while whole warps work, and falls with the number of active
 * lanes once they all share one bank, so with 256 threads it tops out at 8-way (s = 4, 8, 16),
 * never 32. Nsight Compute shows them as "shared load bank conflicts"; stage 3 removes them. */
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
