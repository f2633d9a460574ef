/* Stage 6 — Hopper, FlashAttention-3's two overlaps: the consumer warpgroups take turns on the
 * tensor cores (ping-pong), and each one's softmax of tile j runs under its own P V product of
 * tile j - 1 (intra-warpgroup pipelining); and the kernel is persistent.
 *
 * O stored by TMA (the latest change, D = 128). Measured before it (H100, six runs): 8 x 16 x
 * 2048, D = 128, fp16 non-causal at 0.998-1.009x cuDNN. Each consumer stored its 64 rows of O
 * from registers in the boundary turn: 2 x D / 8 four-byte stores a thread (a warp's store
 * covers 16 bytes of each of 8 rows: half of each 32-byte sector it touches), the division by l
 * and the conversion, all on the path to its next turn. Now
 * (FlashAttention-3's epilogue) it divides by l in place, writes O with stmatrix into its own
 * 64 rows of the item's Q buffer (chapter 06's stage_box: D / 64 boxes of 64 x 64 in the
 * 128-byte swizzle, the layout Q has there), fences, and arrives on staged[buffer][c]; warp 1 of
 * the producer warpgroup (the storer, otherwise idle) waits for both consumers' rows, stores them
 * with D / 64 TMA stores each through a 3D map of O (boxes of 64 rows, clipped at n), waits until
 * they are read, and only then arrives on Q's empty barrier (count 1): the producer loads Q of
 * item it + 2 into that buffer only after item it's O has left it. Why the Q buffer: at D = 128
 * the 225 KiB leave no other 16 KiB, and a consumer's rows of Q are read by its own S alone,
 * all of which have landed when it stores (the boundary turn's barrier, or the last P V's
 * completion, which needs all four warps to have issued it after their last S landed). The
 * consumers never wait for the storer; the storer waits only on the consumers; the producer's
 * wait for Q of item it + 2 needs the store of item it, made in the boundary turn between items
 * it and it + 1, whose Q and K_0 the producer issued before that wait: no cycle (two Q buffers
 * are needed for that: with one, Q of item it + 1 would wait for the store made in the turn that
 * waits for it; fragment_check.py's ring6 plays the storer). Measured (A/B twice, the switch
 * below, fp16): at 8 x 16 x 2048, D = 128, +2.7% and +3.1% (H100; H200 +2.4%, +2.3%), causal
 * +2.4% and +2.0% (H200 +1.9%, +2.0%); 1 x 16 x 16384 causal -0.4% to -0.7%. At D = 64 the same
 * change measured -3.8% and -2.6% causal (8 x 16 x 2048, H200) and nothing non-causal, so D = 64
 * keeps the store from registers (O_BY_TMA_AT).
 *
 * Cross-item pipelining. Measured before it (H100, git show
 * f22a6c9:08_flash_attn/measured/h100_stage6p_vs_sdpa.md): 0.984-0.995x cuDNN at 8 x 16 x 2048,
 * D = 128, non-causal (641 against 651 TFLOPS), >= 1.01x at N >= 4096. Measured with it (H100,
 * two alternating runs, measured/h100_stage6p_ab.md): +1.1% at D = 128 at every N (8 x 16 x 2048:
 * 634 -> 642 TFLOPS), at D = 64 between -3.4% (8 x 16 x 2048 causal) and +3% (1 x 16 x 16384);
 * against cuDNN in the same session 1.000x and 1.001x at 8 x 16 x 2048, D = 128, non-causal
 * (H200: 1.010x and 1.007x; h100_ and h200_stage6x_vs_sdpa.md at f22a6c9). Each item has only 16
 * key tiles there, and at every item boundary a consumer ran its last P V outside the turns,
 * stored O, then ran the next item's tile 0 alone (S_0 issued and waited for, its softmax with
 * nothing of its own under it): about one turn's bubble an item. Now, when a consumer has a next
 * item, those become ONE boundary turn, shaped like a regular one:
 *   wait Q(next) full, K_0(next) full (outside the turn); sync TURN(c); issue S_0(next);
 *   wait V_{T-1}; issue O += P_{T-1} V_{T-1}; arrive TURN(1 - c); wait_group 1 (S_0 landed):
 *   release K_0(next) [and Q(next) if it has T = 1]; mask S_0(next) (tile 0's test, the next
 *   item's first query); its exponentials with fresh m', l' (-inf, 0: separate registers, the
 *   store still needs m, l); wait_group 0: release V_{T-1}; store O and LSE (m, l); then
 *   m = m', l = l', O = 0, pack P_0(next) (O is 0: the rescale finish(1) did is a no-op).
 * The block's first item keeps the standalone tile 0, its last item the final P V outside the
 * turns. The consumers look one item ahead (fa3_cursor, next_item); the producer is unchanged
 * (the next item's tile j is at ring position ring + T + j, as it already loaded them). The
 * arithmetic of every item is the same, in the same order (S_0's mask and exponentials, O <- a O,
 * O += P V tile after tile, the store): only the moments change. The turn counts: the boundary
 * turn is the next item's tile-0 turn, so each consumer still takes T turns an item, sum(T) in
 * all, and the argument below holds unchanged (the schedule there now shows the boundary turn).
 * Seen in the SASS (ptxas 13.0): no spills (a consumer's top register + 1, of the 240 setmaxnreg
 * gives: 184 at D = 128 and 152 at D = 64 then; 238 and 208 since 6g, which rewrote the store of
 * both D; ptxas -v reports the 168 of the launch: README "Registers, shared memory and the
 * SASS"); the boundary's S batch and P V batch back to back, then WARPGROUP.DEPBAR.LE gsb0, 0x1;
 * tile 0's mask test is a branch on a warpgroup-uniform condition with P V in flight, which
 * ptxas accepted without a warning (no C7518) or a serialized HGMMA, as three variants of the
 * mask (none, n, causal) that join before the row maxima. The regular key loop is the same
 * instructions but for its uniform descriptor moves: ptxas now keeps Q's descriptors apart and
 * copies them into one quad per HGMMA (523 instructions against 509 at D = 128, 457 against 451
 * at D = 64, the extra ones UMOVs on the uniform datapath), which none of three rewrites tried
 * here undid. fragment_check.py's ring6 plays the boundary turn.
 *
 * Persistent (the change before). The version before it ran one block per q tile of 128
 * queries: at 8 x 16 x 2048, 2048 blocks of one block an SM, each with only 16 key tiles (1 to
 * 16 when causal). Every block paid, with the SM's tensor cores idle, its prologue (the Q load,
 * the first K load, tile 0's S alone, nothing to overlap it with) and its epilogue (the last
 * P V alone, the store from registers); at N >= 4096, twice the key tiles or more a block,
 * that cost is spread thinner. Measured (H100, same session, git show f22a6c9:08_flash_attn/
 * measured/h100_stage6p_vs_sdpa.md against h100_stage6_vs_sdpa.md): at 8 x 16 x 2048,
 * D = 128, 612 -> 641 TFLOPS (fp16) and 491 -> 548 causal; D = 64, 435 -> 456 and 346 -> 396
 * causal; at N >= 4096 causal gains 5-8% and non-causal stays within noise at D = 128. Now:
 *  - The grid is one block per SM (fewer if as many rounds of work allow: fa3_grid), and each
 *    block loops over work items (pair, q tile). Its producer runs ahead across items: the next
 *    item's Q and first K and V load while the consumers finish the current one (its last
 *    P V and store), and one consumer's tile 0 of the next item runs while the other still
 *    finishes. The tensor cores see one stream of turns instead of a block's start and end.
 *  - The work list (for_each_item): block b takes units b, b + grid, ...; causal, a unit is
 *    q tiles q_tiles - 1 - k (the longest, first) and k (the shortest), q_tiles + 1 key tiles
 *    whatever k, so a static round robin gives every block the same work (longest-first across
 *    the grid would balance as well but put every pair in flight at once, 128 MiB of K and V at
 *    8 x 16 x 2048, D = 128: no reuse in L2); not causal, a unit is one q tile. A pair's units
 *    are consecutive, so the blocks in flight share a few pairs' K and V in L2, as before.
 *  - Barriers across items. The K/V rings' positions run on from item to item (`ring` counts
 *    the tiles carried before: slot (ring + j) % S, parity ((ring + j) / S) & 1, S its slots), as
 *    if the items were one long sequence of key tiles; nothing is reset. Q has two buffers
 *    (225 KiB in all at D = 128, 129 KiB at D = 64), item it in buffer it % 2, each with a full
 *    barrier (the producer's arrive.expect_tx, the TMA's bytes) and an empty one (at D = 64 one
 *    arrival per consumer warp, 8, once the item's last S has landed: Q is read by S alone; at
 *    D = 128 the storer's one, once O staged there has been read), both at parity (it / 2) & 1,
 *    the producer's wait on empty flipped (it passes at once in round 0).
 *    With two buffers the producer loads Q of item it + 1 as soon as it has issued item it's
 *    last K/V, without waiting for item it's last S.
 *  - The turns run on across items too: consumer 1's first arrival on TURN(0) and consumer 0's
 *    last sync there are the kernel's, once, not the item's. Both consumers walk the same items
 *    with the same T each (T depends on the item only), so each takes sum(T) turns, alternating
 *    0, 1, 0, 1, ... across item boundaries exactly as within one item; the counts below hold
 *    with T replaced by the sum. A consumer waits on Q's full barrier before its turn, never in
 *    it, and Q of item it + 1 needs only item it - 1's empty phase, completed by both
 *    consumers in their last turns of that item: no new cycle.
 *  - The softmax, the mask, the store and their arithmetic order are unchanged; the
 *    accumulator, m and l start again at every item as they started at every block (with
 *    cross-item pipelining, at the boundary turn: m', l' fresh, O = 0 after the store).
 *
 * What changes from stage 5, and why it is faster (measured before persistence, H100: 1.08-1.18x
 * stage 5, 0.92-1.14x PyTorch's cuDNN backend at N >= 2048; git show
 * f22a6c9:08_flash_attn/measured/h100_stage6_vs_sdpa.md):
 *  - Stage 5 waits for each wgmma batch before using its result: a consumer issues S = Q K^T,
 *    waits, does the softmax (FFMA, MUFU.EX2, shuffles: no tensor-core work), issues P V,
 *    waits. While it does the softmax the tensor cores have only the other consumer's work,
 *    and the two overlap only as far as they happen to drift apart. The softmax is not small
 *    next to the products (FlashAttention-3's count, from the H100's specifications): per
 *    score, S and P V at D = 128 are 4 x 128 = 512 FLOPs, on tensor cores that do about 4096
 *    dense 16-bit FLOPs a clock an SM (989 TFLOPS), so 1/8 clock; its exponential is one
 *    MUFU.EX2, of which an SM does 16 a clock, so 1/16 clock, half as long, before the FFMA,
 *    max, sum and conversion around it. Serialized, the two add; overlapped, the longer sets
 *    the time (at D = 64 the products halve and the softmax does not: overlap matters more).
 *  - Ping-pong. Two named barriers, one per consumer (ids 1 and 2, 256 threads: 128 waiting,
 *    128 arriving). Consumer c waits on its own id (bar.sync), issues its products, and
 *    arrives on the other's (bar.arrive): the consumers issue in turns, 0, 1, 0, 1, ..., so
 *    that while one runs its softmax the other's wgmmas have the tensor cores alone, and the
 *    softmaxes are out of phase by construction rather than by chance.
 *  - Intra-warpgroup pipelining. In its turn for key tile j a consumer issues S_j = Q K_j^T and
 *    then O += P_{j-1} V_{j-1} (the previous tile's P, still in registers), waits only for the
 *    first (wgmma_wait_group<1>), runs the softmax of S_j while P V runs, then waits for P V
 *    and rescales O by the new maximum and packs P_j (FlashAttention-3's order: P_j is written
 *    only once P_{j-1} is no longer read; writing it while P V runs made ptxas serialize every
 *    wgmma, C7513). The softmax no longer waits behind P V of the same warpgroup. fa2.cuh's
 *    softmax is split for it (attn_softmax_exp, attn_rescale, attn_pack_p), and the last
 *    tile's P V runs after the loop. The arithmetic is stage 5's in the same order (O <- a O,
 *    O += P V, tile after tile); only the moments change.
 *    One catch, seen in the SASS: ptxas hoists the wait for P V (WARPGROUP.DEPBAR) above the
 *    exponentials when both are in one basic block, so only the row maxima run under this
 *    warpgroup's own P V, and the exponentials overlap the other consumer's products
 *    (ping-pong). Behind the loop's branch the wait stays put, but then S_j, O and P_{j-1} are
 *    all live across the branch: at D = 128 ptxas spills (C7512); at D = 64 it fits, and the
 *    version before persistence did that (the wait at the top of the next step). In the
 *    persistent kernel that placement measured 3-4% slower at D = 64 than FlashAttention-3's
 *    order (8 x 16 x 2048: 435 against 451 TFLOPS; 1 x 16 x 16384: 478 against 495, H100):
 *    ptxas then also sank the packing of P and the rescale of O into the turn, ahead of S's
 *    issue (70 instructions between BAR.SYNC and the first HGMMA instead of 14). So both D
 *    use FlashAttention-3's order.
 *  - The wait for K_j (j >= 1) comes before the turn's bar.sync, not after it: a consumer
 *    whose K has not landed waits without holding the turn, and the instructions between
 *    bar.sync and the first HGMMA drop to the descriptors' (14 at both D with ptxas 13.0).
 *  - Masking only where needed, with no test in the regular turns: only a row block's
 *    last key tile can hold keys past n, or keys after a query (causal: the loop ends at the
 *    block's last query, and blocks and tiles are both 128 wide and aligned). The loop is
 *    "tiles 1 .. T - 2 unmasked" then "tile T - 1 masked", the same body instantiated twice
 *    (a compile-time flag); tile 0, whose product is waited for before its softmax, masks
 *    under stage 5's test. (One body with the mask under a branch on the last tile, P V in
 *    flight across it, is not serialized by ptxas 13.0 and measured 2-4% slower: README 6c.)
 *  - At D = 64 the K and V rings have 3 slots each (a tile is 16 KiB there): the producer runs
 *    a tile further ahead (4 slots measured the same). At D = 128, beside two Q buffers, 3 + 3
 *    would take 257 KiB: K has 2 slots and V 3 (225 of the 227 KiB a block may have). V gets
 *    the third because a consumer waits for V_{j-1} inside its turn (after S_j's issue),
 *    holding the tensor cores, and for K_j outside it. Measured (H100, A/B in one session):
 *    +0.5% at 8 x 16 x 2048 and +1% at 16 x 16 x 1024 against 2 + 2; the third slot to K
 *    instead (K loaded a tile ahead of V): no change; one Q buffer and 3 + 3: -3%.
 *
 * The schedule of consumer c (rows 64 c .. 64 c + 63 of the item's 128 queries), T key tiles
 * (the item's), TURN(c) = 1 + c the named barrier it waits on, TURN(1 - c) the one it arrives
 * on, tile j in ring position ring + j, Q in buffer it % 2:
 *   c = 1 only, once a block: arrive TURN(0)  (consumer 0 takes the first turn)
 * for the block's first item:
 *   wait Q full
 *   tile 0:  sync TURN(c); wait K_0; issue S_0; arrive TURN(1 - c);
 *            wait_group 0; release K_0; [release Q*: T = 1]; mask (if needed); exponentials of S_0;
 *            pack P_0 (O is 0: its rescale is a no-op)
 * for every item:
 *   tile j = 1 .. T - 1:
 *            wait K_j; sync TURN(c); issue S_j; wait V_{j-1}; issue O += P_{j-1} V_{j-1};
 *            arrive TURN(1 - c); wait_group 1 (S_j done); release K_j;
 *            [j = T - 1: release Q* (the item's last S has landed), mask];
 *            exponentials of S_j, alpha; wait_group 0 (P V done); release V_{j-1};
 *            O *= alpha; pack P_j
 *   a next item (T' tiles, ring' = ring + T, Q' in buffer (it + 1) % 2), its tile 0:
 *            wait Q' full; wait K'_0; sync TURN(c); issue S'_0 (Q', K'_0); wait V_{T-1};
 *            issue O += P_{T-1} V_{T-1}; arrive TURN(1 - c); wait_group 1 (S'_0 done);
 *            release K'_0; [release Q'*: T' = 1]; mask S'_0 (if needed); exponentials of S'_0
 *            with fresh m', l'; wait_group 0 (P V done); release V_{T-1}; store** (m, l);
 *            m, l = m', l'; O = 0; pack P'_0
 *   no next item (the block's last):
 *            wait V_{T-1}; issue O += P_{T-1} V_{T-1}; wait_group 0; release V_{T-1}; store**
 *   (* D = 64 only. ** D = 128: stage O in its rows of Q's buffer, fence, arrive on
 *   staged[buffer][c]; the storer stores both consumers' rows, waits for their reads, releases Q.)
 *   c = 0 only, once a block, last: sync TURN(0)  (takes consumer 1's last arrival: each
 *                                                  barrier ends with every phase complete)
 * Both consumers walk the same T tiles of each item (T depends on the item, not on the
 * consumer), so each makes T turns an item: tile 0's (standalone for the block's first item,
 * the boundary turn for the others) and T - 1 regular ones; the boundary turn replaces a tile-0
 * turn and adds none, and the last P V it takes in moves from outside the turns into one, so the
 * counts are those of the version before it. With T the sum over the block's items: consumer 0
 * syncs T + 1 times on TURN(0) and consumer 1 arrives there 1 + T times; consumer 1 syncs T
 * times on TURN(1), consumer 0 arrives there T times. An arrival never runs ahead of its phase:
 * consumer 1's k-th arrival on TURN(0) comes after its k-th sync on TURN(1), which needs
 * consumer 0's k-th arrival there, made after consumer 0's k-th sync on TURN(0) had completed
 * (fragment_check.py plays this, warp by warp, with the mbarrier rings, over several items).
 * A consumer holding its turn waits only on full barriers (V_{j-1}'s, V_{T-1}'s in the boundary
 * turn, and K_0's at the block's first tile 0) of tiles the producer has already issued (it
 * issues V_{T-1} before the next item's Q and K_0, which the boundary turn waited for before its
 * sync) into slots both consumers freed in earlier turns, never on the other consumer's turn,
 * and waits on Q (and K_j, j >= 1, and the next item's K_0) only outside its turn: no deadlock.
 * The boundary turn's mbarrier phases are the regular ones: K'_0 and Q' are waited at their own
 * positions (ring + T, item it + 1), V_{T-1} at ring + T - 1, each released once a warp.
 *
 * Everything else is stage 5's (read its opening comment first): the producer warpgroup and
 * its rings of K and V slots with full and empty mbarriers, 3D tensor maps clipped at n, Q and
 * K K-major and V N-major descriptors (attn_hopper.cuh), P from the accumulator registers, the
 * mask / softmax / store of fa2.cuh on the same registers. With wgmma groups in flight across
 * the mbarrier waits, the slot releases and the named barriers, all of them are branch-free
 * (the waits spin inside their asm, the releases are predicated inside theirs): ptxas would
 * otherwise serialize the wgmmas (warning C7518).
 *
 * What to look for: in the SASS, BAR.SYNC and BAR.ARV around the HGMMAs of a turn; in the loop,
 * HGMMA.64x128x16 (S_j) and HGMMA.64xDx16 ... tnspB (P V) issued back to back, then
 * WARPGROUP.DEPBAR.LE gsb0, 0x1; the row maxima, DEPBAR 0x0, then the MUFU.EX2 of the
 * softmax. No LDL/STL, R2UR only outside the key loop (before it, and in the next item's
 * decode before the boundary turn's BAR.SYNC). The persistent loop adds little: the
 * item's decode (an integer division, MUFU.RCP), a few R2UR for Q's buffer, Q's waits and the
 * predicated arrival on Q's empty barrier next to K's.
 *
 * A/B switches (08_flash_attn/ab.list; not part of the lesson's kernel): each -D takes one idea
 * of README "Stage 6" out, to measure its share beside the unmodified stage.
 *   ATTN_AB_NO_PINGPONG 6a: the turns' named barriers do nothing: the consumers issue when ready
 *   ATTN_AB_NO_INTRA    6b: a turn waits for its P_{j-1} V_{j-1} with S_j (wait_group 0),
 *                           before the softmax of S_j
 *   ATTN_AB_ONE_BODY    6c: one loop body for every key tile j >= 1, the mask under a test of j
 *                           (the branch 6c avoids, with P V in flight; Q released at the last)
 *   ATTN_AB_MASK_ALL    6c: one loop body, the masked one: the mask's test on every score of
 *                           every tile j >= 1, branch-free (stage 3's way)
 *   ATTN_AB_RING2       6d: two K and two V slots at both D, as stage 5
 *   ATTN_AB_NO_PERSIST  6e: one work item a block (causal too: longest first), grid = items;
 *                           with it 6f never happens (no next item)
 *   ATTN_AB_NO_BOUNDARY 6f: no boundary turn: an item's last P V outside the turns and its store,
 *                           then the next item's tile 0 alone in a turn, as the block's first
 *   ATTN_AB_NO_TMA_STORE 6g: O stored from registers at D = 128 too (attn_store), Q handed back
 *                           by each warp at the item's last S */
