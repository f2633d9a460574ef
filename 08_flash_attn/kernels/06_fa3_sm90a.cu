/* Stage 6 — Hopper, FlashAttention-3's two overlaps: the consumer warpgroups take turns on the
 * tensor cores (ping-pong), and each one's softmax of tile j runs under its own P V product of
 * tile j - 1 (intra-warpgroup pipelining); and the kernel is persistent.
 *
 * Persistent (the latest change). The version before it ran one block per q tile of 128
 * queries: at 8 x 16 x 2048, 2048 blocks of one block an SM, each with only 16 key tiles (1 to
 * 16 when causal). Every block paid, with the SM's tensor cores idle, its prologue (the Q load,
 * the first K load, tile 0's S alone, nothing to overlap it with) and its epilogue (the last
 * P V alone, the store from registers); at N >= 4096, twice the key tiles or more a block,
 * that cost is spread thinner. Measured (H100, same session, 08_flash_attn/measured/
 * h100_stage6p_vs_sdpa.md against h100_stage6_vs_sdpa.md): at 8 x 16 x 2048, D = 128, 612 ->
 * 641 TFLOPS (fp16) and 491 -> 548 causal; D = 64, 435 -> 456 and 346 -> 396 causal; at
 * N >= 4096 causal gains 5-8% and non-causal stays within noise at D = 128. Now:
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
 *    the tiles carried before: slot (ring + j) % STAGES, parity ((ring + j) / STAGES) & 1), as
 *    if the items were one long sequence of key tiles; nothing is reset. Q has two buffers
 *    (193 KiB at D = 128, 129 KiB at D = 64), item it in buffer it % 2, each with a full
 *    barrier (the producer's arrive.expect_tx, the TMA's bytes) and an empty one (one arrival
 *    per consumer warp, 8, once the item's last S has landed: Q is read by S alone), both at
 *    parity (it / 2) & 1, the producer's wait on empty flipped (it passes at once in round 0).
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
 *    accumulator, m and l start again at every item as they started at every block.
 *
 * What changes from stage 5, and why it is faster (measured before persistence, H100: 1.08-1.18x
 * stage 5, 0.92-1.14x PyTorch's cuDNN backend at N >= 2048;
 * 08_flash_attn/measured/h100_stage6_vs_sdpa.md):
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
 *    bar.sync and the first HGMMA drop to the descriptors' (12 at D = 64, 16 at D = 128).
 *  - Masking only where needed, without a branch under a wgmma in flight: only a row block's
 *    last key tile can hold keys past n, or keys after a query (causal: the loop ends at the
 *    block's last query, and blocks and tiles are both 128 wide and aligned). The loop is
 *    "tiles 1 .. T - 2 unmasked" then "tile T - 1 masked", the same body instantiated twice
 *    (a compile-time flag); tile 0, whose product is waited for before its softmax, masks
 *    under stage 5's test.
 *  - At D = 64 the K/V ring has 3 slots (a tile is 16 KiB there): the producer runs a tile
 *    further ahead (4 slots measured the same). At D = 128 it stays at 2: with one Q buffer
 *    3 slots would have fitted (225 of the 227 KiB a block may have; never measured), with the
 *    persistent kernel's two Q buffers they would take 257 KiB.
 *
 * The schedule of consumer c (rows 64 c .. 64 c + 63 of the item's 128 queries), T key tiles
 * (the item's), TURN(c) = 1 + c the named barrier it waits on, TURN(1 - c) the one it arrives
 * on, tile j in ring position ring + j, Q in buffer it % 2:
 *   c = 1 only, once a block: arrive TURN(0)  (consumer 0 takes the first turn)
 * for every item:
 *   wait Q full
 *   tile 0:  sync TURN(c); wait K_0; issue S_0; arrive TURN(1 - c);
 *            wait_group 0; release K_0; [release Q: T = 1]; mask (if needed); exponentials of S_0;
 *            pack P_0 (O is 0: its rescale is a no-op)
 *   tile j = 1 .. T - 1:
 *            wait K_j; sync TURN(c); issue S_j; wait V_{j-1}; issue O += P_{j-1} V_{j-1};
 *            arrive TURN(1 - c); wait_group 1 (S_j done); release K_j;
 *            [j = T - 1: release Q (the item's last S has landed), mask];
 *            exponentials of S_j, alpha; wait_group 0 (P V done); release V_{j-1};
 *            O *= alpha; pack P_j
 *   after:   wait V_{T-1}; issue O += P_{T-1} V_{T-1}; wait_group 0; release V_{T-1}; store
 *   c = 0 only, once a block, last: sync TURN(0)  (takes consumer 1's last arrival: each
 *                                                  barrier ends with every phase complete)
 * Both consumers walk the same T tiles of each item (T depends on the item, not on the
 * consumer), so each makes T turns an item. With T the sum over the block's items: consumer 0
 * syncs T + 1 times on TURN(0) and consumer 1 arrives there 1 + T times; consumer 1 syncs T
 * times on TURN(1), consumer 0 arrives there T times. An arrival never runs ahead of its phase:
 * consumer 1's k-th arrival on TURN(0) comes after its k-th sync on TURN(1), which needs
 * consumer 0's k-th arrival there, made after consumer 0's k-th sync on TURN(0) had completed
 * (fragment_check.py plays this, warp by warp, with the mbarrier rings, over several items).
 * A consumer holding its turn waits only on full barriers (V_{j-1}'s, and K_0's at an item's
 * tile 0) of tiles whose slots were freed in earlier iterations (or items) by both consumers,
 * never on the other consumer's turn, and waits on Q (and K_j, j >= 1) only outside its turn:
 * no deadlock.
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
 * softmax. No LDL/STL, R2UR only before the key loop. The persistent loop adds little: the
 * item's decode (an integer division, MUFU.RCP), a few R2UR for Q's buffer, Q's waits and the
 * predicated arrival on Q's empty barrier next to K's. */
