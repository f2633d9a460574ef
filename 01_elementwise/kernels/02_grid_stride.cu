/* Stage 2 — grid-stride loop, grid sized from the SM count.
 *
 * Change from stage 1: launch only as many blocks as fit on the GPU at once (SMs x resident
 * blocks per SM) and let each thread walk the array in steps of the whole grid's width.
 *
 * Why it can be faster: no block is ever retired and replaced, so the per-block start-up cost
 * is paid once per SM slot, not n/256 times; each thread amortizes its index setup over many
 * elements. Why it may not be much faster: the loads are still 4 bytes wide, one per element,
 * so the SM issues as many memory instructions as before. What the H100 measured: no gain
 * (1163 us against stage 1's 1155 us at 2^28, measured/h100.csv; slower at 2^18-2^22, within
 * 0.4% from 2^24 to 2^27). The block start-up it saves was not what limited stage 1: nvcc
 * unrolls this loop four times, but as c may alias a or b it keeps each store before the next
 * element's loads (LDG, LDG, STG in the SASS), so a thread has one pair of loads in flight, as
 * in stage 1. Why it is a little slower at small sizes is not established. The lesson of this
 * stage is the loop shape, which every later stage keeps. */
#include "stage.h"
#include "elementwise.h"

static __global__ void add_f32_grid_stride_kernel(const float *a, const float *b, float *c,
                                                  long n) {
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}

extern "C" int STAGE(add_f32_grid_stride)(const float *a, const float *b, float *c, long n,
                                          cudaStream_t stream) {
    const int threads = 256;
    static unsigned int grid;
    if (!grid) grid = resident_blocks((const void *)add_f32_grid_stride_kernel, threads, 0);
    unsigned int needed = blocks_for(n, threads);
    add_f32_grid_stride_kernel<<<needed < grid ? needed : grid, threads, 0, stream>>>(a, b, c, n);
    return LAUNCH_OK;
}
