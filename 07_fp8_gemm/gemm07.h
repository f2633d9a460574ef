/* Chapter 07: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA), and the one scale convention that kernels and the host check share.
 *
 * The GEMM: D = (A (.) scale_A) (B (.) scale_B)^T, A e4m3 M x K row-major (lda = K), B e4m3
 * N x K row-major (ldb = K: both K-major, as wgmma reads them), D bf16 M x N row-major; the
 * products accumulated in fp32, D rounded to bf16 once. Two scalings (README, "FP8"):
 *   per tensor: scale_a and scale_b point to one fp32 value each;
 *   block:      scale_a holds one fp32 value per 1 x 128 slice of a row of A, scale_b one per
 *               128 x 128 block of B, in exactly the layouts of common/gemm_ref.h (the same
 *               buffers feed cuBLASLt and our kernels):
 *                 scale of A[i][kb*128 .. +127]          scale_a[kb * M + i]
 *                 scale of B[nb*128 .. +127][kb*128 .. +127]   scale_b[nb * L4 + kb]
 *               with L = ceil(K / 128) and L4 = L rounded up to a multiple of 4
 *               (gemm_ref_scale_a_index / gemm_ref_scale_b_index). Our quantize kernels write
 *               scale_b's padding entries (kb >= L) as 0; no GEMM reads them.
 *
 * The inputs come from bf16 matrices through stage 1, the quantize kernels. The convention
 * (the same on the GPU and in the host check, so that both give the same bits):
 *   scale = amax / 448 over the values that share it (448: e4m3's largest finite value),
 *           1 when they are all zero (never a division by zero);
 *   q     = e4m3(x * (1 / scale)): the reciprocal correctly rounded to fp32, the product
 *           rounded to fp32, then rounded to nearest-even e4m3, saturating to +-448;
 *   x ~ q * scale.
 * Quantize launchers: x bf16 rows x cols row-major, q e4m3 of the same shape, and
 *   _tensor:   one scale (scale[0]);
 *   _1x128:    the layout of scale_a above (with M = rows): scale[kb * rows + i];
 *   _128x128:  the layout of scale_b above (with N = rows): scale[rb * L4 + kb], padding 0.
 * Each needs cols % 16 == 0 (rows of whole 16 bytes of e4m3, as the FP8 GEMMs need K) and
 * 16-byte aligned x and q; any rows >= 1, any cols >= 16 (a partial last slice or block when
 * cols % 128 != 0, a partial last block of rows when rows % 128 != 0). Inputs must be finite. */
#ifndef GEMM07_H
#define GEMM07_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QUANT07_E4M3_MAX 448.0f

#ifdef __CUDACC__
#define QUANT07_HD __host__ __device__ __forceinline__
#else
#define QUANT07_HD static inline
#endif

/* The scale of values whose largest magnitude is amax (>= 0), and its reciprocal. Both are
 * IEEE fp32 operations, correctly rounded on the host and on the GPU alike (nvcc's default
 * -prec-div=true), so the two sides agree bit for bit. */
QUANT07_HD float quant07_scale(float amax) {
    return amax > 0.0f ? amax / QUANT07_E4M3_MAX : 1.0f;
}
QUANT07_HD float quant07_inverse(float scale) { return 1.0f / scale; }

#define QUANT07_LAUNCHERS(p)                                                                       \
    int p##quant07_tensor(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,           \
                          cudaStream_t stream);                                                    \
    int p##quant07_1x128(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,            \
                         cudaStream_t stream);                                                     \
    int p##quant07_128x128(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,          \
                           cudaStream_t stream);

/* The GEMM stages, each
 *   int gemm07_<name>(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
 *                     const float *scale_b, bf16_t *D, int M, int N, int K, cudaStream_t stream);
 * (the signature of gemm_ref_e4m3_tn_tensor / _block, so a stage and the library share a row
 * type): kernels/02_tensor_scaled_sm90a.cu (per-tensor scales, wgmma on e4m3),
 * 03_promoted_sm90a.cu (each K tile's sum promoted into fp32 registers),
 * 04_block_scaled_sm90a.cu (A's 1 x 128 and B's 128 x 128 scales applied at promotion),
 * 05_overlapped_sm90a.cu (two accumulators in turn: K tile t + 1 issued before tile t is
 * promoted), 06_persistent_sm90a.cu (block-scaled from here to stage 8: persistent 2-block
 * clusters sharing B), 07_handoff_sm90a.cu (the epilogue through shared memory, stored by a
 * producer thread), 08_lean_sm90a.cu (a lean K loop) and 09_final_sm90a.cu (both scalings, a
 * tile per size). */
