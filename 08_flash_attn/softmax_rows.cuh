/* The row softmax of stage 1 and of the check's fp32 reference (reference.cu): chapter 03's
 * stage 5 idea (the row read once into registers, block_max and block_sum, written once), with
 * what attention adds to it:
 *   - the causal mask: key j > query i counts as -inf, so exp gives 0;
 *   - the log-sum-exp of the row, LSE = m + log(sum_j exp(s_j - m)), written beside P;
 *   - P written over S in place, in the type the next GEMM reads (fp16 or bf16 for stage 1,
 *     fp32 for the reference): P's row r starts where S's row r starts, so a 16-bit P has a
 *     leading dimension of 2n elements. This is safe because every thread has read its values
 *     before the first barrier of block_max, and a row is only ever written by its own block.
 * Chapter 03's softmax_regs cannot be linked instead: it has no mask, no LSE, and writes the
 * input's type (fp32 -> fp32 or fp16 -> fp16; stage 1 needs fp32 -> fp16 and bf16).
 *
 * One block per row of S (b * h * n rows of n scores, already scaled by 1/sqrt(D) in the
 * GEMM). Thread t holds the scores t, t + T, t + 2T, ... (T threads, E values each): coalesced,
 * and v[] indexed by constants only, so it stays in registers. expf (the accurate one: a
 * range reduction around MUFU.EX2), not __expf. */
#ifndef SOFTMAX_ROWS_CUH
#define SOFTMAX_ROWS_CUH

#include "attn.h"
#include "reduce.cuh"

__device__ __forceinline__ void softmax_store(float *p, float x) { *p = x; }
__device__ __forceinline__ void softmax_store(__half *p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void softmax_store(__nv_bfloat16 *p, float x) {
    *p = __float2bfloat16_rn(x);
}

template <typename TP, int E>
static __global__ void __launch_bounds__(1024) attn_softmax_rows_kernel(float *s, float *lse, int n,
                                                                        int causal) {
    __shared__ float scratch[32];
    const long row = blockIdx.x;        /* (b * h + head) * n + query */
    const int query = (int)(row % n);
    const int last = causal ? query : n - 1; /* the last key this query sees */
    const float *in = s + row * n;
    float v[E];
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int j = threadIdx.x + e * blockDim.x;
        v[e] = j <= last ? in[j] : -INFINITY;
    }
    float m = -INFINITY;
#pragma unroll
    for (int e = 0; e < E; e++) m = fmaxf(m, v[e]);
    m = block_max(m, scratch); /* key 0 is never masked: m is finite */
    float sum = 0.0f;
#pragma unroll
    for (int e = 0; e < E; e++) {
        v[e] = expf(v[e] - m);
        sum += v[e];
    }
    sum = block_sum(sum, scratch);
    const float inv = 1.0f / sum;
    TP *out = (TP *)(s + row * n); /* P over S, in place */
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int j = threadIdx.x + e * blockDim.x;
        if (j < n) softmax_store(out + j, v[e] * inv);
    }
    if (threadIdx.x == 0) lse[row] = m + logf(sum);
}

/* rows rows of n scores at s: P over S, LSE to lse. E (values per thread) is the smallest of 4,
 * 8, 16 that lets 1024 threads cover the row (E = 32 spills: 1024 threads get 64 registers
 * each, and 32 values plus their addresses do not fit). */
template <typename TP>
static int attn_softmax_rows(float *s, float *lse, long rows, int n, int causal,
                             cudaStream_t stream) {
    if (n > ATTN_NAIVE_MAX_SEQ)
        return launch_unsupported("seq %d > %ld: a row of S does not fit one block's registers", n,
                                  ATTN_NAIVE_MAX_SEQ);
    if (rows > 0x7fffffffL)
        return launch_unsupported("%ld rows of S: more than a grid's 2^31 - 1 blocks", rows);
    int e = 4;
    while ((n + e - 1) / e > 1024) e *= 2;
    const int threads = ((n + e - 1) / e + 31) / 32 * 32;
    const unsigned blocks = (unsigned)rows;
    if (e == 4) attn_softmax_rows_kernel<TP, 4><<<blocks, threads, 0, stream>>>(s, lse, n, causal);
    else if (e == 8) attn_softmax_rows_kernel<TP, 8><<<blocks, threads, 0, stream>>>(s, lse, n, causal);
    else attn_softmax_rows_kernel<TP, 16><<<blocks, threads, 0, stream>>>(s, lse, n, causal);
    return LAUNCH_OK;
}

#endif
