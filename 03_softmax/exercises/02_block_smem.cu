/* Exercise 2 — one block per row, reductions through shared memory.
 *
 * Hints:
 *  - Launch `rows` blocks of 256 threads; block b owns row b. Thread t handles elements
 *    t, t + 256, ... (consecutive threads, consecutive addresses: coalesced).
 *  - Reduce with a tree in shared memory: s[t] = v; __syncthreads(); then for half = 128, 64,
 *    ..., 1: threads t < half combine s[t] with s[t + half], __syncthreads() after each step.
 *    s[0] is the answer; read it, then __syncthreads() again before s is reused.
 *  - Three passes: max, sum of __expf(x - max), write. fp32 and fp16: see exercise 1.
 *
 * Check it:  make check-03 ARGS="--kernel ex_f32_block_smem" */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

extern "C" int ex_softmax_block_smem(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                                     cudaStream_t stream) {
    /* TODO */
    (void)x, (void)y, (void)rows, (void)cols, (void)dtype, (void)stream;
    return LAUNCH_TODO;
}
