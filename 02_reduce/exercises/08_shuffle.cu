/* Exercise 8 — warp shuffles.
 *
 * Hints:
 *  - After the grid-stride loop of exercise 7: for offset = 16, 8, 4, 2, 1:
 *    v += __shfl_down_sync(0xffffffff, v, offset); lane 0 then holds its warp's sum.
 *  - Lane 0 of each warp writes to __shared__ float warp_sums[8]; one __syncthreads(); warp 0
 *    loads warp_sums[lane] (0 for lane >= 8) and shuffles once more.
 *  - In the SASS (cuobjdump -sass build/bin/02_reduce) look for SHFL.DOWN.
 *
 * Check it:  make check-02 ARGS="--kernel shuffle"
 * (the stage in kernels/08_shuffle.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_shuffle(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
