/* Exercise 6 — completely unrolled, compile-time block size.
 *
 * Hints:
 *  - template <unsigned int BLOCK> kernel; write the tree as
 *    if (BLOCK >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); } ...
 *    down to 64, then the warp part of exercise 5. The ifs on BLOCK vanish at compile time.
 *  - The launcher picks BLOCK with a switch (64, 128, 256): small inputs get small blocks.
 *  - A kernel template passes to reduce_in_passes as unroll_all_kernel<256>.
 *
 * Check it:  make check-02 ARGS="--kernel unroll_all"
 * (the stage in kernels/06_unroll_all.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_unroll_all(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
