/* Stage 2 — one block per row, reductions through shared memory.
 *
 * Change from stage 1: a whole block of THREADS threads works on one row. Thread t handles
 * elements t, t + THREADS, t + 2*THREADS, ..., so each warp's loads are 32 consecutive
 * elements (coalesced into whole cache lines), and there are `rows` blocks to spread over the
 * SMs instead of rows / 128. Each of the three passes ends in a block-wide reduction: every
 * thread writes its partial max (then its partial sum) to shared memory, and a tree halves
 * the active threads each step with a __syncthreads between steps (Harris's "sequential
 * addressing", chapter 02), until element 0 holds the row's value.
 *
 * What it still costs: log2(THREADS) = 8 barrier steps per reduction, two reductions per row;
 * three reads of the row (the second and third mostly hit L2 for rows up to a few thousand
 * elements, not for the widest); and for short rows (C = 32) 224 of the 256 threads idle.
 * In the SASS, look for the STS/LDS/BAR.SYNC ladder of each reduction. */
#include "stage.h"
#include "softmax.h"

#define THREADS 256

/* Tree reduction in shared memory; op 0 = max, 1 = sum. Every thread gets the result. */
template <int OP> __device__ __forceinline__ float smem_reduce(float v, float *s) {
    s[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            float other = s[threadIdx.x + half];
            s[threadIdx.x] = OP == 0 ? fmaxf(s[threadIdx.x], other) : s[threadIdx.x] + other;
        }
        __syncthreads();
    }
    float r = s[0];
    __syncthreads(); /* s is reused by the next reduction */
    return r;
}

template <typename T>
static __global__ void __launch_bounds__(THREADS)
    softmax_block_smem_kernel(const T *x, T *y, long cols) {
    __shared__ float s[THREADS];
    const T *in = x + blockIdx.x * cols;
    T *out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (long j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, load_float(in + j));
    m = smem_reduce<0>(m, s);
    float sum = 0.0f;
    for (long j = threadIdx.x; j < cols; j += THREADS) sum += __expf(load_float(in + j) - m);
    float inv = 1.0f / smem_reduce<1>(sum, s);
    for (long j = threadIdx.x; j < cols; j += THREADS)
        store_float(out + j, __expf(load_float(in + j) - m) * inv);
}

extern "C" int STAGE(softmax_block_smem)(const void *x, void *y, long rows, long cols,
                                         softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16)
        softmax_block_smem_kernel<<<(unsigned)rows, THREADS, 0, stream>>>((const __half *)x,
                                                                          (__half *)y, cols);
    else
        softmax_block_smem_kernel<<<(unsigned)rows, THREADS, 0, stream>>>((const float *)x,
                                                                          (float *)y, cols);
    return LAUNCH_OK;
}
