/* Stage 9 — 128-bit vectorized loads, several in flight per thread.
 *
 * Change from stage 8: the grid-stride loop moves float4s (LDG.E.128: 16 bytes per lane, 512
 * per warp instruction) and issues UNROLL of them before it adds any. The input is cut into
 * chunks of UNROLL * THREADS float4s; in each chunk thread t loads float4s t, t + THREADS, ...
 * (each load coalesced across the warp), all into registers, then folds them in.
 *
 * Why it is faster: a reduction reads and never writes, so its speed is how many bytes the SMs
 * keep in flight to DRAM. By Little's law an H200 needs bandwidth x latency, about 4.8 TB/s x
 * ~1 us = ~5 MB, some 36 KB per SM, in flight. Stage 8 writes two 4-byte loads per trip (the
 * compiler unrolls its loop to about eight: 32 bytes per thread, 64 KB per SM at 2048 threads,
 * when the loop runs long enough). Here each thread has UNROLL 16-byte loads in flight by
 * construction, 128 KB per SM, for a quarter of the load instructions per byte. The block's tree is the
 * butterfly block_sum of common/reduce.cuh (stage 8's idea, written once for everyone).
 *
 * Alignment: float4 loads need 16-byte aligned addresses. cudaMalloc gives 256-byte alignment,
 * but a pointer into the middle of an array might not be 16-byte aligned; then the kernel takes
 * the scalar path for everything, which is slower but right. n % 4 leftover elements are
 * added one by one. Still two launches: partials, then one block over them. */
#include <stdint.h>

#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

#define THREADS 256
#define UNROLL 4

static __global__ void __launch_bounds__(THREADS)
    float4_kernel(const float *__restrict__ in, float *__restrict__ out, long n) {
    __shared__ float scratch[32];
    const float4 *in4 = (const float4 *)in;
    const long nvec = ((uintptr_t)in & 15) == 0 ? n / 4 : 0;
    const long chunk = (long)UNROLL * THREADS;
    const long nchunks = nvec / chunk;
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
    for (long c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const float4 *p = in4 + c * chunk + threadIdx.x;
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = p[u * THREADS]; /* all loads first ... */
#pragma unroll
        for (int u = 0; u < UNROLL; u++) /* ... then the adds */
            acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    float sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    /* float4s after the last whole chunk, then the elements after the last float4 */
    const long tid = (long)blockIdx.x * THREADS + threadIdx.x, stride = (long)gridDim.x * THREADS;
    for (long i = nchunks * chunk + tid; i < nvec; i += stride) {
        float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (long i = 4 * nvec + tid; i < n; i += stride) sum += in[i];
    sum = block_sum(sum, scratch);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

extern "C" int STAGE(reduce_float4)(const float *in, long n, float *out, float *scratch,
                                    cudaStream_t stream) {
    static unsigned int grid;
    if (!grid) grid = resident_blocks((const void *)float4_kernel, THREADS, 0);
    reduce_in_passes(float4_kernel, THREADS, 4L * UNROLL * THREADS, grid, in, n, out, scratch,
                     stream);
    return LAUNCH_OK;
}