#include <stdlib.h>

#include "stage.h"
#include "attn.h"
#include "attn_hopper.cuh"
#include "fa2.cuh"
#include "gemm06_sm90a.cuh" /* stage_box: a wgmma fragment into a 64 x 64 TMA box */
#include "launch.cuh"
#include "reduce.cuh"
#include "tensor_map.h"
#include "ptx/ex2.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mov.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#if defined(ATTN_AB_NO_PINGPONG) /* takes out 6a: no turns (a compiler barrier stays) */
static __device__ __forceinline__ void ab_no_turn(unsigned, unsigned) {
    asm volatile("" ::: "memory");
}
#define named_barrier_sync ab_no_turn
#define named_barrier_arrive ab_no_turn
#endif
#if defined(ATTN_AB_NO_INTRA) /* takes out 6b: S_j waited for together with P_{j-1} V_{j-1} */
#define PV_IN_FLIGHT 0
#else
#define PV_IN_FLIGHT 1 /* wgmma groups left in flight when S_j is waited for: its P V */
#endif
#if defined(ATTN_AB_NO_TMA_STORE) /* takes out 6g: O stored from registers, Q freed at its last S */
#define O_BY_TMA_AT(D) false
#else
#define O_BY_TMA_AT(D) ((D) == 128) /* O staged in the item's Q buffer, stored by TMA (6g) */
#endif
#if defined(ATTN_AB_RING2) /* takes out 6d: stage 5's rings (ATTN_FA3_SMEM follows) */
#undef ATTN_FA3_K_STAGES
#undef ATTN_FA3_V_STAGES
#define ATTN_FA3_K_STAGES(D) 2
#define ATTN_FA3_V_STAGES(D) 2
#endif

