/* Exercise 3 — a pipeline: a ring of K tiles with a "full" and an "empty" mbarrier per slot, so
 * that copies run ahead of the multiplies. Start from your stage 2.
 *
 * Hints:
 *  - Same tile (128x128, two warpgroups, 256 threads) and the same tensor maps
 *    (gemm06_maps_for(A, B, M, N, K, 128, 128, ...) from gemm06_sm90a.cuh does the caching).
 *  - Shared memory: DEPTH = 3 slots of 32 KiB (A tile then B tile), from a 1024-byte boundary:
 *    GEMM06_SMEM_PIPELINE bytes. Two barrier arrays: full[DEPTH] (count 1: the producer's
 *    arrive_expect_tx) and empty[DEPTH] (count 8: lane 0 of each of the 8 warps).
 *  - Tile t lives in slot t % DEPTH; the parity to wait for is (t / DEPTH) & 1.
 *  - Thread 0 loads tiles 0 .. DEPTH-1 before the loop.
 *  - Loop over t: wait full[s]; wgmma_fence; four wgmma_bf16_ss<128>; commit; then
 *    wgmma_wait_group<1>() (tile t-1 is done, tile t still runs: do NOT touch d here, ptxas
 *    would serialize the wgmmas, info C7515). Then lane 0 of every warp arrives on
 *    empty[(t-1) % DEPTH], and thread 0, if tile t-1+DEPTH exists, waits on that empty
 *    barrier (parity ((t-1) / DEPTH) & 1) and loads tile t-1+DEPTH into the freed slot.
 *  - After the loop: wgmma_wait_group<0>(), wgmma_fence_operands(d), store_fragment<128>.
 *  - SASS to expect: UTMALDG, SYNCS.ARRIVE, SYNCS.PHASECHK, HGMMA; no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_pipeline"
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_pipeline(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                  int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
