/* Exercise 8 — the final kernel: a tile per size, fp16 as well as bf16, any M and N. Start
 * from your stage 7.
 *
 * Hints:
 *  - Make the kernel a template over the element type T (bf16_t, f16_t), the tile width BN
 *    and the number of consumer warpgroups CONS (64 rows each): 128 x 256 and 128 x 128 with two
 *    consumers, 64 x 128 with one. The wgmma differs by type (wgmma_bf16_ss<BN> /
 *    wgmma_f16_ss<BN>); so does the rounding in the epilogue (stage_box<BN, T>,
 *    store_fragment<BN>). The empty barriers count CLUSTER * CONS * 4 warps.
 *  - Staging one 64 x 64 box at a time through two 8 KiB buffers per consumer, taken in turn
 *    by a box count that runs on across tiles, with stage_box and tma_store_wait<1>() before
 *    each box, frees shared memory for a 4th slot at 128 x 256; 6 slots at 128 x 128, 8 at
 *    64 x 128 (at most GEMM06_SMEM_FINAL). B's map boxes are BN / 2 rows, A's 64 * CONS.
 *  - The launcher estimates each tile's time as rounds x area / rate (rounds: pairs of tiles
 *    over SMs / 2; rate: the tile's TFLOPS when forced at 8192^3, e.g. 816, 751, 505) and
 *    takes the least. Why 64 x 128 beats 128 x 64: count the shared-memory bytes each wgmma
 *    reads per clock of tensor work (README, Stage 8).
 *  - The grid: not every cluster that fits, but the fewest that need as many rounds
 *    (ceil(pairs / ceil(pairs / resident))): 64 instead of 66 at 4096^3. And the grouped
 *    order over 8 pairs of tile rows (gemm06_tiles.group_rows = 8), not 16.
 *  - N % 8 != 0 (or C not 16-byte aligned): no tensor map of C exists; the epilogue stores from
 *    registers with store_fragment instead. Pass a flag to the kernel; the branch is uniform.
 *  - The same tensor maps serve fp16: TMA copies 2-byte elements without looking at them.
 *  - Count the K loop's instructions in the SASS (ours: 39 per K tile with its 4 HGMMAs):
 *    descriptors made once and advanced by desc_advance, the ring position as a slot and a
 *    phase, the ring's and barriers' shared addresses made once (through a shuffle, so ptxas
 *    keeps them instead of recomputing them every pass).
 *
 * Check it:  make check-06 ARGS="--kernel ex_final"   (and ex_final_f16)
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_final(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                               cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_gemm06_final_f16(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                   int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
