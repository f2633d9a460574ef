/* Exercise 6 — very wide rows: a cluster of blocks per row (sm_90), and the
 * two-kernel fallback.
 *
 * Hints (cluster, softmax_cluster):
 *  - Cut the row into N slices (N <= 8), one block each; launch rows * N blocks with
 *    cudaLaunchKernelEx and the attribute cudaLaunchAttributeClusterDimension = {N, 1, 1}, so
 *    that blocks r*N .. r*N + N - 1 form row r's cluster.
 *  - In the kernel (inside #if __CUDA_ARCH__ >= 900): cg::this_cluster(); each block holds
 *    its slice in registers as in exercise 5, reduces it to (m_b, d_b) and writes the pair to
 *    __shared__ memory; cluster.sync(); lane l of each warp reads block l's pair through
 *    cluster.map_shared_rank(pair, l); combine: M = warp_max(m), D = warp_sum(d * exp(m - M)).
 *  - A block must not exit while another may still read its shared memory: cluster.barrier_arrive()
 *    after reading, write y = exp(x - m_b) * exp(m_b - M) / D, then cluster.barrier_wait().
 *
 * Hints (fallback, softmax_split): the same slices; kernel 1 writes each (m_b, d_b) to a
 * workspace in global memory (cudaMalloc it once and keep it), kernel 2 combines the row's
 * pairs, reads its slice again and writes y.
 *
 * Check it:  make check-03 ARGS="--kernel ex_f32_cluster --kernel ex_f32_split" */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

extern "C" int ex_softmax_cluster(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                                  cudaStream_t stream) {
    /* TODO */
    (void)x, (void)y, (void)rows, (void)cols, (void)dtype, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_softmax_split(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                                cudaStream_t stream) {
    /* TODO */
    (void)x, (void)y, (void)rows, (void)cols, (void)dtype, (void)stream;
    return LAUNCH_TODO;
}
