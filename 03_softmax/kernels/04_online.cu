/* Stage 4 — online softmax: the max and the sum in one pass (Milakov and Gimelshein, 2018).
 *
 * Change from stage 3: passes 1 and 2 merge. Each thread keeps a running max m and a running
 * sum d of exp(x - m) over the elements it has seen. When a new element x exceeds m, the sum
 * so far was taken against the wrong max, and is fixed by one multiplication:
 *     x >  m:  d = d * exp(m - x) + 1,  m = x
 *     x <= m:  d = d + exp(x - m)
 * Both branches need exp(-|x - m|), so it costs one exponential per element, like stage 3.
 * Partial (m, d) pairs combine the same way: the row's max M is the max of the m's, and its
 * sum is the sum of d * exp(m - M) — one block_max and one block_sum (common/reduce.cuh).
 *
 * Why it is faster: the row is read twice instead of three times (once for (m, d), once to
 * write y), so the floor moves from 4 to 3 row-sized transfers. Short rows still get one warp
 * each, long rows one block. This is also the identity that makes FlashAttention possible
 * (chapter 08): a running max and a rescaled running sum over blocks of scores. */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

#define THREADS 256
#define WARP_ROW_MAX 1024

/* Add element x to the running pair (m, d). */
__device__ __forceinline__ void online_add(float &m, float &d, float x) {
    float e = __expf(-fabsf(x - m)); /* m = -inf on the first element: e = 0 */
    if (x > m) {
        d = d * e + 1.0f;
        m = x;
    } else {
        d += e;
    }
}

template <typename T>
static __global__ void __launch_bounds__(THREADS)
    softmax_online_warp_kernel(const T *x, T *y, long rows, long cols) {
    const int lane = threadIdx.x & 31;
    const long row = blockIdx.x * (long)(THREADS / 32) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const T *in = x + row * cols;
    T *out = y + row * cols;
    float m = -INFINITY, d = 0.0f;
    for (long j = lane; j < cols; j += 32) online_add(m, d, load_float(in + j));
    float row_max = warp_max(m);
    float inv = 1.0f / warp_sum(d * __expf(m - row_max)); /* lanes with no element: d = 0 */
    for (long j = lane; j < cols; j += 32)
        store_float(out + j, __expf(load_float(in + j) - row_max) * inv);
}

template <typename T>
static __global__ void __launch_bounds__(THREADS)
    softmax_online_block_kernel(const T *x, T *y, long cols) {
    __shared__ float scratch[32];
    const T *in = x + blockIdx.x * cols;
    T *out = y + blockIdx.x * cols;
    float m = -INFINITY, d = 0.0f;
    for (long j = threadIdx.x; j < cols; j += THREADS) online_add(m, d, load_float(in + j));
    float row_max = block_max(m, scratch);
    float inv = 1.0f / block_sum(d * __expf(m - row_max), scratch);
    for (long j = threadIdx.x; j < cols; j += THREADS)
        store_float(out + j, __expf(load_float(in + j) - row_max) * inv);
}

template <typename T>
static void launch(const void *x, void *y, long rows, long cols, cudaStream_t stream) {
    if (cols <= WARP_ROW_MAX)
        softmax_online_warp_kernel<T><<<blocks_for(rows, THREADS / 32), THREADS, 0, stream>>>(
            (const T *)x, (T *)y, rows, cols);
    else
        softmax_online_block_kernel<T><<<(unsigned)rows, THREADS, 0, stream>>>(
            (const T *)x, (T *)y, cols);
}

extern "C" int STAGE(softmax_online)(const void *x, void *y, long rows, long cols,
                                     softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16) launch<__half>(x, y, rows, cols, stream);
    else launch<float>(x, y, rows, cols, stream);
    return LAUNCH_OK;
}
