/* Chapter 05: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA).
 *
 * C = A * B with A fp16 row-major M x K (lda = K), B fp16 "column-major" K x N, that is stored
 * as N rows of K (ldb = K, the TN layout: both operands contiguous along k), C fp16 row-major
 * M x N (ldc = N). Accumulation in fp32 except in hgemm_f16_accum. The NN stage takes B stored
 * row-major K x N (ldb = N) instead. Every launcher needs K % 8 == 0 (rows of 16 bytes, so each
 * 16-byte copy is whole and aligned); what else a stage needs is in the driver's supports(). */
#ifndef HGEMM_H
#define HGEMM_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HGEMM_LAUNCHERS(p)                                                                         \
    int p##hgemm_wmma_global(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,      \
                             cudaStream_t stream);                                                 \
    int p##hgemm_wmma_smem(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,        \
                           cudaStream_t stream);                                                   \
    int p##hgemm_mma_ldmatrix(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,     \
                              cudaStream_t stream);                                                \
    int p##hgemm_cp_async_2stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,  \
                                 cudaStream_t stream);                                             \
    int p##hgemm_cp_async_3stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,  \
                                 cudaStream_t stream);                                             \
    int p##hgemm_cp_async_4stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,  \
                                 cudaStream_t stream);                                             \
    int p##hgemm_swizzle(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,          \
                         cudaStream_t stream);                                                     \
    int p##hgemm_warp_tile(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,        \
                           cudaStream_t stream);                                                   \
    int p##hgemm_raster(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,           \
                        cudaStream_t stream);                                                      \
    int p##hgemm_final(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,            \
                       cudaStream_t stream);                                                       \
    int p##hgemm_f16_accum(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,        \
                           cudaStream_t stream);                                                   \
    int p##hgemm_nn(const f16_t *A, const f16_t *Bkn, f16_t *C, int M, int N, int K,             \
                    cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in
 * exercises/. */
HGEMM_LAUNCHERS()
HGEMM_LAUNCHERS(ex_)

/* Dynamic shared memory each stage asks for (bytes), so the driver can skip a stage on a GPU
 * that allows less per block (sm_89 allows 99 KiB, sm_80 163 KiB, sm_90 227 KiB). */
#define HGEMM_SMEM_CP_ASYNC(stages) ((128 + 128) * (32 + 8) * 2 * (stages))
#define HGEMM_SMEM_SWIZZLE ((128 + 128) * 64 * 2 * 3)
#define HGEMM_SMEM_WARP_TILE ((128 + 256) * 64 * 2 * 3)
#define HGEMM_SMEM_FINAL_MIN ((128 + 128) * 64 * 2 * 3) /* its smallest configuration */
#define HGEMM_SMEM_NN ((128 + 128) * 64 * 2 * 3)

#ifdef __cplusplus
}
#endif
#endif
