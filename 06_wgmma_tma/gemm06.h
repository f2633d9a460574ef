/* Chapter 06: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA).
 *
 * C = A * B^T with A bf16 row-major M x K (lda = K), B bf16 row-major N x K (ldb = K: both
 * operands K-major, the layout wgmma reads from shared memory without a transpose), C bf16
 * row-major M x N (ldc = N); products accumulated in fp32, C rounded to bf16 once. Every
 * launcher needs K % 8 == 0 (rows of whole 16-byte chunks: ordinary 16-byte copies in stage 1,
 * TMA's 16-byte row stride from stage 2); the driver's row predicates say so. Any M and N >= 1
 * (stage 7: N % 8 == 0). Stage 8 also has an fp16 launcher (f16_t in and out). */
#ifndef GEMM06_H
#define GEMM06_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GEMM06_LAUNCHERS(p)                                                                        \
    int p##gemm06_first_wgmma(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,  \
                              cudaStream_t stream);                                                \
    int p##gemm06_tma(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,          \
                      cudaStream_t stream);                                                        \
    int p##gemm06_pipeline(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,     \
                           cudaStream_t stream);                                                   \
    int p##gemm06_warp_specialized(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,    \
                                   int K, cudaStream_t stream);                                    \
    int p##gemm06_persistent(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,   \
                             cudaStream_t stream);                                                 \
    int p##gemm06_clusters(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,     \
                           cudaStream_t stream);                                                   \
    int p##gemm06_epilogue(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,     \
                           cudaStream_t stream);                                                   \
    int p##gemm06_final(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,        \
                        cudaStream_t stream);                                                      \
    int p##gemm06_final_f16(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,       \
                            cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in
 * exercises/. */
GEMM06_LAUNCHERS()
GEMM06_LAUNCHERS(ex_)

/* Dynamic shared memory each stage asks for (bytes): its operand tiles (rows of 128 bytes, one
 * 64-wide K tile of bf16) plus 1024 bytes of slack, so that the kernel can start its tiles on a
 * 1024-byte boundary (the 128-byte swizzle repeats every 8 rows = 1024 bytes; wgmma and TMA
 * both read the pattern from the address bits). */
#define GEMM06_SMEM_FIRST_WGMMA ((64 + 128) * 128 + 1024)  /* A 64 rows, B 128 rows */
#define GEMM06_SMEM_TMA ((128 + 128) * 128 + 1024)         /* A 128 rows, B 128 rows */
/* From stage 3 on, a ring of slots, each one K tile of A and of B. */
#define GEMM06_PIPELINE_DEPTH 3 /* stage 3's default (measured best); GEMM06_PIPELINE_DEPTH=2..6 overrides */
#define GEMM06_SMEM_PIPELINE (GEMM06_PIPELINE_DEPTH * (128 + 128) * 128 + 1024)
#define GEMM06_SMEM_WARP_SPECIALIZED (4 * (128 + 256) * 128 + 1024) /* 4 slots, 128x256 tile */
#define GEMM06_SMEM_PERSISTENT GEMM06_SMEM_WARP_SPECIALIZED
#define GEMM06_SMEM_CLUSTERS GEMM06_SMEM_WARP_SPECIALIZED
/* Stage 7: 3 slots and two 32 KiB staging areas for C (one per consumer warpgroup). */
#define GEMM06_SMEM_EPILOGUE (3 * (128 + 256) * 128 + 2 * 64 * 256 * 2 + 1024)
/* Stage 8, tiles of 128 x 256, 128 x 128 or 64 x 128: 4, 6 or 8 slots, and two 8 KiB staging
 * boxes per consumer; at most 225 KiB (the 128 x 256 tile's). */
#define GEMM06_SMEM_FINAL (4 * (128 + 256) * 128 + 2 * 2 * 8192 + 1024)

#ifdef __cplusplus
}
#endif
#endif
