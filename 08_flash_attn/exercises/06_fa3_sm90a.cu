/* Exercise 6 — Hopper, FlashAttention-3's overlaps: the two consumer warpgroups take turns on the
 * tensor cores (ping-pong), each one's softmax overlaps its own previous P V, and the kernel is
 * persistent (sm_90a).
 *
 * The contract is stage 5's (attn.h): same rows, same bounds, same 384-thread block of a producer
 * and two consumers of 64 query rows, same tiles. Start from your stage 5 and add one idea at a
 * time, checking after each. What you may reuse: attn_hopper.cuh (stage 5's maps, descriptors,
 * products and barriers) and fa2.cuh's mask, softmax and store. The softmax comes in three pieces
 * there: attn_softmax_exp (s becomes p in place, fp32; m and l updated; alpha, the factor O must
 * be multiplied by), attn_rescale (O *= alpha) and attn_pack_p (p rounded into P's rs A
 * registers). attn_softmax, what stage 5 calls, is the three in a row.
 *
 * 1. Ping-pong (README, stage 6a). The idea: make the two consumers issue their tensor-core work
 *    in turns, so that one's softmax always runs while the other's wgmmas have the tensor cores.
 *    The tool: two named barriers (common/ptx/named_barrier.cuh), one per consumer; a bar.sync
 *    waits until the barrier's thread count has arrived, a bar.arrive counts and goes on. The
 *    contract: a consumer issues a turn's products only once the other has *issued* its own (not
 *    finished them); the first turn is consumer 0's; every barrier must end with every phase
 *    complete (count the syncs and arrivals on each, including the first and the last turn); an
 *    arrival must never run a phase ahead of its waiters. Both consumers take the same number of
 *    turns (key tiles and query blocks are both 128 wide and aligned: why does that matter for
 *    causal?). Never wait on the other consumer while you hold the turn.
 *
 * 2. Each softmax under its own P V (README, stage 6b). The idea: in the turn of key tile j,
 *    issue S_j = Q K_j^T and then P_{j-1} V_{j-1} (the previous tile's P, still in registers),
 *    and work on S_j while the P V runs; the last tile's P V comes after the loop. The rules that
 *    decide whether ptxas keeps the overlap or serializes every wgmma of the kernel:
 *     - A wgmma reads its register operands (P, the accumulator O) until the wait_group that
 *       retires it. While P_{j-1} V_{j-1} is in flight, write neither O nor any P register, not
 *       even into other registers to copy over later: the exponentials go in place into S_j's own
 *       fp32 registers (attn_softmax_exp on s); only after the wait that retires the P V do you
 *       rescale O and pack P_j into the registers P_{j-1} held. That is the reference's order,
 *       and FlashAttention-3's. Packing P_j into fresh registers while P V ran made ptxas
 *       serialize every wgmma: warning C7513 ("non wgmma instructions defining input registers of
 *       a wgmma between start and end of the pipeline stage").
 *     - Open each batch with its own wgmma_fence (without it: C7519, then C7513), and pin the
 *       registers a wgmma still owns with wgmma_fence_operands after its wait.
 *     - No branch the compiler must think divergent between a wgmma and its wait (C7518):
 *       releases by lane 0 go through mbarrier_arrive_if (the predicate inside the asm), waits
 *       through mbarrier_wait_parity_in_asm. Only the last key tile can need a mask: give the
 *       loop body a compile-time flag and instantiate it twice rather than test every step.
 *    Build with -Xptxas -v and read every C75xx line (docs/hopper.md, "ptxas messages"); then
 *    look in the SASS for where WARPGROUP.DEPBAR.LE gsb0, 0x0 landed relative to your MUFU.EX2.
 *
 * 3. Ring sizes. Shared memory left over goes to the rings (ATTN_FA3_SMEM): at D = 64 a third K
 *    and V slot each; at D = 128 the third slot for V only. Why V and not K?
 *
 * 4. Persistence (README, stage 6e-6f). One block per SM (launch.cuh: launch_sms,
 *    launch_balanced_grid), each looping over work items (pair, q tile); causal, give every block
 *    the same work. The contract that keeps the barriers right: the K/V rings' slots and phases
 *    run on from item to item as if the items were one long sequence of key tiles (never reset);
 *    Q needs an empty barrier too (when may the producer overwrite it?); the turns run on across
 *    items, their first arrival and last sync once a block. Then, last, fold the next item's
 *    first tile into the current one's last turn.
 *
 * Check it:  make check-08 ARGS="--kernel ex_f16_fa3"
 * (the stage in kernels/06_fa3_sm90a.cu is the reference; read it after you try). */
#include "stage.h"
#include "attn.h"
#include "attn_hopper.cuh"
#include "fa2.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_attn_fa3(const attn_args *a, cudaStream_t stream) {
    /* TODO */
    (void)a, (void)stream;
    return LAUNCH_TODO;
}
