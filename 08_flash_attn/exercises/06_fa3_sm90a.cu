/* Exercise 6 — Hopper, FlashAttention-3's first overlap: the two consumer warpgroups take turns
 * on the tensor cores (ping-pong), so that one's softmax runs while the other's wgmmas have them
 * (sm_90a). Start from your exercise 5 (README, stage 6a).
 *
 * The idea. In stage 5 a consumer issues S = Q K^T, waits, runs its softmax (no tensor-core
 * work), issues P V and waits. Meanwhile the tensor cores have only the other consumer's work,
 * and the two overlap only as far as they drift apart by chance. Make them take turns, 0, 1, 0,
 * 1, ...: each softmax then runs while the other consumer's products have the tensor cores, by
 * construction rather than by chance.
 *
 * The contract is stage 5's (attn.h): same rows, same bounds, same 384-thread block of a producer
 * and two consumers of 64 query rows, same tiles, the same arithmetic in the same order; only the
 * moments change. What you may reuse: attn_hopper.cuh (stage 5's maps, descriptors, products
 * and barriers) and fa2.cuh's mask, softmax and store.
 *  - A turn is the tensor-core work a consumer issues between two of its softmaxes. Within a
 *    consumer, still wait for each batch before you use its result, as in exercise 5.
 *  - The tool: two named barriers (common/ptx/named_barrier.cuh), one per consumer; a bar.sync
 *    waits until the barrier's thread count has arrived, a bar.arrive counts and goes on. A
 *    consumer issues a turn's products only once the other has *issued* its own (not finished
 *    them); the first turn is consumer 0's.
 *  - Every barrier ends with every phase complete: count the syncs and arrivals on each,
 *    including the first and the last turn; an arrival must never run a phase ahead of its
 *    waiters. So both consumers take the same number of turns, even one whose rows all lie past
 *    n (key tiles and query blocks are both 128 wide and aligned: why does that matter for
 *    causal?).
 *  - No deadlock: while it holds the turn, a consumer waits only on full barriers of slots both
 *    consumers freed earlier, never on the other consumer. Keep the turn short: wait for a K
 *    that may be late before taking it, and count the instructions between BAR.SYNC and the
 *    first HGMMA in the SASS (work moved into the turn delays both consumers).
 *  - SASS: BAR.SYNC and BAR.ARV beside the HGMMAs. Read every C75xx line ptxas prints (make
 *    V=1, with -Xptxas -v; docs/hopper.md, "ptxas messages"): the turns must not serialize them.
 *
 * Optional: the rest of stage 6, to read in kernels/06_fa3_sm90a.cu (README, 6b-6g) and add if
 * you go on; none of it is needed to pass.
 *  - 6b, each softmax under its own P V: in the turn of key tile j, S_j then P_{j-1} V_{j-1}, the
 *    softmax of S_j while that P V runs (fa2.cuh splits attn_softmax for it: attn_softmax_exp,
 *    attn_rescale, attn_pack_p). The rule that decides whether ptxas keeps the overlap: a wgmma
 *    reads its register operands (P, O) until the wait that retires it, so while P_{j-1} V_{j-1}
 *    is in flight write neither O nor any P register, not even fresh registers to copy over
 *    later; exponentiate in place in S_j's fp32 registers, and only after that wait rescale O
 *    and pack P_j into the registers P_{j-1} held. Packing P_j elsewhere while P V ran made
 *    ptxas serialize every wgmma of the kernel (C7513); a batch without its own wgmma_fence
 *    did too (C7519).
 *  - 6c: no branch the compiler must think divergent between a wgmma and its wait (C7518):
 *    mask only the last key tile, with the loop body instantiated twice (a compile-time flag).
 *  - 6d, ring sizes (ATTN_FA3_SMEM): at D = 128 the third slot goes to V, not K, since a
 *    consumer waits for V inside its turn and for K outside it.
 *  - 6e-6f, persistence: one block per SM over work items (launch.cuh: launch_sms,
 *    launch_balanced_grid); the rings' slots and phases and the turns run on across items,
 *    never reset; Q needs an empty barrier too; then the next item's first tile in the last turn.
 *  - 6g (D = 128): O staged in shared memory and stored by TMA from a warp of the producer
 *    warpgroup, so no consumer spends its time between turns on global stores. Shared memory is
 *    full at D = 128: which buffer is free once an item's S are done, and what must then wait
 *    for the store's read before it is reused? (Count the Q buffers that makes deadlock-free.)
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
