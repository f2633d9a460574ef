/* Chapter 08: the launchers of every stage and exercise, shared by the driver (C) and the kernel
 * files (CUDA).
 *
 * Every launcher computes, for each (batch, head),
 *     O = softmax(Q K^T * scale [+ causal mask]) V,   LSE[i] = log(sum_j exp(s_ij)),
 * where s_ij = scale * q_i . k_j is the score of query i and key j (scale = 1 / sqrt(D)) and
 * the causal mask removes the keys j > i. Q, K, V and O are [batch, heads, seq, D] row-major
 * (element (b, h, i, d) at ((b * heads + h) * seq + i) * D + d), in fp16 or bf16; LSE is fp32
 * [batch, heads, seq]. The softmax statistics and every sum are fp32. D is 64 or 128,
 * seq >= 1 (no multiple of a tile needed). The launcher enqueues its work on `stream` and
 * returns LAUNCH_OK, LAUNCH_TODO (an unfinished exercise) or launch_unsupported(...). */
#ifndef ATTN_H
#define ATTN_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ATTN_F16 = 0, ATTN_BF16 = 1 } attn_dtype;

typedef struct {
    const void *q, *k, *v; /* device, [b, h, n, d] of dtype */
    void *o;               /* device, [b, h, n, d] of dtype */
    float *lse;            /* device, [b, h, n] */
    int b, h, n, d;
    attn_dtype dtype;
    int causal;            /* 1: key j > query i is masked out */
    float scale;           /* 1 / sqrt(d) */
    /* Stage 1's score matrix S: b * h * n * n floats (attn_naive_scratch_bytes). NULL in the
     * other stages. */
    void *scratch;
    size_t scratch_bytes;
} attn_args;

/* Stage 1 materializes S in fp32: 4 * b * h * n^2 bytes (P is written over it, in place). */
static inline double attn_naive_scratch_bytes(long b, long h, long n) {
    return 4.0 * (double)b * (double)h * (double)n * (double)n;
}

/* Stage 1 holds a row of S in one block's registers: 1024 threads x 16 values. */
#define ATTN_NAIVE_MAX_SEQ (1024L * 16)

/* Stage 2's tile: 64 queries per block, K and V streamed in tiles of 64 keys. */
#define ATTN_TILED_BQ 64
#define ATTN_TILED_BK 64
/* Its shared memory at D = 128 (the larger): Q, K, V tiles of 16-bit values with rows padded
 * by 2 elements, and the 64 x 64 fp32 tile of P with rows padded by 1. */
#define ATTN_TILED_SMEM(D)                                                                        \
    ((ATTN_TILED_BQ + 2 * ATTN_TILED_BK) * ((D) + 2) * 2 + ATTN_TILED_BQ * (ATTN_TILED_BK + 1) * 4)

/* Stage 3: one block of 4 warps per 64 queries (16 rows a warp), K/V tiles of 64 keys; the Q,
 * K and V tiles in shared memory with rows padded by 8 elements (16 bytes). */
#define ATTN_FA2_BQ 64
#define ATTN_FA2_BK 64
#define ATTN_FA2_SMEM(D) ((ATTN_FA2_BQ + 2 * ATTN_FA2_BK) * ((D) + 8) * 2)

/* Stage 4: one block of 4 warps per 128 queries, 32 rows (two m16 tiles) a warp, two blocks an
 * SM where shared memory allows; K/V tiles of 64 keys at D = 128 and 128 at D = 64 (what the
 * registers allow: README, "Stage 4"); Q's fragments re-read from the Q tile in shared memory
 * at every k-step; two K and two V buffers, unpadded swizzled rows. 96 KiB at D = 128, 80 KiB
 * at D = 64. */
#define ATTN_FA2T_BQ 128
#define ATTN_FA2T_WARP_ROWS 32
#define ATTN_FA2T_BK(D) ((D) == 64 ? 128 : 64)
#define ATTN_FA2T_SMEM(D) ((ATTN_FA2T_BQ + 4 * ATTN_FA2T_BK(D)) * (D) * 2)

