/* Stage 1 — naive: c[i] = a[i] + b[i], one thread per element.
 *
 * The starting point. Every thread loads two 4-byte floats and stores one, and neighbouring
 * threads touch neighbouring addresses, so each warp's accesses coalesce into whole 128-byte
 * lines: this is already a memory-bound kernel, and not a bad one. What it pays for is
 * bookkeeping: one thread (and one index computation, bounds check and 4-byte instruction per
 * array) per element, and a grid of n/256 blocks that the block scheduler must start one by
 * one. Look in the SASS for LDG.E / STG.E: 32-bit accesses. */
#include "stage.h"
#include "elementwise.h"

static __global__ void add_f32_naive_kernel(const float *a, const float *b, float *c, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" int STAGE(add_f32_naive)(const float *a, const float *b, float *c, long n,
                                    cudaStream_t stream) {
    const int threads = 256;
    add_f32_naive_kernel<<<blocks_for(n, threads), threads, 0, stream>>>(a, b, c, n);
    return LAUNCH_OK;
}