#define BQ ATTN_WGMMA_BQ /* queries a block: 128 */
#define BK ATTN_WGMMA_BK /* keys a tile: 128 */
#define CONSUMERS 2      /* warpgroups of 64 query rows */
#define THREADS (128 * (1 + CONSUMERS))
#define TURN 1           /* consumer c waits on named barrier TURN + c */
#define TURN_THREADS 256 /* one consumer waits (128), the other arrives (128) */
#define QBUFS ATTN_FA3_QBUFS /* Q buffers: item i in buffer i % QBUFS */
#define LOG2E 1.4426950408889634f

static_assert(BQ == 64 * CONSUMERS && CONSUMERS == 2, "two consumers of 64 query rows");
static_assert(BQ == BK, "a block's key tiles all unmasked but its last (causal)");

/* The work: units of one or two q tiles of a (batch, head) pair, which block b takes in turn
 * (b, b + grid, ...). Causal, a unit is q tiles q_tiles - 1 - k (the longest) and k (the
 * shortest): q_tiles + 1 key tiles whatever k (the middle tile alone if q_tiles is odd), so
 * every block gets the same work. Not causal, a unit is q tile k. Either way a pair's units
 * are consecutive: the blocks in flight share few pairs' K and V in L2. */
static __host__ __device__ __forceinline__ int units_per_pair(int q_tiles, int causal) {
#if defined(ATTN_AB_NO_PERSIST) /* takes out 6e: a unit is one q tile (causal: longest first) */
    return (void)causal, q_tiles;
#endif
    return causal ? (q_tiles + 1) / 2 : q_tiles;
}
/* A place in block b's work list: unit u (b, b + grid, ...), its item i (0, or 1: the second q
 * tile of a causal unit). The consumers look one item ahead with it (the boundary turn). */
