/* Stage 1 — naive: one thread per row, three passes over the row.
 *
 * softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), with m = max_j x_j. Subtracting the max
 * changes nothing mathematically (it cancels between numerator and denominator) but keeps
 * every exponent <= 0, so exp() never overflows: without it, exp(100) is already Inf in fp32
 * and the inputs of this chapter go up to 1e4. Pass 1 finds m, pass 2 sums exp(x - m), pass 3
 * writes exp(x - m) / sum.
 *
 * Why it is slow: neighbouring threads work on neighbouring *rows*, cols elements apart, so a
 * warp's 32 loads touch 32 different cache lines (no coalescing), and a wide row gives the GPU
 * only `rows` threads to spread over its SMs: 1024 rows of 65536 keep 8 SMs busy out of 132.
 * It reads the row three times (L1/L2 catch some of that) and writes it once. In the SASS, the
 * loads are 32-bit LDG.E (or LDG.E.U16 for fp16) with a stride. */
#include "stage.h"
#include "softmax.h"

template <typename T>
static __global__ void softmax_naive_kernel(const T *x, T *y, long rows, long cols) {
    long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const T *in = x + row * cols;
    T *out = y + row * cols;
    float m = -INFINITY;
    for (long j = 0; j < cols; j++) m = fmaxf(m, load_float(in + j));
    float sum = 0.0f;
    for (long j = 0; j < cols; j++) sum += __expf(load_float(in + j) - m);
    float inv = 1.0f / sum;
    for (long j = 0; j < cols; j++) store_float(out + j, __expf(load_float(in + j) - m) * inv);
}

extern "C" int STAGE(softmax_naive)(const void *x, void *y, long rows, long cols,
                                    softmax_dtype dtype, cudaStream_t stream) {
    const int threads = 128;
    unsigned int blocks = blocks_for(rows, threads);
    if (dtype == SOFTMAX_F16)
        softmax_naive_kernel<<<blocks, threads, 0, stream>>>((const __half *)x, (__half *)y, rows,
                                                             cols);
    else
        softmax_naive_kernel<<<blocks, threads, 0, stream>>>((const float *)x, (float *)y, rows,
                                                             cols);
    return LAUNCH_OK;
}
