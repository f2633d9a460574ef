/* Reduce n values to one with a kernel that reduces each block's share to one partial.
 *
 * Stages 1-9 are "one partial per block" kernels: a launch turns n values into `blocks`
 * partials, so the launcher runs the kernel again on the partials until one value is left
 * (Harris's recursion, written as a loop). The last pass writes *out; the passes before it
 * write into scratch, one level after the other, each level starting on a 16-byte boundary
 * (stage 9 reads the partials as float4). Every pass is a separate kernel launch: that costs
 * microseconds at small n, which is what stage 10 removes.
 *
 *   kernel(in, out, n)  reduces in[0..n): block b writes its partial to out[b]
 *   per_block           elements one block reduces when the grid is not capped
 *   max_blocks          0 for a kernel that reduces per_block elements per block; for a
 *                       grid-stride kernel the grid cap (resident blocks): then the second
 *                       pass is one block over the partials, two launches in all */
#ifndef MULTI_PASS_CUH
#define MULTI_PASS_CUH

#include "stage.h"

typedef void (*pass_kernel)(const float *, float *, long);

static inline void reduce_in_passes(pass_kernel kernel, int threads, long per_block,
                                    unsigned int max_blocks, const float *in, long n, float *out,
                                    float *scratch, cudaStream_t stream) {
    const float *src = in;
    float *level = scratch;
    for (;;) {
        unsigned int blocks = blocks_for(n, per_block);
        if (max_blocks && blocks > max_blocks) blocks = max_blocks;
        if (max_blocks && src != in) blocks = 1; /* a grid-stride kernel: one block finishes */
        float *dst = blocks == 1 ? out : level;
        kernel<<<blocks, threads, 0, stream>>>(src, dst, n);
        if (blocks == 1) return;
        src = dst;
        n = blocks;
        level += (blocks + 3) & ~3u; /* next level on a 16-byte boundary */
    }
}

#endif