#define GEMM07_LAUNCHERS(p)                                                                        \
    int p##gemm07_tensor_scaled(const e4m3_t *A, const e4m3_t *B, const float *scale_a,          \
                                const float *scale_b, bf16_t *D, int M, int N, int K,             \
                                cudaStream_t stream);                                              \
    int p##gemm07_promoted(const e4m3_t *A, const e4m3_t *B, const float *scale_a,               \
                           const float *scale_b, bf16_t *D, int M, int N, int K,                  \
                           cudaStream_t stream);                                                   \
    int p##gemm07_block_scaled(const e4m3_t *A, const e4m3_t *B, const float *scale_a,           \
                               const float *scale_b, bf16_t *D, int M, int N, int K,              \
                               cudaStream_t stream);                                               \
    int p##gemm07_overlapped(const e4m3_t *A, const e4m3_t *B, const float *scale_a,             \
                             const float *scale_b, bf16_t *D, int M, int N, int K,                \
                             cudaStream_t stream);                                                 \
    int p##gemm07_persistent(const e4m3_t *A, const e4m3_t *B, const float *scale_a,             \
                             const float *scale_b, bf16_t *D, int M, int N, int K,                \
                             cudaStream_t stream);                                                 \
    int p##gemm07_handoff(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                \
                          const float *scale_b, bf16_t *D, int M, int N, int K,                   \
                          cudaStream_t stream);                                                    \
    int p##gemm07_lean(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                   \
                       const float *scale_b, bf16_t *D, int M, int N, int K,                      \
                       cudaStream_t stream);                                                       \
    int p##gemm07_tiles(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                  \
                        const float *scale_b, bf16_t *D, int M, int N, int K,                     \
                        cudaStream_t stream);                                                      \
    int p##gemm07_wide(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                   \
                       const float *scale_b, bf16_t *D, int M, int N, int K,                      \
                       cudaStream_t stream);                                                       \
    int p##gemm07_narrow(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                 \
                         const float *scale_b, bf16_t *D, int M, int N, int K,                    \
                         cudaStream_t stream);                                                     \
    int p##gemm07_fitted(const e4m3_t *A, const e4m3_t *B, const float *scale_a,                 \
                         const float *scale_b, bf16_t *D, int M, int N, int K,                    \
                         cudaStream_t stream);                                                     \
    int p##gemm07_final_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,           \
                               const float *scale_b, bf16_t *D, int M, int N, int K,              \
                               cudaStream_t stream);                                               \
    int p##gemm07_final_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,            \
                              const float *scale_b, bf16_t *D, int M, int N, int K,               \
                              cudaStream_t stream);

/* Dynamic shared memory of the GEMM stages (bytes): the ring of slots, each one K tile of 128
 * e4m3 (128 bytes, the span of the 128-byte swizzle) of A's and B's rows, plus 1024 bytes of
 * slack to start the tiles on a 1024-byte boundary (chapter 06, gemm06.h). */
#define GEMM07_SMEM_TENSOR_SCALED (4 * (128 + 256) * 128 + 1024) /* 4 slots, 128 x 256 tile */
#define GEMM07_SMEM_PROMOTED (6 * (128 + 128) * 128 + 1024)      /* 6 slots, 128 x 128 tile */
/* Stage 4: stage 3's slots, each with the 128 fp32 scales of its A rows beside it. */
#define GEMM07_SMEM_BLOCK_SCALED (6 * ((128 + 128) * 128 + 128 * 4) + 1024)
/* Stage 5: stage 4's (the second accumulator is registers, not shared memory). */
#define GEMM07_SMEM_OVERLAPPED GEMM07_SMEM_BLOCK_SCALED
/* Stage 6: stage 4's 6 slots with their scales (the epilogue still from registers). */
#define GEMM07_SMEM_PERSISTENT (6 * ((128 + 128) * 128 + 128 * 4) + 1024)
/* Stages 7 and 8: two 8 KiB staging boxes per consumer take a slot's room: 5 slots, A's scales
 * of the 5 in 3 KiB after them (the boxes start on a 1024-byte boundary). */
#define GEMM07_SMEM_HANDOFF (5 * (128 + 128) * 128 + 3 * 1024 + 2 * 2 * 8192 + 1024)
#define GEMM07_SMEM_LEAN GEMM07_SMEM_HANDOFF
/* Stage 9 at its largest (per tensor, 128 x 128 tiles): 6 slots and two 8 KiB staging boxes per
 * consumer, as chapter 06's stage 8; the other configurations need less. */
#define GEMM07_SMEM_FINAL (6 * (128 + 128) * 128 + 2 * 2 * 8192 + 1024)

typedef int (*gemm07_fn)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                         const float *scale_b, bf16_t *D, int M, int N, int K,
                         cudaStream_t stream);
typedef int (*quant07_fn)(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                          cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in
 * exercises/. */
QUANT07_LAUNCHERS()
QUANT07_LAUNCHERS(ex_)
GEMM07_LAUNCHERS()
GEMM07_LAUNCHERS(ex_)

/* The chapter's inputs (inputs.cu): uniform values in [-1, 1) (fill_uniform_bf16), each 1 x 128
 * slice multiplied by 2^e with e = e_block + e_row: e_block in -4..4 drawn per 128 x 128 block,
 * e_row in -3..0 per row and slice, from the seed. So 1 x 128 scales differ from slice to slice
 * and 128 x 128 scales from block to block (with plain uniform values every scale would be about
 * 1/448, and a kernel that read the wrong block's scale would pass). zero_blocks: also set to
 * zero the block of rows 0-127, columns 128-255 (if cols > 128) and the first slice of row
 * min(130, rows - 1) (if rows > 1): the all-zero case of every scaling. */
void quant07_make_input(bf16_t *x, long rows, long cols, unsigned long long seed,
                        int zero_blocks, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
