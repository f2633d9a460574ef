/* Exercise 9 — the final FP8 kernels, per tensor and block-scaled: your stages 3 and 4 inside
 * chapter 06's stage 8 machinery, then tuned for FP8's short wgmma.
 *
 * A project: build it in milestones that follow the subsections of the README's stage 5, in
 * order. Each is a contract; the check below passes after every one (keep it passing); make run-07
 * ARGS="--kernel final_tensor --kernel ex_final_tensor" shows what each bought.
 *
 *  1. Persistent clusters sharing B. A grid of resident 2-block clusters (launch.cuh has the
 *     resident count and a balanced grid); each cluster walks the tiles in the grouped order
 *     (gemm06_sm90a.cuh), the two blocks on tiles stacked along M. Each block loads half of B's
 *     tile and multicasts it into both; so a slot is free only when the consumers of both blocks
 *     have released it, and no block may exit while a multicast of its partner's can still land.
 *     The ring's slot and phase run on across tiles.
 *  2. The epilogue through shared memory: each consumer's 64 x 128 bf16 rows staged in two
 *     swizzled 8 KiB boxes and stored by TMA (chapter 06's stages 7-8; reuse them); a box is
 *     rewritten only after its last store has read it.
 *  3. Two accumulators in turn: K tile t + 1 is issued into the other accumulator before tile t
 *     is promoted, so at most the newest group is in flight when you add. ptxas serializes the
 *     wgmmas (its warning C7518) if a C-level branch on a per-thread value sits between a wgmma
 *     and its wait: ptx/mbarrier.cuh has a wait with its spin inside the asm and a predicated
 *     remote arrive.
 *  4. Uniform registers: no R2UR in your K loop (cuobjdump -sass). ptxas cannot tell that
 *     threadIdx.x / 128 is the same for a whole warp; make it see that.
 *  5. A tile per size: at least 128 x 128 (two consumers) and 64 x 128 (one consumer, for M = 64
 *     and 128 and small grids), picked by the rounds of tiles the SMs need, weighted by a rate.
 *  6. A lean K loop: count your loop's SASS instructions a K tile, all but the promotion's 64
 *     adds (the 4 QGMMA included). Ours: 40.5 per tensor, 47.5 block-scaled (the 128 x 128 tile;
 *     make test prints them); before its diet, 72 and 87.5. Nothing in the loop should recompute
 *     what is the same every K tile.
 *  7. B's scale (block-scaled): never rebuilt from scale_b every K tile, and loaded a K tile before
 *     the promotion that uses it; a unit's first one during the unit before (after the bench's
 *     L2 flush it comes from DRAM).
 *  8. One tile row: where C has a single row of tiles, a partner block stacked along M has no
 *     rows to compute; run such tiles in clusters of one block.
 *  9. The store handed off: a consumer of one band only stages its boxes, fences them for the
 *     async proxy and signals an mbarrier of 128 arrivals; an idle thread of the producer
 *     warpgroup stores them by TMA, waits until they are read and signals back; the consumer
 *     waits for that signal only before staging its next tile.
 *
 * Optional, in the reference but not in these milestones: the 256 x 128 tile (two bands per
 * consumer), the 128 x 144 per-tensor tile, the K split for few tiles (its workspace and merge),
 * the environment variables that force a tile, cluster or split (for the tests), and the tile
 * rule's measured rates. Read kernels/09_final_sm90a.cu after each milestone, not before.
 *
 * Check it:  make check-07 ARGS="--kernel ex_final_tensor --kernel ex_final_block" */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "ptx/cluster.cuh"
#include "ptx/named_barrier.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_final_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                      const float *scale_b, bf16_t *D, int M, int N, int K,
                                      cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_gemm07_final_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                     const float *scale_b, bf16_t *D, int M, int N, int K,
                                     cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
