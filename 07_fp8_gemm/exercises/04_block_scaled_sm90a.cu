/* Exercise 4 — block scales: your stage 3, with each K tile's partial sum multiplied by A's
 * 1 x 128 and B's 128 x 128 scales as it is added into the fp32 registers.
 *
 * The idea: within one K tile kb every product of row i of A and row j of B carries the same
 * factor sa(i, kb) * sb(j / 128, kb). So the tensor core sums the tile without scales, exactly
 * as in stage 3, and the factor is applied where the partial sum is promoted.
 *
 * The contract:
 *  - Layouts (gemm07.h, common/gemm_ref.h): A's scale of row i at K block kb is
 *    scale_a[kb * M + i]; B's of the 128 x 128 block (nb, kb) is scale_b[nb * L4 + kb],
 *    L = ceil(K / 128), L4 = L rounded up to a multiple of 4. With a 128-wide tile, B's scale is
 *    one float per K tile for the whole tile; A's are one per row.
 *  - A's scales of a slot's K tile are in shared memory when the slot's full barrier completes
 *    (load them with the operands, counted in the same expected bytes), and are read before the
 *    slot is handed back. A's scales as a TMA tensor: fp32, {M, L}, no swizzle, a row stride of
 *    M * 4 bytes, which TMA wants in 16s: M % 4 == 0, else report the shape unsupported (the
 *    row reads skip, as ours does). GEMM07_SMEM_BLOCK_SCALED has room for 6 slots of 32 KiB +
 *    512 bytes.
 *  - A thread's fragment holds two rows of its band: 16 * warp + lane / 4 and 8 below
 *    (registers with (i / 2) % 2 == 1), so two A scales a K tile.
 *  - B's scale is a global load the whole tile shares: issue it early enough that its latency
 *    hides (before the wait for the slot).
 *  - SASS: 64 FFMA in the promotion where stage 3 had FADDs; no LDL/STL.
 *
 * Check it:  make check-07 ARGS="--kernel ex_block_scaled"
 * (against the exact product; the inputs' scales differ by powers of two from slice to slice
 * and block to block, so a scale from the wrong row, block or K tile shows). */
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
