/* Stage 3 — warp shuffles for the reductions; one warp per row for short rows.
 *
 * Change from stage 2, two ideas:
 *  1. The reductions use __shfl_xor_sync (common/reduce.cuh): the 32 lanes of a warp exchange
 *     registers directly, five butterfly steps and no barrier. A block reduction is then one
 *     warp reduction, one trip through shared memory for the warp leaders, and one more warp
 *     reduction: two __syncthreads instead of eight.
 *  2. Rows of up to WARP_ROW_MAX elements get one *warp* each, not one block: a block of
 *     THREADS threads handles THREADS / 32 rows, and a warp needs no barrier at all. At C = 32
 *     stage 2 left 224 of 256 threads idle; here every lane has an element.
 *
 * Still three passes over the row (max, sum, write), with 32-bit accesses. In the SASS, look
 * for SHFL.BFLY in place of stage 2's STS/LDS/BAR ladder. */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

#define THREADS 256
#define WARP_ROW_MAX 1024

/* One warp per row: lane l handles elements l, l + 32, ... */
template <typename T>
static __global__ void __launch_bounds__(THREADS)
    softmax_warp_row_kernel(const T *x, T *y, long rows, long cols) {
    const int lane = threadIdx.x & 31;
    const long row = blockIdx.x * (long)(THREADS / 32) + (threadIdx.x >> 5);
    if (row >= rows) return; /* a whole warp leaves together: the shuffles stay full-mask */
    const T *in = x + row * cols;
    T *out = y + row * cols;
    float m = -INFINITY;
    for (long j = lane; j < cols; j += 32) m = fmaxf(m, load_float(in + j));
    m = warp_max(m);
    float sum = 0.0f;
    for (long j = lane; j < cols; j += 32) sum += __expf(load_float(in + j) - m);
    float inv = 1.0f / warp_sum(sum);
    for (long j = lane; j < cols; j += 32) store_float(out + j, __expf(load_float(in + j) - m) * inv);
}

/* One block per row, as in stage 2, with shuffle-based block reductions. */
template <typename T>
static __global__ void __launch_bounds__(THREADS)
    softmax_block_row_kernel(const T *x, T *y, long cols) {
    __shared__ float scratch[32];
    const T *in = x + blockIdx.x * cols;
    T *out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (long j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, load_float(in + j));
    m = block_max(m, scratch);
    float sum = 0.0f;
    for (long j = threadIdx.x; j < cols; j += THREADS) sum += __expf(load_float(in + j) - m);
    float inv = 1.0f / block_sum(sum, scratch);
    for (long j = threadIdx.x; j < cols; j += THREADS)
        store_float(out + j, __expf(load_float(in + j) - m) * inv);
}

template <typename T>
static void launch(const void *x, void *y, long rows, long cols, cudaStream_t stream) {
    if (cols <= WARP_ROW_MAX)
        softmax_warp_row_kernel<T><<<blocks_for(rows, THREADS / 32), THREADS, 0, stream>>>(
            (const T *)x, (T *)y, rows, cols);
    else
        softmax_block_row_kernel<T><<<(unsigned)rows, THREADS, 0, stream>>>((const T *)x, (T *)y,
                                                                            cols);
}

extern "C" int STAGE(softmax_warp_shfl)(const void *x, void *y, long rows, long cols,
                                        softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16) launch<__half>(x, y, rows, cols, stream);
    else launch<float>(x, y, rows, cols, stream);
    return LAUNCH_OK;
}
