/* Exercise 3 — a pipeline: a ring of K tiles with a "full" and an "empty" mbarrier per slot,
 * so that the copies run ahead of the multiplies and the wgmmas stay in flight. Start from your
 * exercise 2 (README, stage 3; figures/pipeline.svg and figures/mbarrier_phases.svg).
 *
 * The idea. A slot is refilled as soon as everybody is done reading it, not when the whole
 * block has finished a K tile; and a warpgroup waits only for the wgmmas of the tile before
 * the one it has just issued, so the tensor core always has work queued.
 *
 * The contract:
 *  - The 128x128 tile, 256 threads and maps of exercise 2 (gemm06_maps_for in
 *    gemm06_sm90a.cuh caches them for you); GEMM06_PIPELINE_DEPTH slots of 32 KiB,
 *    GEMM06_SMEM_PIPELINE bytes.
 *  - Each barrier completes one phase per use of its slot. Work out, for K tile t, which slot
 *    it uses and which parity each waiter waits for, with no counter to reset.
 *  - A slot is "empty" once every warp that read it has seen its wgmmas complete: choose the
 *    arrival count to match who arrives.
 *  - While a wgmma group is in flight, no other instruction may define (or read) its
 *    accumulators, or ptxas serializes every wgmma: read ptxas's -v output (info C7515 and the
 *    table in docs/hopper.md, "ptxas messages"); the accumulator's zeros count too.
 *  - SASS: UTMALDG, SYNCS.ARRIVE, SYNCS.PHASECHK, HGMMA with one gsb0 per four and a
 *    WARPGROUP.DEPBAR.LE gsb0, 0x1 (sass_checks.sh checks the stages so); no LDL/STL.
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
