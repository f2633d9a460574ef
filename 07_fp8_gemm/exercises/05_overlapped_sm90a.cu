/* Exercise 5 — two accumulators in turn: your stage 4, with K tile t + 1 issued into a second
 * accumulator before tile t is promoted, so the tensor core multiplies while the warpgroup adds.
 *
 * The idea: in stage 4 a consumer waits for all its wgmmas (wait_group<0>) before it promotes,
 * and its tensor-core work stops for the 64 FFMAs; the other consumer, started by the same
 * barrier, promotes at the same moment. Keep one more group in flight: while tile t is promoted,
 * tile t + 1 is already multiplying into the other accumulator.
 *
 * The contract:
 *  - Registers: per consumer thread the fp32 sums (64) and two m64n128 accumulators (64 + 64),
 *    192 of the 232 that setmaxnreg gives a consumer; no LDL/STL (the build fails on a spill).
 *    An accumulator must be one fixed set of registers: the two may not be chosen by a runtime
 *    index (unroll the K loop by two, one K tile into each).
 *  - The wait_group<1> rule: tile t's accumulator is read (and promoted) only after a
 *    wgmma_wait_group<1> that follows the commit of tile t + 1's group (all but the newest
 *    group done), and after wgmma_fence_operands on it; the last K tile waits with <0>.
 *  - A slot is handed back once its tile's group is complete and its A scales have been read:
 *    never while that tile's wgmmas may still be reading it.
 *  - No C-level branch on a per-thread value between a wgmma and its wait. A while loop around
 *    try_wait, or an `if (lane == 0)` around the arrive, is one: ptxas may then serialize the
 *    wgmmas (C7518 in -Xptxas -v, a WARPGROUP.DEPBAR.LE gsb0, 0x0 after each group), and the
 *    overlap is gone. ptxas sees no branch where the spin loop is inside the asm and the arrive
 *    is predicated inside its asm: ptx/mbarrier.cuh has both. Read the -Xptxas -v output (any
 *    C75xx line is a bug) and the SASS.
 *  - Everything else as stage 4: 128 x 128 tile, two consumers, one tile per block, 6 slots,
 *    GEMM07_SMEM_OVERLAPPED, the register epilogue; M % 4 == 0, K % 16 == 0, any N.
 *  - SASS: in the K loop, four QGMMA.64x128x32.F32.E4M3.E4M3 (one accumulator), then
 *    WARPGROUP.DEPBAR.LE gsb0, 0x1, then 64 FFMA of the other; no DEPBAR with 0x0 inside it.
 *
 * Check it:  make check-07 ARGS="--kernel ex_overlapped"
 * (then make run-07 ARGS="--kernel block_scaled --kernel ex_overlapped" for what it bought). */
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

extern "C" int ex_gemm07_overlapped(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                    const float *scale_b, bf16_t *D, int M, int N, int K,
                                    cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
