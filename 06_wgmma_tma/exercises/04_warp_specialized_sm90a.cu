/* Exercise 4 — warp specialization: a producer warpgroup that only issues the copies, two
 * consumer warpgroups that only multiply, registers moved to the consumers with setmaxnreg,
 * and a 128x256 tile. Start from your exercise 3 (README, stage 4; figures/warpgroups.svg).
 *
 * The idea. A thread that both produces and consumes stalls its whole warpgroup whenever it
 * waits for a free slot. Give each role its own warpgroup, and give the consumers the
 * registers for the widest wgmma (m64n256k16) and a tile that reads fewer operand bytes per
 * product.
 *
 * The contract:
 *  - 384 threads: warpgroup 0 produces, 1 and 2 consume rows 0-63 and 64-127 of a 128x256 tile;
 *    4 slots of 48 KiB (GEMM06_SMEM_WARP_SPECIALIZED), one block per SM.
 *  - setmaxnreg (ptx/setmaxnreg.cuh lists its rules) needs a register count fixed at launch and
 *    a budget that adds up: work out the counts from 65536 registers and 384 threads, and what
 *    an m64n256 accumulator needs. ptxas's info C7508 means it ignored the instruction.
 *  - The producer's first pass over the ring must not block on barriers nobody has arrived on
 *    yet, without a special case (mbarrier.cuh: which phase a fresh barrier is in).
 *  - The roles branch on a value that is the same across each warpgroup.
 *  - SASS: USETMAXREG (DEALLOC and TRY_ALLOC), HGMMA.64x256x16; no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_warp_specialized"
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_warp_specialized(const bf16_t *A, const bf16_t *B, bf16_t *C, int M,
                                          int N, int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
