/* Exercise 5 — Hopper: TMA into an mbarrier ring, wgmma for both products, P from registers, a
 * producer warpgroup and two consumer warpgroups (sm_90a only).
 *
 * The contract (attn.h): the rows and bounds of stage 4; 128 queries a block, 384 threads =
 * 3 warpgroups: warpgroup 0 produces, warpgroups 1 and 2 each own 64 query rows of the tile
 * (wgmma's m64) and every key. The algorithm is stage 4's; what changes is the machinery, and it
 * is chapter 06's stages 1-4 at once, so build it from your chapter 06 GEMM and your stage 4, one
 * idea at a time (check after each). You may reuse stage 4's fa2.cuh (the mask, the online softmax
 * and the store work on n8 tiles of the m16n8 C layout).
 *
 *  - wgmma for S = Q K^T (README, stage 5a): both operands in shared memory, K-major, through
 *    chapter 06's 128-byte-swizzle descriptor; D / 16 k-steps. Only one warpgroup's rows are A.
 *  - The accumulator is the softmax's input, on the same registers (stage 5b and its figure):
 *    compare the m64nN accumulator layout in common/ptx/wgmma.cuh with mma.sync's m16n8 C layout
 *    (common/ptx/mma.cuh) and you can call fa2.cuh's functions on it without moving anything.
 *  - P from registers: the rs form of wgmma takes A from four registers a thread (wgmma.cuh, "A in
 *    registers"). Work out which of S's accumulator registers, rounded in pairs, are P's A
 *    registers for each k-step of P V, and check that no data has to cross lanes.
 *  - V as B of P V is stored as rows of D: N-major, the transpose of wgmma's default, so the
 *    transposed-B form (wgmma_*_rs_tb) with the canonical MN-major swizzled layout; derive its
 *    LBO and SBO from how the TMA lays out a V tile (wgmma.cuh explains both fields).
 *  - TMA (stage 5c): 3D tensor maps over [b h, n, D] (common/tensor_map.h), so that a box cut at
 *    row n is zero-filled and a tile never reads the next head. A 16-bit row of D = 128 is two
 *    128-byte swizzle widths: two boxes, two panels.
 *  - A ring of K and V slots (stage 5d): each slot a "full" barrier (the producer's expected
 *    bytes, then the TMA's) and an "empty" one (the consumers' release, one arrival a warp); K and
 *    V apart, so S can start before V has landed. Consumers wait with the spin inside the asm
 *    (mbarrier_wait_parity_in_asm): no branch around a wgmma in flight.
 *  - Warp specialization (stage 5e): the producer gives its registers to the consumers
 *    (setmaxnreg); derive the warpgroup index so that ptxas can see it is uniform (docs/hopper.md,
 *    "Uniform registers"), or every descriptor is rebuilt per thread.
 *  - Causal as in stage 4: stop at the block's last query, mask only what crosses the diagonal.
 *  Within a consumer, wait for each wgmma batch before you use its result: overlapping them is
 *  exercise 6.
 *
 * Check it:  make check-08 ARGS="--kernel ex_f16_wgmma"
 * (the stage in kernels/05_wgmma_sm90a.cu is the reference; read it after you try). */
#include "stage.h"
#include "attn.h"
#include "launch.cuh"
#include "reduce.cuh"
#include "tensor_map.h"
#include "ptx/ex2.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_attn_wgmma(const attn_args *a, cudaStream_t stream) {
    /* TODO */
    (void)a, (void)stream;
    return LAUNCH_TODO;
}
