/* Exercise 3 — shuffle reductions, and one warp per row for short rows.
 *
 * Hints:
 *  - common/reduce.cuh has warp_max / warp_sum (five __shfl_xor_sync steps: every lane gets
 *    the result) and block_max / block_sum (warp, then shared memory, then warp).
 *  - For cols <= 1024 give each row one warp: a block of 256 threads holds 8 rows; lane l
 *    handles elements l, l + 32, ... If a warp has no row (row >= rows), the whole warp must
 *    return together, so that the full-mask shuffles of the others are not left waiting.
 *  - Wider rows: one block per row as in exercise 2, with block_max / block_sum.
 *
 * Check it:  make check-03 ARGS="--kernel ex_f32_warp_shfl" */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

extern "C" int ex_softmax_warp_shfl(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                                    cudaStream_t stream) {
    /* TODO */
    (void)x, (void)y, (void)rows, (void)cols, (void)dtype, (void)stream;
    return LAUNCH_TODO;
}
