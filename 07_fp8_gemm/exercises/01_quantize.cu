/* Exercise 1 — quantize bf16 to e4m3: a scale per tensor, per 1 x 128 slice of a row, per
 * 128 x 128 block.
 *
 * The contract (gemm07.h): scale = quant07_scale(amax) (amax / 448, or 1 when the group is all
 * zero), q = e4m3(x * quant07_inverse(scale)), rounded to nearest even and saturating. The check
 * compares every byte of q and every scale with the host's, exactly: compute them the same way
 * (multiply by the reciprocal; do not divide by the scale).
 *
 * Hints:
 *  - A thread's unit: 16 consecutive elements, two 16-byte loads (uint4) in, one 16-byte store
 *    out. cols % 16 == 0, so a unit never straddles a row, and x and q are 16-byte aligned.
 *  - A bf16 is the top half of an fp32: the low element of a 32-bit word w is
 *    __uint_as_float(w << 16), the high one __uint_as_float(w & 0xFFFF0000u).
 *  - __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3) (cuda_fp8.h) gives
 *    two e4m3 bytes, a in the low byte: one F2FP instruction on sm_89 and later.
 *  - 1 x 128: a slice is 8 threads of 16; lanes_max<8> (reduce.cuh) gives those 8 lanes their
 *    slice's amax (call it from every lane, also those past the matrix's edge, with 0). Put the
 *    scale at scale[kb * rows + i]. Give a block 32 rows of one column block, so that its 32
 *    scales are contiguous.
 *  - 128 x 128: one block of 256 threads per 128 x 128 block; keep the tile in registers
 *    (4 rows x 16 columns per thread), block_max (reduce.cuh), then quantize from registers.
 *    The scale goes to scale[rb * L4 + kb], L4 = ceil(cols / 128) rounded up to 4; write the
 *    padding entries (kb >= L) as 0.
 *  - Per tensor: no block knows the amax until all have read their share. Two kernels: an amax
 *    reduction (chapter 02's last-block finish; atomicMax on __float_as_uint(m) works for
 *    m >= 0), then the quantize pass. Reset whatever counters you keep, for the next launch.
 *  - Partial blocks: rows % 128 and cols % 128 need not be 0; what lies past the edge is
 *    neither read nor written, and counts as 0 for the amax.
 *
 * Check it:  make check-07 ARGS="--kernel ex_quantize_1x128"
 * (the stage in kernels/01_quantize.cu is the reference; read it after you try). */
#include "stage.h"
#include "gemm07.h"
#include "reduce.cuh"

extern "C" int ex_quant07_tensor(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                                 cudaStream_t stream) {
    /* TODO */
    (void)x, (void)rows, (void)cols, (void)q, (void)scale, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_quant07_1x128(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                                cudaStream_t stream) {
    /* TODO */
    (void)x, (void)rows, (void)cols, (void)q, (void)scale, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_quant07_128x128(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                                  cudaStream_t stream) {
    /* TODO */
    (void)x, (void)rows, (void)cols, (void)q, (void)scale, (void)stream;
    return LAUNCH_TODO;
}
