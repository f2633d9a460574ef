/* Exercise 6 — Hopper, FlashAttention-3's overlaps: the two consumer warpgroups take turns on the
 * tensor cores (ping-pong), and each one's softmax runs under its own previous P V (sm_90a).
 *
 * Start from your stage 5 (check after each step):
 *  - Ping-pong first. Two named barriers, ids 1 and 2 (common/ptx/named_barrier.cuh), 256 threads
 *    each. Consumer c waits with named_barrier_sync(1 + c, 256) before issuing its products and
 *    calls named_barrier_arrive(2 - c, 256) right after issuing them (before waiting for them).
 *    Consumer 1 arrives on barrier 1 once at the start, so that consumer 0 goes first. Count the
 *    syncs and arrivals on each id: make them match at the end (consumer 0 syncs once more after
 *    its store). Both consumers must walk the same number of key tiles.
 *  - Then the pipelining. Split the softmax (fa2.cuh: attn_softmax_p gives P and alpha,
 *    attn_rescale multiplies O). Tile 0: S_0, wait, softmax. Tile j >= 1, in one turn: issue
 *    S_j, commit, issue O += P_{j-1} V_{j-1}, commit; wgmma_wait_group<1>() (S_j only); the
 *    softmax of S_j into new P registers; wgmma_wait_group<0>(); rescale O. After the loop the
 *    last tile's P V. Keep P_{j-1} live until the second wait (wgmma_fence_operands on it).
 *  - No branch between a wgmma and its wait: release slots with mbarrier_arrive_if (predicate in
 *    the asm), mask only the last key tile in a separate instantiation of the loop body. Build
 *    with -Xptxas -v: warning C7518 means ptxas serialized your wgmmas; spills mean too many
 *    registers live at once.
 *  - Shared memory left over goes to the rings: at D = 64 a third K and V slot each, at D = 128 a
 *    third V slot (V is waited for inside the turn, K outside it; ATTN_FA3_SMEM).
 *  - Last, persistence: one block per SM, each looping over (pair, q tile) items. The K/V rings'
 *    slots and parities run on across items (never reset); Q gets an empty barrier (released
 *    once the item's last S has landed); the turns' first arrival and last sync stay once a
 *    block. Causal, pair q tiles q_tiles - 1 - k and k so that every block gets equal work.
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
