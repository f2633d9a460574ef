/* Stage 3 — 128-bit vectorized loads and stores (float4), with a scalar tail.
 *
 * Change from stage 2: each thread moves 16 bytes per access instead of 4, so the SM issues a
 * quarter of the memory instructions for the same bytes, and each instruction keeps more bytes
 * in flight. In the SASS, LDG.E.128 / STG.E.128 replace LDG.E / STG.E.
 *
 * The cost is two conditions a float4 access must meet: its address must be 16-byte aligned
 * (cudaMalloc gives 256-byte alignment; a pointer into the middle of an array may not be), and
 * n need not be a multiple of 4. So: the aligned body runs on float4, the last n % 4 elements
 * run on floats, and a misaligned pointer sends everything down the scalar path rather than
 * giving a wrong answer. */
#include "stage.h"
#include "elementwise.h"

static __global__ void add_f32_float4_kernel(const float *a, const float *b, float *c, long n,
                                             long nvec) {
    long stride = (long)gridDim.x * blockDim.x;
    long tid = blockIdx.x * (long)blockDim.x + threadIdx.x;
    const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
    float4 *c4 = (float4 *)c;
    for (long i = tid; i < nvec; i += stride) {
        float4 x = a4[i], y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (long i = 4 * nvec + tid; i < n; i += stride) c[i] = a[i] + b[i];
}

extern "C" int STAGE(add_f32_float4)(const float *a, const float *b, float *c, long n,
                                     cudaStream_t stream) {
    const int threads = 256;
    static unsigned int grid;
    if (!grid) grid = resident_blocks((const void *)add_f32_float4_kernel, threads, 0);
    long nvec = (aligned16(a) && aligned16(b) && aligned16(c)) ? n / 4 : 0;
    unsigned int needed = blocks_for(nvec ? nvec : n, threads);
    add_f32_float4_kernel<<<needed < grid ? needed : grid, threads, 0, stream>>>(a, b, c, n, nvec);
    return LAUNCH_OK;
}