struct fa3_cursor {
    int u, i;
};
static __device__ __forceinline__ fa3_cursor first_item() { return {(int)blockIdx.x, 0}; }
static __device__ __forceinline__ fa3_cursor next_item(fa3_cursor x, int q_tiles, int causal) {
    const int k = x.u % units_per_pair(q_tiles, causal);
#if defined(ATTN_AB_NO_PERSIST) /* (6e out: one item a unit) */
    const int items = ((void)k, 1);
#else
    const int items = causal && 2 * k + 1 < q_tiles ? 2 : 1;
#endif
    return x.i + 1 < items ? fa3_cursor{x.u, x.i + 1} : fa3_cursor{x.u + (int)gridDim.x, 0};
}
/* The (pair, q tile) of an item: pair = b * heads + h. */
static __device__ __forceinline__ void item_at(fa3_cursor x, int q_tiles, int causal, int &pair,
                                               int &tile) {
    const int per_pair = units_per_pair(q_tiles, causal);
    const int k = x.u % per_pair;
    pair = x.u / per_pair;
    tile = causal && x.i == 0 ? q_tiles - 1 - k : k;
}
template <typename F>
static __device__ __forceinline__ void for_each_item(int units, int q_tiles, int causal, F &&body) {
    for (fa3_cursor x = first_item(); x.u < units; x = next_item(x, q_tiles, causal)) {
        int pair, tile;
        item_at(x, q_tiles, causal, pair, tile);
        body(pair, tile);
    }
}
/* Key tiles of the item whose queries start at q0: the same for both consumers. */
static __device__ __forceinline__ int key_tiles(int q0, int n, int causal) {
    const int kv_end = causal ? min(n, q0 + BQ) : n;
    return (kv_end + BK - 1) / BK;
}

