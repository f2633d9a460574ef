/* Stage 5 — unroll the last warp (Harris's kernel 5, made safe for Volta and later).
 *
 * Change from stage 4: once s <= 32 only the first warp works, and a block-wide __syncthreads
 * per step is more than it needs. The last six steps (64 -> 1) are written out for warp 0
 * alone, without the loop and without block barriers.
 *
 * Harris's 2007 version relied on the 32 lanes of a warp running in lockstep, with `volatile`
 * to keep the values in shared memory. Since Volta (sm_70) the lanes of a warp may be scheduled
 * independently, and that code has a race: lane 0 may read sdata[16] before lane 16 has written
 * it. The fix is __syncwarp() between the read and the write of every step (a warp-level
 * barrier that costs almost nothing); compute-sanitizer's racecheck (make sanitize-02) flags
 * the version without it. `volatile` still matters: it forces every access to go to shared
 * memory instead of being kept in a register across the barriers' reordering. */
#include "stage.h"
#include "reduce.h"
#include "multi_pass.cuh"

#define THREADS 256

/* Lanes 0..31 fold sdata[0..64) into sdata[0]. Each step: every lane reads its two operands,
 * the warp synchronizes, every lane writes, the warp synchronizes. Lanes >= s compute values
 * nobody reads; letting them is cheaper than branching them off. */
__device__ __forceinline__ void warp_reduce_smem(volatile float *sdata, unsigned int tid) {
    float v = sdata[tid];
#pragma unroll
    for (unsigned int s = 32; s > 0; s >>= 1) {
        v += sdata[tid + s];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
}

static __global__ void __launch_bounds__(THREADS)
    unroll_warp_kernel(const float *in, float *out, long n) {
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * (2 * THREADS) + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + THREADS < n) v += in[i + THREADS];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = THREADS / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warp_reduce_smem(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" int STAGE(reduce_unroll_warp)(const float *in, long n, float *out, float *scratch,
                                         cudaStream_t stream) {
    reduce_in_passes(unroll_warp_kernel, THREADS, 2 * THREADS, 0, in, n, out, scratch, stream);
    return LAUNCH_OK;
}
