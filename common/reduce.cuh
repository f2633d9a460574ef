/* Warp and block reductions, shared by every chapter that reduces (02_reduce, 03_softmax,
 * 07_fp8_gemm's amax, 08_flash_attn's row statistics). Device code only; include from .cu files. */
#ifndef REDUCE_CUH
#define REDUCE_CUH

#include <cuda_runtime.h>

#define FULL_MASK 0xffffffffu

/* Butterfly (xor) shuffles: after log2(32) steps every lane holds the warp's result, which
 * is what softmax needs (every lane rescales its own elements). SASS: SHFL.BFLY. */
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

/* The max over aligned groups of WIDTH lanes (2, 4, 8, 16 or 32): xor offsets below WIDTH never
 * leave the group, so lanes 0-7, 8-15, ... each get their own group's max. Every lane of the warp
 * must call it. 07 reduces a 1x128 slice held by 8 lanes this way. */
template <int WIDTH> __device__ __forceinline__ float lanes_max(float v) {
    static_assert(WIDTH >= 2 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0, "a power of two <= 32");
#pragma unroll
    for (int offset = WIDTH / 2; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

__device__ __forceinline__ float warp_max(float v) { return lanes_max<32>(v); }

/* The sum over aligned groups of WIDTH lanes, lanes_max's sibling: 08's tiled attention keeps
 * a query row in 4 lanes, each with part of the row's exponentials. */
template <int WIDTH> __device__ __forceinline__ float lanes_sum(float v) {
    static_assert(WIDTH >= 2 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0, "a power of two <= 32");
#pragma unroll
    for (int offset = WIDTH / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

__device__ __forceinline__ double warp_sum_f64(double v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

/* Block-wide reductions: each warp reduces, warp leaders meet in shared memory, the first warp
 * reduces those, and the result is broadcast to every thread. `scratch` needs one float per
 * warp (32 floats covers any block). Every thread of the block must call it; it contains
 * __syncthreads, so it may be called again right after it returns. */
__device__ __forceinline__ float block_sum(float v, float *scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads(); /* scratch may still be read by a previous call */
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : 0.0f;
    return warp_sum(v);
}

__device__ __forceinline__ float block_max(float v, float *scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : -INFINITY;
    return warp_max(v);
}

#endif