/* Stage 5 (sm_90a): one block of 3 warpgroups per 128 queries (a TMA producer and two
 * consumers of 64 rows), K/V tiles of 128 keys in a ring of 2 slots each; the Q tile and the
 * slots are D / 64 swizzled panels of 128 rows x 128 bytes, 1024-aligned (the 1024 below is
 * the alignment slack). 161 KiB at D = 128, 81 KiB at D = 64. */
#define ATTN_WGMMA_BQ 128
#define ATTN_WGMMA_BK 128
#define ATTN_WGMMA_STAGES 2
#define ATTN_WGMMA_SMEM(D)                                                                         \
    ((ATTN_WGMMA_BQ + 2 * ATTN_WGMMA_STAGES * ATTN_WGMMA_BK) * (D) * 2 + 1024)

/* Stage 6 (sm_90a): stage 5's block and tiles, persistent (one block an SM, looping over
 * (pair, q tile) items); two Q buffers, so that the next item's Q loads while the current one
 * still reads its own; the K ring 3 slots deep at D = 64 (a tile is 16 KiB there), 2 at D = 128,
 * the V ring 3 at both: 225 KiB at D = 128 (of the 227 a block may have), 129 KiB at D = 64.
 * At D = 128 the third slot goes to V (measured, H100: +0.5% at 8 x 16 x 2048, +1% at
 * 16 x 16 x 1024 against 2 + 2; to K instead, with K loaded a tile ahead of V: no change; one Q
 * buffer and 3 + 3: -3%): V_j waits inside the turn (after S_j's issue), K_j outside it.
 * The -D overrides are for such A/B builds. */
#ifndef ATTN_FA3_K_STAGES
#define ATTN_FA3_K_STAGES(D) ((D) == 64 ? 3 : 2)
#endif
#ifndef ATTN_FA3_V_STAGES
#define ATTN_FA3_V_STAGES(D) 3
#endif
#ifndef ATTN_FA3_QBUFS
#define ATTN_FA3_QBUFS 2
#endif
#define ATTN_FA3_SMEM(D)                                                                           \
    ((ATTN_FA3_QBUFS * ATTN_WGMMA_BQ + (ATTN_FA3_K_STAGES(D) + ATTN_FA3_V_STAGES(D)) *             \
      ATTN_WGMMA_BK) * (D) * 2 + 1024)

#define ATTN_LAUNCHERS(p)                                                                          \
    int p##attn_naive(const attn_args *a, cudaStream_t stream);                                    \
    int p##attn_tiled_online(const attn_args *a, cudaStream_t stream);                             \
    int p##attn_fa2(const attn_args *a, cudaStream_t stream);                                      \
    int p##attn_fa2_tuned(const attn_args *a, cudaStream_t stream);                                \
    int p##attn_wgmma(const attn_args *a, cudaStream_t stream);                                    \
    int p##attn_fa3(const attn_args *a, cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in exercises/. */
ATTN_LAUNCHERS()
ATTN_LAUNCHERS(ex_)

/* The check's reference (reference.cu): stage 1's computation without its roundings to the
 * input type: S = scale Q K^T in fp32 (cuBLAS, fp32 accumulation), P = softmax(S) in fp32 over
 * S in place, O = P V in fp32 (cuBLAS's fp32 GEMM on V widened to fp32, no TF32). a->o and
 * a->lse are ignored; o32 gets O ([b, h, n, d] fp32), lse32 the LSE; v32 is scratch of
 * b * h * n * d floats, a->scratch S. Returns LAUNCH_OK or launch_unsupported(...). */
int attn_reference_f32(const attn_args *a, float *v32, float *o32, float *lse32,
                       cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Two adjacent 16-bit values as two floats, whatever the storage type. */
__device__ __forceinline__ float2 attn_load2(const __half *p) {
    return __half22float2(*(const __half2 *)p);
}
__device__ __forceinline__ float2 attn_load2(const __nv_bfloat16 *p) {
    return __bfloat1622float2(*(const __nv_bfloat162 *)p);
}
__device__ __forceinline__ void attn_store2(__half *p, float x, float y) {
    *(__half2 *)p = __floats2half2_rn(x, y);
}
__device__ __forceinline__ void attn_store2(__nv_bfloat16 *p, float x, float y) {
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(x, y);
}
#endif

#endif