#include <stdlib.h>

#include "stage.h"
#include "attn.h"
#include "attn_hopper.cuh"
#include "fa2.cuh"
#include "launch.cuh"
#include "reduce.cuh"
#include "tensor_map.h"
#include "ptx/ex2.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

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
    return causal ? (q_tiles + 1) / 2 : q_tiles;
}
template <typename F>
static __device__ __forceinline__ void for_each_item(int units, int q_tiles, int causal, F &&body) {
    const int per_pair = units_per_pair(q_tiles, causal);
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const int pair = u / per_pair, k = u % per_pair; /* pair = b * heads + h */
        const int items = causal && 2 * k + 1 < q_tiles ? 2 : 1;
        for (int i = 0; i < items; i++) body(pair, causal && i == 0 ? q_tiles - 1 - k : k);
    }
}
/* Key tiles of the item whose queries start at q0: the same for both consumers. */
static __device__ __forceinline__ int key_tiles(int q0, int n, int causal) {
    const int kv_end = causal ? min(n, q0 + BQ) : n;
    return (kv_end + BK - 1) / BK;
}

/* Q's barriers, one pair per Q buffer: full (the TMA landed), empty (each consumer warp has
 * seen the item's last S land). bars.q_full of attn_ring_bars is left unused. */
struct fa3_q_bars {
    unsigned long long full[QBUFS], empty[QBUFS];
};

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS, 1)
    fa3_attn_kernel(const __grid_constant__ CUtensorMap map_q,
                    const __grid_constant__ CUtensorMap map_k,
                    const __grid_constant__ CUtensorMap map_v, T *__restrict__ o,
                    float *__restrict__ lse, int n, int q_tiles, int units, float scale,
                    int causal) {
    constexpr int STAGES = ATTN_FA3_STAGES(D);
    constexpr int PANELS = D / ATTN_PANEL_COLS;
    constexpr unsigned Q_PANEL = BQ * 128, KV_PANEL = BK * 128;
    constexpr unsigned Q_BYTES = PANELS * Q_PANEL, KV_BYTES = PANELS * KV_PANEL;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) attn_ring_bars<STAGES> bars;
    __shared__ __align__(8) fa3_q_bars qbars;
    const unsigned q_s = (smem_addr(smem) + 1023u) & ~1023u; /* the swizzle's period */
    const unsigned k_s = q_s + QBUFS * Q_BYTES, v_s = k_s + STAGES * KV_BYTES;
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); /* uniform registers */

    if (threadIdx.x == 0) {
        attn_ring_init(bars, &map_q, &map_k, &map_v, CONSUMERS * 4);
        for (int b = 0; b < QBUFS; b++) {
            mbarrier_init(smem_addr(&qbars.full[b]), 1);
            mbarrier_init(smem_addr(&qbars.empty[b]), CONSUMERS * 4);
        }
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
                attn_load_kv<STAGES, D>(bars, &map_k, &map_v, k_s, v_s, pair, k_tiles, ring);
                ring += k_tiles;
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
    int ring = 0, it = 0;           /* as the producer's */

    /* One work item: stage 6's body for one q tile, on ring positions ring + j. */
    auto item = [&](int pair, int tile) {
        const int q0 = tile * BQ, k_tiles = key_tiles(q0, n, causal), b = it % QBUFS;
        const int first = q0 + 64 * c;                  /* the consumer's first query */
        const int query = first + 16 * warp + lane / 4; /* the thread's row g; row g + 8 is + 8 */
        const unsigned q_c = q_s + b * Q_BYTES + 64 * c * 128; /* 64 rows into each Q panel */
        const unsigned q_full = smem_addr(&qbars.full[b]), q_empty = smem_addr(&qbars.empty[b]);

        float acc[D / 2], s[BK / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f},
                                     alpha[2];
        unsigned p[BK / 16][4]; /* P of the previous tile: A of its P V */
#pragma unroll
        for (int i = 0; i < D / 2; i++) acc[i] = 0.0f;
        wgmma_fence_operands(acc);

        /* S = Q K_j^T into s (D / 16 k-steps of m64n128k16), O += P V_j (BK / 16 of m64nDk16). */
        auto issue_s = [&](int j) {
            const unsigned ks = k_s + ((ring + j) % STAGES) * KV_BYTES;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                mma_ss<T, BK>(s, desc_kmajor(q_c + (kk / 4) * Q_PANEL + 32 * (kk % 4)),
                              desc_kmajor(ks + (kk / 4) * KV_PANEL + 32 * (kk % 4)), kk > 0);
        };
        auto issue_pv = [&](int j) {
            const unsigned vs = v_s + ((ring + j) % STAGES) * KV_BYTES;
#pragma unroll
            for (int kk = 0; kk < BK / 16; kk++)
                mma_rs_tb<T, D>(acc, p[kk], desc_v(vs + 2048 * kk));
        };
        auto full = [&](unsigned long long *r, int j) {
            mbarrier_wait_parity_in_asm(smem_addr(&r[(ring + j) % STAGES]),
                                        ((ring + j) / STAGES) & 1);
        };
        auto release = [&](unsigned long long *r, int j, bool also = true) {
            mbarrier_arrive_if(smem_addr(&r[(ring + j) % STAGES]), signals && also);
        };
        /* Tile j - 1 finished once P_{j-2} V_{j-2} has landed (nothing in flight at j = 1): O
         * brought to tile j - 1's maximum, P_{j-1} packed from s for the next P V. */
        auto finish = [&](int j) {
            wgmma_wait_group<0>();
            wgmma_fence_operands(acc);
#pragma unroll
            for (int kk = 0; kk < BK / 16; kk++) wgmma_fence_operands(p[kk]);
            release(bars.v_empty, j - 2, j >= 2);
            attn_rescale<D / 8>(as_n8_tiles(acc), alpha); /* at j = 1 O is 0 (and alpha 0) */
            attn_pack_p<T, BK / 8>(as_n8_tiles(s), p);
        };

        mbarrier_wait_parity_in_asm(q_full, (it / QBUFS) & 1);

        /* Tile 0: S_0 alone in the turn; its exponentials after it lands. */
        named_barrier_sync(my_turn, TURN_THREADS);
        full(bars.k_full, 0);
        wgmma_fence();
        issue_s(0);
        wgmma_commit_group();
        named_barrier_arrive(other_turn, TURN_THREADS);
        wgmma_wait_group<0>();
        wgmma_fence_operands(s);
        release(bars.k_empty, 0);
        mbarrier_arrive_if(q_empty, signals && k_tiles == 1); /* the item's last S */
        if (BK > n || (causal && BK - 1 > first))
            attn_mask<BK / 8>(as_n8_tiles(s), 0, query, n, causal, lane);
        attn_softmax_exp<BK / 8, true>(as_n8_tiles(s), m, l, alpha, cexp);

        /* Tile j >= 1 in one turn: S_j and P_{j-1} V_{j-1} issued back to back, then the
         * exponentials of S_j while P V runs. */
        auto turn = [&](int j, auto masked) {
            full(bars.k_full, j);
            named_barrier_sync(my_turn, TURN_THREADS);
            wgmma_fence(); /* O was rescaled and P written by ordinary code */
            issue_s(j);
            wgmma_commit_group();
            full(bars.v_full, j - 1);
            wgmma_fence(); /* a fence a batch (CUTLASS's warpgroup_arrive): S_j still runs */
            issue_pv(j - 1);
            wgmma_commit_group();
            named_barrier_arrive(other_turn, TURN_THREADS);

            wgmma_wait_group<1>(); /* S_j has landed; P V may still run */
            wgmma_fence_operands(s);
            release(bars.k_empty, j);
            if constexpr (decltype(masked)::value) {
                /* the last tile: Q is free for the producer's next item but one */
                mbarrier_arrive_if(q_empty, signals);
                attn_mask<BK / 8>(as_n8_tiles(s), j * BK, query, n, causal, lane);
            }
            /* the exponentials in place, in s: neither O nor P, which P V still uses, is
             * written */
            attn_softmax_exp<BK / 8, true>(as_n8_tiles(s), m, l, alpha, cexp);
        };
        /* FlashAttention-3's order: "finish" in the same step, after the exponentials. ptxas
         * moves its WARPGROUP.DEPBAR (the wait for P V) up to just after the row maxima; putting
         * it across the loop's branch instead spills at D = 128 and measured slower at D = 64
         * (the opening comment). */
        auto step = [&](int j, auto masked) {
            turn(j, masked);
            finish(j + 1);
        };
        finish(1); /* P_0 packed (nothing in flight, O = 0) */
        for (int j = 1; j < k_tiles - 1; j++) step(j, std::false_type{});
        if (k_tiles > 1) step(k_tiles - 1, std::true_type{}); /* the last tile: masked */

        /* The last tile's P V, outside the turns: the other consumer (and the producer, with the
         * next item's Q and first K/V) runs meanwhile. */
        const int last = k_tiles - 1;
        full(bars.v_full, last);
        wgmma_fence();
        issue_pv(last);
        wgmma_commit_group();
        wgmma_wait_group<0>();
        wgmma_fence_operands(acc);
        release(bars.v_empty, last);

        attn_store<T, D>(as_n8_tiles(acc), m, l, o + (long)pair * n * D, lse + (long)pair * n,
                         query, n, scale, lane);
        ring += k_tiles;
        it++;
    };

    /* The turns run on across items (both consumers take T turns in each): consumer 1's first
     * arrival and consumer 0's last sync are the kernel's, once. */
    if (c == 1) named_barrier_arrive(TURN + 0, TURN_THREADS); /* consumer 0 goes first */
    for_each_item(units, q_tiles, causal, item);
    if (c == 0) named_barrier_sync(TURN + 0, TURN_THREADS); /* consumer 1's last arrival */
}