/* Q's barriers, per Q buffer: full (the TMA landed), empty (the item's O, staged there, has
 * been read by its TMA stores; 6g out: each consumer warp has seen the item's last S land), and
 * staged (per consumer: its 128 threads have written their rows of O there).
 * bars.q_full of attn_ring_bars is left unused. */
struct fa3_q_bars {
    unsigned long long full[QBUFS], empty[QBUFS], staged[QBUFS][CONSUMERS];
};

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS, 1)
    fa3_attn_kernel(const __grid_constant__ CUtensorMap map_q,
                    const __grid_constant__ CUtensorMap map_k,
                    const __grid_constant__ CUtensorMap map_v,
                    const __grid_constant__ CUtensorMap map_o, T *__restrict__ o,
                    float *__restrict__ lse, int n, int q_tiles, int units, float scale,
                    int causal) {
    constexpr int KS = ATTN_FA3_K_STAGES(D), VS = ATTN_FA3_V_STAGES(D);
    constexpr int PANELS = D / ATTN_PANEL_COLS;
    constexpr unsigned Q_PANEL = BQ * 128, KV_PANEL = BK * 128;
    constexpr unsigned Q_BYTES = PANELS * Q_PANEL, KV_BYTES = PANELS * KV_PANEL;
    constexpr bool O_BY_TMA = O_BY_TMA_AT(D);
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) attn_ring_bars<KS, VS> bars;
    __shared__ __align__(8) fa3_q_bars qbars;
    const unsigned q_s = (smem_addr(smem) + 1023u) & ~1023u; /* the swizzle's period */
    const unsigned k_s = q_s + QBUFS * Q_BYTES, v_s = k_s + KS * KV_BYTES;
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); /* uniform registers */

    if (threadIdx.x == 0) {
        attn_ring_init(bars, &map_q, &map_k, &map_v, CONSUMERS * 4);
        for (int b = 0; b < QBUFS; b++) {
            mbarrier_init(smem_addr(&qbars.full[b]), 1);
            mbarrier_init(smem_addr(&qbars.empty[b]), O_BY_TMA ? 1 : CONSUMERS * 4);
            for (int c = 0; c < CONSUMERS; c++) mbarrier_init(smem_addr(&qbars.staged[b][c]), 128);
        }
        if (O_BY_TMA) tma_prefetch_map(&map_o);
        fence_proxy_async_shared();
    }
    __syncthreads();

    /* Item number `it` of the block (0, 1, ...) uses Q buffer it % QBUFS, in round
     * it / QBUFS of that buffer: its phases have parity (it / QBUFS) & 1. The K/V rings run on
     * across items: `ring` counts the tiles they carried before this item. */
    if (wg == 0) { /* the producer: stage 5's loads, item after item */
        setmaxnreg_dec<24>();
        if (threadIdx.x == 0) {
            int ring = 0, it = 0;
            for_each_item(units, q_tiles, causal, [&](int pair, int tile) {
                const int q0 = tile * BQ, k_tiles = key_tiles(q0, n, causal), b = it % QBUFS;
                /* the buffer's previous item has seen its last S land (passes at once in
                 * round 0) */
                mbarrier_wait_parity(smem_addr(&qbars.empty[b]), ((it / QBUFS) & 1) ^ 1);
                attn_load_q<D>(&map_q, q_s + b * Q_BYTES, smem_addr(&qbars.full[b]), q0, pair);
                attn_load_kv<KS, D, VS>(bars, &map_k, &map_v, k_s, v_s, pair, k_tiles, ring);
                ring += k_tiles;
                it++;
            });
        }
        /* The storer: item after item, each consumer's staged rows of O (64 x D, in D / 64
         * boxes of 64 x 64, swizzled as Q is) stored by TMA from the item's Q buffer; once both
         * have been read, the buffer is free for the producer's next item but one. */
        if (O_BY_TMA && threadIdx.x == 32) {
            int it = 0;
            for_each_item(units, q_tiles, causal, [&](int pair, int tile) {
                const int b = it % QBUFS;
#pragma unroll
                for (int c = 0; c < CONSUMERS; c++) {
                    mbarrier_wait_parity(smem_addr(&qbars.staged[b][c]), (it / QBUFS) & 1);
                    const int row0 = tile * BQ + 64 * c;
                    /* a box across n is clipped by the map; one wholly past it (consumer 1's
                     * rows when n % 128 is 1..64) is not stored */
                    if (row0 < n)
#pragma unroll
                        for (int p = 0; p < PANELS; p++)
                            tma_store_3d(&map_o, q_s + b * Q_BYTES + p * Q_PANEL + 64 * c * 128,
                                         ATTN_PANEL_COLS * p, row0, pair);
                    tma_store_commit();
                }
                tma_store_wait<0>();
                mbarrier_arrive(smem_addr(&qbars.empty[b]));
                it++;
            });
        }
        return;
    }

    setmaxnreg_inc<240>();
    /* Both consumers must take all T turns of every item, even one whose rows all lie past n
     * (n % 128 in 1..64, a pair's last q tile): skipping its turns would leave the other waiting
     * at its named barrier forever. And the producer may exit early only because there is no
     * cluster: with multicast it would need a tail that waits for its slots to be freed
     * (chapter 06, stage 6). */
    const int c = wg - 1; /* rows 64 c .. 64 c + 63 of each q tile */
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const unsigned my_turn = TURN + c, other_turn = TURN + 1 - c;
    const float cexp = scale * LOG2E;
    const bool signals = lane == 0; /* the warp's arrival on an empty barrier */

    /* One work item as a consumer sees it: its place in the work list, its key tiles on ring
     * positions ring + j (ring: the tiles the rings carried before it, as the producer counts
     * them), Q in buffer it % QBUFS. Only these live across the key loop; the rest is derived
     * where used (kept out of the loop's registers: the loop's SASS stays as it was). */
    struct item_t {
        fa3_cursor at;
        int k_tiles, ring, it;
    };
    auto make_item = [&](fa3_cursor at, int ring, int it) {
        int pair, tile;
        item_at(at, q_tiles, causal, pair, tile);
        return item_t{at, key_tiles(tile * BQ, n, causal), ring, it};
    };
    auto pair_of = [&](const item_t &x) {
        int pair, tile;
        item_at(x.at, q_tiles, causal, pair, tile);
        return pair;
    };
    auto first_of = [&](const item_t &x) { /* the consumer's first query */
        int pair, tile;
        item_at(x.at, q_tiles, causal, pair, tile);
        return tile * BQ + 64 * c;
    };
    /* the thread's row g (row g + 8 is + 8) */
    auto query_of = [&](const item_t &x) { return first_of(x) + 16 * warp + lane / 4; };
    auto q_full = [&](const item_t &x) { return smem_addr(&qbars.full[x.it % QBUFS]); };
    auto q_empty = [&](const item_t &x) { return smem_addr(&qbars.empty[x.it % QBUFS]); };
    auto q_parity = [&](const item_t &x) { return (unsigned)(x.it / QBUFS) & 1; };

    float acc[D / 2], s[BK / 2], m[2], l[2], alpha[2];
    unsigned p[BK / 16][4]; /* P of the previous tile: A of its P V */

    /* S = Q K_j^T into s (D / 16 k-steps of m64n128k16), O += P V_j (BK / 16 of m64nDk16). */
    auto issue_s = [&](const item_t &x, int j, bool opaque = false) {
        const unsigned ks = k_s + ((x.ring + j) % KS) * KV_BYTES;
        /* 64 rows into each Q panel */
        unsigned q_c = q_s + (x.it % QBUFS) * Q_BYTES + 64 * c * 128;
        if (opaque) q_c = opaque_u32(q_c); /* hidden from NVVM: ptx/mov.cuh */
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            mma_ss<T, BK>(s, desc_kmajor(q_c + (kk / 4) * Q_PANEL + 32 * (kk % 4)),
                          desc_kmajor(ks + (kk / 4) * KV_PANEL + 32 * (kk % 4)), kk > 0);
    };
    auto issue_pv = [&](const item_t &x, int j) {
        const unsigned vs = v_s + ((x.ring + j) % VS) * KV_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) mma_rs_tb<T, D>(acc, p[kk], desc_v(vs + 2048 * kk));
    };
    /* a ring of `stages` slots: K's (KS) or V's (VS) */
    auto full = [&](unsigned long long *r, int stages, const item_t &x, int j) {
        mbarrier_wait_parity_in_asm(smem_addr(&r[(x.ring + j) % stages]),
                                    ((x.ring + j) / stages) & 1);
    };
    auto release = [&](unsigned long long *r, int stages, const item_t &x, int j,
                       bool also = true) {
        mbarrier_arrive_if(smem_addr(&r[(x.ring + j) % stages]), signals && also);
    };
    auto start_item = [&]() { /* O = 0, m = -inf, l = 0 */
#pragma unroll
        for (int i = 0; i < D / 2; i++) acc[i] = 0.0f;
        wgmma_fence_operands(acc);
        m[0] = m[1] = -INFINITY;
        l[0] = l[1] = 0.0f;
    };
    /* Tile 0's mask, under stage 5's test (the consumer's first query). */
    auto mask0 = [&](const item_t &x) {
        if (BK > n || (causal && BK - 1 > first_of(x)))
            attn_mask<BK / 8>(as_n8_tiles(s), 0, query_of(x), n, causal, lane);
    };
    /* O and LSE of item x. O_BY_TMA: O / l (in place: acc starts again after it) staged in
     * this consumer's rows of x's Q buffer, which only its own S read and which the producer
     * refills only once the storer has read them, then handed to the storer. */
    auto store = [&](const item_t &x) {
        if constexpr (O_BY_TMA) {
            float inv[2];
            attn_lse(m, l, inv, lse + (long)pair_of(x) * n, query_of(x), n, scale, lane);
#pragma unroll
            for (int i = 0; i < D / 2; i++) acc[i] *= inv[(i / 2) % 2];
            const unsigned rows = q_s + (x.it % QBUFS) * Q_BYTES + 64 * c * 128;
#pragma unroll
            for (int p = 0; p < PANELS; p++) stage_box<D, T>(acc, rows + p * Q_PANEL, p);
            fence_proxy_async_shared();
            mbarrier_arrive(smem_addr(&qbars.staged[x.it % QBUFS][c]));
        } else {
            attn_store<T, D>(as_n8_tiles(acc), m, l, o + (long)pair_of(x) * n * D,
                             lse + (long)pair_of(x) * n, query_of(x), n, scale, lane);
        }
    };
    /* Tile j - 1 finished once P_{j-2} V_{j-2} has landed (nothing in flight at j = 1): O
     * brought to tile j - 1's maximum, P_{j-1} packed from s for the next P V. */
    auto finish = [&](const item_t &x, int j) {
        wgmma_wait_group<0>();
        wgmma_fence_operands(acc);
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) wgmma_fence_operands(p[kk]);
        release(bars.v_empty, VS, x, j - 2, j >= 2);
        attn_rescale<D / 8>(as_n8_tiles(acc), alpha); /* at j = 1 O is 0 (and alpha 0) */
        attn_pack_p<T, BK / 8>(as_n8_tiles(s), p);
    };
    /* Tile j >= 1 in one turn: S_j and P_{j-1} V_{j-1} issued back to back, then the
     * exponentials of S_j while P V runs. */
    auto turn = [&](const item_t &x, int j, auto masked) {
        full(bars.k_full, KS, x, j);
        named_barrier_sync(my_turn, TURN_THREADS);
        wgmma_fence(); /* O was rescaled and P written by ordinary code */
        issue_s(x, j);
        wgmma_commit_group();
        full(bars.v_full, VS, x, j - 1);
        wgmma_fence(); /* a fence a batch (CUTLASS's warpgroup_arrive): S_j still runs */
        issue_pv(x, j - 1);
        wgmma_commit_group();
        named_barrier_arrive(other_turn, TURN_THREADS);

        wgmma_wait_group<PV_IN_FLIGHT>(); /* S_j has landed; P V may still run */
        wgmma_fence_operands(s);
        release(bars.k_empty, KS, x, j);
        if constexpr (decltype(masked)::value) {
            /* the last tile: Q is free for the producer's next item but one (but with O
             * staged there, 6g: then the storer frees it) */
#if defined(ATTN_AB_ONE_BODY) || defined(ATTN_AB_MASK_ALL) /* (6c out: every tile comes here) */
            mbarrier_arrive_if(q_empty(x), !O_BY_TMA && signals && j == x.k_tiles - 1);
#else
            mbarrier_arrive_if(q_empty(x), !O_BY_TMA && signals);
#endif
#if defined(ATTN_AB_ONE_BODY) /* (6c out: a branch with P V in flight) */
            if (j == x.k_tiles - 1)
                attn_mask<BK / 8>(as_n8_tiles(s), j * BK, query_of(x), n, causal, lane);
#else
            attn_mask<BK / 8>(as_n8_tiles(s), j * BK, query_of(x), n, causal, lane);
#endif
        }
        /* the exponentials in place, in s: neither O nor P, which P V still uses, is written */
        attn_softmax_exp<BK / 8, true>(as_n8_tiles(s), m, l, alpha, cexp);
    };
    /* FlashAttention-3's order: "finish" in the same step, after the exponentials. ptxas moves
     * its WARPGROUP.DEPBAR (the wait for P V) up to just after the row maxima; putting it across
     * the loop's branch instead spills at D = 128 and measured slower at D = 64 (the opening
     * comment). */
    auto step = [&](const item_t &x, int j, auto masked) {
        turn(x, j, masked);
        finish(x, j + 1);
    };
    /* The boundary turn: item y's tile 0 and item x's last P V in one turn, S_0(y) issued
     * first, then P_{T-1} V_{T-1}(x), as a regular turn. S_0(y)'s exponentials run under that
     * P V, with y's own m and l (x's are still needed by its store); then x's store, and y takes
     * over: O = 0 (so the rescale that finish(1) would do is a no-op), P_0(y) packed. */
    auto boundary = [&](const item_t &x, const item_t &y) {
        const int last = x.k_tiles - 1;
        mbarrier_wait_parity_in_asm(q_full(y), q_parity(y)); /* outside the turn, as K_0's */
        full(bars.k_full, KS, y, 0);
        named_barrier_sync(my_turn, TURN_THREADS);
        wgmma_fence();
        issue_s(y, 0, true);
        wgmma_commit_group();
        full(bars.v_full, VS, x, last);
        wgmma_fence();
        issue_pv(x, last);
        wgmma_commit_group();
        named_barrier_arrive(other_turn, TURN_THREADS);

        wgmma_wait_group<PV_IN_FLIGHT>(); /* S_0(y) has landed; x's P V may still run */
        wgmma_fence_operands(s);
        release(bars.k_empty, KS, y, 0);
        mbarrier_arrive_if(q_empty(y), !O_BY_TMA && signals && y.k_tiles == 1); /* y's last S */
        mask0(y);
        float my[2] = {-INFINITY, -INFINITY}, ly[2] = {0.0f, 0.0f};
        attn_softmax_exp<BK / 8, true>(as_n8_tiles(s), my, ly, alpha, cexp);

        wgmma_wait_group<0>(); /* x's last P V has landed */
        wgmma_fence_operands(acc);
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) wgmma_fence_operands(p[kk]);
        release(bars.v_empty, VS, x, last);
        store(x);
        start_item();
        m[0] = my[0], m[1] = my[1];
        l[0] = ly[0], l[1] = ly[1];
        attn_pack_p<T, BK / 8>(as_n8_tiles(s), p);
    };

    /* The block's first item: tile 0 alone in the turn, its exponentials after it lands. */
    auto first_tile = [&](const item_t &x) {
        start_item();
        mbarrier_wait_parity_in_asm(q_full(x), q_parity(x));
        named_barrier_sync(my_turn, TURN_THREADS);
        full(bars.k_full, KS, x, 0);
        wgmma_fence();
        issue_s(x, 0);
        wgmma_commit_group();
        named_barrier_arrive(other_turn, TURN_THREADS);
        wgmma_wait_group<0>();
        wgmma_fence_operands(s);
        release(bars.k_empty, KS, x, 0);
        mbarrier_arrive_if(q_empty(x), !O_BY_TMA && signals && x.k_tiles == 1); /* its last S */
        mask0(x);
        attn_softmax_exp<BK / 8, true>(as_n8_tiles(s), m, l, alpha, cexp);
        finish(x, 1); /* P_0 packed (nothing in flight, O = 0) */
    };
    /* The block's last item: its last P V outside the turns (the other consumer runs
     * meanwhile). */
    auto last_pv = [&](const item_t &x) {
        const int last = x.k_tiles - 1;
        full(bars.v_full, VS, x, last);
        wgmma_fence();
        issue_pv(x, last);
        wgmma_commit_group();
        wgmma_wait_group<0>();
        wgmma_fence_operands(acc);
        release(bars.v_empty, VS, x, last);
        store(x);
    };

    /* The turns run on across items (both consumers take T turns in each, the boundary turn
     * being the next item's tile 0): consumer 1's first arrival and consumer 0's last sync are
     * the kernel's, once. */
    if (c == 1) named_barrier_arrive(TURN + 0, TURN_THREADS); /* consumer 0 goes first */
    if (first_item().u < units) {
        item_t x = make_item(first_item(), 0, 0);
        first_tile(x);
        for (;;) {
#if defined(ATTN_AB_ONE_BODY) || defined(ATTN_AB_MASK_ALL) /* takes out 6c: one loop body */
            for (int j = 1; j < x.k_tiles; j++) step(x, j, std::true_type{});
#else
            for (int j = 1; j < x.k_tiles - 1; j++) step(x, j, std::false_type{});
            if (x.k_tiles > 1) step(x, x.k_tiles - 1, std::true_type{}); /* the last: masked */
#endif
            const fa3_cursor next = next_item(x.at, q_tiles, causal);
            if (next.u >= units) break;
            const item_t y = make_item(next, x.ring + x.k_tiles, x.it + 1);
#if defined(ATTN_AB_NO_BOUNDARY) /* takes out 6f: x finished alone, then y's tile 0 alone */
            (void)boundary;
            last_pv(x);
            first_tile(y);
#else
            boundary(x, y);
#endif
            x = y;
        }
        last_pv(x);
    }
    if (c == 0) named_barrier_sync(TURN + 0, TURN_THREADS); /* consumer 1's last arrival */
}

