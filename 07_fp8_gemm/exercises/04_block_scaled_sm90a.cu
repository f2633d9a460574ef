/* Exercise 4 — block scales: your stage 3, with each K tile's partial sum multiplied by A's
 * 1 x 128 and B's 128 x 128 scales as it is added into the fp32 registers.
 *
 * Hints:
 *  - sum += part * sa(row, kb) * sb(n0 / 128, kb): with a 128-wide tile, B's scale is one
 *    float per K tile (scale_b[(n0 / 128) * L4 + kb], L4 = ceil(K / 128) rounded up to 4);
 *    A's are one per row (scale_a[kb * M + row]).
 *  - Load A's 128 scales of the tile with the operands: a TMA map over scale_a as an fp32
 *    tensor {M, L} (tensor_map_desc, TMAP_F32, no swizzle, box {128, 1}, stride M * 4: M % 4),
 *    one more tma_load_2d per slot into 512 bytes beside the slot, counted in expect_tx.
 *    GEMM07_SMEM_BLOCK_SCALED has room for 6 slots of 32 KiB + 512 bytes.
 *  - A thread's fragment rows: 64 c + 16 warp + lane / 4, and 8 below (registers with
 *    (i / 2) % 2 == 1). Read both scales before you release the slot.
 *  - Check against cuBLASLt's block-scaled product: make check-07 ARGS="--kernel ex_block_scaled"
 */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_block_scaled(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                  const float *scale_b, bf16_t *D, int M, int N, int K,
                                  cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
