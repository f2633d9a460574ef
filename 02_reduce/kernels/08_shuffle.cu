/* Stage 8 — warp shuffles instead of shared memory.
 *
 * Change from stage 7: the tree inside a warp uses __shfl_down_sync, which reads a register of
 * another lane directly (SHFL.DOWN in the SASS): five shuffle+add steps reduce 32 values to
 * lane 0 with no shared-memory traffic and no barrier. The block's tree becomes: every warp
 * shuffles down to one value, the warp leaders write 8 values to shared memory, one barrier,
 * and warp 0 shuffles those 8 to one. Stage 7's three block barriers (and warp 0's twelve
 * __syncwarp) become one.
 *
 * __shfl_down_sync(mask, v, k) gives lane i the v of lane i + k (lanes past 31 get their own
 * v back), so after offsets 16, 8, 4, 2, 1 lane 0 holds the sum of all 32; the other lanes hold
 * partial sums nobody needs. common/reduce.cuh has the butterfly variant (__shfl_xor_sync),
 * which leaves the sum in every lane: stages 9-10 and chapter 03 use that one.
 *
 * The grid-stride loop is stage 7's. What the H100 measured: no gain (365.0 us against stage
 * 7's 365.6 us at 2^28, measured/h100.csv). The tree this stage replaces runs once per thread,
 * after a loop over ~1000 elements; the loop is unchanged (the same loads in the SASS, the same
 * 32 registers, so the same grid), and its loads in flight set the time. Stage 9 changes the
 * loop and gains. */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256
#define WARPS (THREADS / 32)

__device__ __forceinline__ float warp_sum_down(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v; /* complete in lane 0 only */
}

static __global__ void __launch_bounds__(THREADS)
    shuffle_kernel(const float *in, float *out, long n) {
    __shared__ float warp_sums[WARPS];
    unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const long grid_size = 2L * THREADS * gridDim.x;
    float v = 0.0f;
    for (long i = (long)blockIdx.x * (2 * THREADS) + tid; i < n; i += grid_size) {
        v += in[i];
        if (i + THREADS < n) v += in[i + THREADS];
    }
    v = warp_sum_down(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < WARPS ? warp_sums[lane] : 0.0f;
        v = warp_sum_down(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

extern "C" int STAGE(reduce_shuffle)(const float *in, long n, float *out, float *scratch,
                                     cudaStream_t stream) {
    static unsigned int grid;
    if (!grid) grid = resident_blocks((const void *)shuffle_kernel, THREADS, 0);
    reduce_in_passes(shuffle_kernel, THREADS, 2 * THREADS, grid, in, n, out, scratch, stream);
    return LAUNCH_OK;
}