/* ---- host (the tensor maps: attn_hopper.cuh) ------------------------------------------------- */

/* The grid: one block per SM (one fits: __launch_bounds__(THREADS, 1), 193 KiB), asked once,
 * or fewer: the fewest blocks that take the work in as many rounds (with 2048 units on 132 SMs,
 * 128 blocks of 16 rather than 132 of 15 or 16: the others would wait for the last round
 * anyway). ATTN_FA3_GRID=n (read once) sets the grid to n blocks, at most one per unit: for a
 * sweep. */
static long fa3_grid(long units) {
    static int sms, fixed = -1;
    if (!sms) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            sms < 1)
            sms = 1;
    }
    if (fixed < 0) {
        const char *e = getenv("ATTN_FA3_GRID");
        fixed = e ? atoi(e) : 0;
        if (fixed < 0) fixed = 0;
    }
    if (units < 1) return 1;
    if (fixed > 0) return fixed < units ? fixed : units;
    const long fit = units < sms ? units : sms;
    const long rounds = (units + fit - 1) / fit;
    return (units + rounds - 1) / rounds;
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
    return launch_kernel(fa3_attn_kernel<T, D>, cfg, w->mq, w->mk, w->mv, (T *)a->o, a->lse,
                         a->n, q_tiles, (int)units, a->scale, a->causal);
}

extern "C" int STAGE(attn_fa3)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