/* ---- host (the tensor maps: attn_hopper.cuh) ------------------------------------------------- */

/* The grid: one block per SM (one fits: __launch_bounds__(THREADS, 1), 225 KiB), asked once,
 * or fewer: the fewest blocks that take the work in as many rounds (with 2048 units on 132 SMs,
 * 128 blocks of 16 rather than 132 of 15 or 16: the others would wait for the last round
 * anyway). ATTN_FA3_GRID=n (read once) sets the grid to n blocks, at most one per unit: for a
 * sweep. */
static long fa3_grid(long units) {
    static int fixed = -1;
    if (fixed < 0) {
        const char *e = getenv("ATTN_FA3_GRID");
        fixed = e ? atoi(e) : 0;
        if (fixed < 0) fixed = 0;
    }
    if (units < 1) return 1;
    if (fixed > 0) return fixed < units ? fixed : units;
#if defined(ATTN_AB_NO_PERSIST) /* (6e out: a block a unit) */
    return units;
#endif
    return launch_balanced_grid(units, launch_sms());
}

template <typename T, int D> static int launch(const attn_args *a, cudaStream_t stream) {
    const int q_tiles = (a->n + BQ - 1) / BQ;
    const long units = (long)units_per_pair(q_tiles, a->causal) * a->b * a->h;
    if (units > 0x7fffffffL)
        return launch_unsupported("%ld work units: more than an int counts", units);
    char err[256];
    const wgmma_maps *w = maps_for(a, err, sizeof err);
    if (!w) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3((unsigned)fa3_grid(units)), dim3(THREADS), ATTN_FA3_SMEM(D), 1,
                            stream};
    return launch_kernel(fa3_attn_kernel<T, D>, cfg, w->mq, w->mk, w->mv, w->mo, (T *)a->o,
                         a->lse, a->n, q_tiles, (int)units, a->scale, a->causal);
}

extern "C" int STAGE(attn_fa3)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
