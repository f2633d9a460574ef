/* Stage 8 — the final kernel: stage 7 with a tile width per size class, fp16 as well as bf16,
 * and any M and N.
 *
 * What changes from stage 7.
 *  - A tile per size. A 128 x 256 tile is the most efficient per flop (the widest wgmma, the
 *    fewest operand bytes per product), but a persistent grid is only as fast as its busiest
 *    SM: at 1024^3 there are 32 such tiles for 132 SMs, and 100 SMs idle. The kernel is a
 *    template over the tile: 128 x 256 and 128 x 128 (two consumers, m64n256 / m64n128 each)
 *    and 64 x 128 (one consumer, m64n128). The launcher estimates each one's time as rounds x
 *    tile area / the tile's measured rate and takes the least (pick_tile). Why 64 x 128 and
 *    not 128 x 64 for small sizes, with the same area: a wgmma reads its A and B tiles from
 *    shared memory for every k16 step, m64n64 4 KiB per 32 clocks of math and m64n128 6 KiB
 *    per 64, and shared memory gives 128 bytes per clock (README, "Stage 8"). Smaller tiles
 *    leave room for a deeper ring (6 and 8 slots), which a short K loop needs more than a
 *    long one: its first loads are not hidden behind anything.
 *  - A staging area of two 8 KiB boxes per consumer instead of a whole 64 x BN half-tile:
 *    the fragment leaves one 64 x 64 box at a time (stmatrix, fence, named barrier, TMA
 *    store) through the two buffers in turn, counting boxes across tiles, and a buffer is
 *    rewritten once the store two boxes back has read it (tma_store_wait<1>). That frees the
 *    room for a 4th slot at 128 x 256 (4 x 48 + 32 + 1 = 225 KiB).
 *    GEMM06_FINAL_TILE=128x256|128x128|64x128 forces one (the README's sweep).
 *  - fp16. The same kernel with T = f16_t: wgmma.f32.f16.f16 instead of .bf16, and the
 *    epilogue rounds to fp16. The tensor maps are the same: TMA moves 2-byte elements without
 *    looking at them, and the zero fill is zero bits in both formats.
 *  - A balanced grid: the fewest clusters that keep the number of rounds (pairs per cluster)
 *    of a grid of every resident cluster; 64 instead of 66 at 4096^3 and 8192^3
 *    (balanced_clusters).
 *  - Any M and N. TMA already clips loads (zero fill) and stores (boxes cut at the edges) for
 *    any M and N; what it cannot do is a tensor whose rows are not a multiple of 16 bytes
 *    apart. So when N % 8 != 0 the epilogue stores the fragment from registers with bounds
 *    checks (store_fragment, stage 1's), slower but correct; K % 8 == 0 is still needed for
 *    A's and B's maps.
 *  - An option of 2x2 clusters, measured and not used (GEMM06_FINAL_CLUSTER=2x2; the default
 *    stays 2x1, stage 6's pair of tiles stacked along M sharing B: NOTES.md, "2x2 clusters"). The kernel is a template over the
 *    cluster's shape, CM x CN tiles: four CTAs compute a 2 x 2 block of C, the two of a cluster
 *    row need the same rows of A and the two of a cluster column the same columns of B. Each
 *    CTA loads half of its A tile, multicast to its row, and half of its B tile, multicast to
 *    its column, so a tile costs BM/2 + BN/2 operand rows of L2 reads per K tile instead of
 *    BM + BN/2: 25% less at 128 x 256 and 64 x 128, a third less at 128 x 128. Why that should
 *    be faster: at 8192^3 we read 17% more L2 sectors than cuBLAS, and at 1024^3 the 64 x 128
 *    tile waits on L2 (NOTES.md, stage 8, the profiles). What it costs: a slot is refilled only
 *    when the consumers of three CTAs (not two) have released it, a cluster of 4 must fit in
 *    one GPC (a GPC whose free SMs are not a multiple of 4 leaves some idle), and more tiles
 *    past the edges of C are computed in vain. Measured (H100): the 64 x 128 tile gains 19% at
 *    8192^3, but only 30 clusters of 4 fit (120 SMs, against 66 pairs on 132), and every
 *    tile's best size got slower (128 x 256 at 8192^3: 0.952x cuBLAS against 1.023x).
 *  - A lean K loop (chapter 07's change): the wgmma descriptors of slot 0 made once and each
 *    operand's advanced by an add (desc_advance), the ring position kept as slot and phase,
 *    the ring's and barriers' shared addresses made once: 85 -> 39 instructions a K tile;
 *    +1-2% at 1024^3, within noise at large sizes (README, stage 8, "A lean K loop").
 *
 * Shapes: any M and N >= 1, K % 8 == 0. */
/* A/B switches (06_wgmma_tma/ab.list; not part of the lesson's kernel):
 *   GEMM06_AB_FINAL_3SLOTS  the 128x256 tile with 3 slots (stage 7's count; the one-box staging
 *                           kept, 177 KiB): what the fourth slot that the staging freed is worth.
 *                           The 128x128 and 64x128 tiles are unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

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

#define BK GEMM06_BK

/* A tile of 64 * CONS rows (one 64-row half per consumer warpgroup) by BN columns. Slots: as
 * many as fit beside the staging, two 8 KiB boxes per consumer. */
template <int BN, int CONS> struct final_shape {
    static constexpr int bm = 64 * CONS, threads = 128 * (1 + CONS);
    static constexpr int slot_bytes = (bm + BN) * BK * 2;
    static constexpr int staging_bytes = 2 * 8192; /* one consumer's two boxes of 64 x 64 */
    static constexpr int depth =
#if defined(GEMM06_AB_FINAL_3SLOTS) /* A/B, README stage 8 "One box at a time": no fourth slot */
        BN == 256 && CONS == 2 ? 3 :
#endif
        (GEMM06_SMEM_FINAL - CONS * staging_bytes - 1024) / slot_bytes < 8
            ? (GEMM06_SMEM_FINAL - CONS * staging_bytes - 1024) / slot_bytes
            : 8;
    static constexpr int a_bytes = bm * BK * 2;
    static constexpr int smem = depth * slot_bytes + CONS * staging_bytes + 1024;
};
#if defined(GEMM06_AB_FINAL_3SLOTS) /* A/B, README stage 8 "One box at a time" */
static_assert(final_shape<256, 2>::depth == 3, "the A/B variant's 3 slots");
#else
static_assert(final_shape<256, 2>::depth == 4 && final_shape<256, 2>::smem == GEMM06_SMEM_FINAL,
              "gemm06.h agrees");
#endif
static_assert(final_shape<128, 2>::depth == 6, "slots");
static_assert(final_shape<128, 1>::depth == 8 && final_shape<128, 1>::smem <= GEMM06_SMEM_FINAL,
              "slots");

/* The cluster: CM x CN tiles of BM x BN, rank = rm + CM * rn for the tile in cluster row rm and
 * cluster column rn (2x1: rank = rm, stage 6's pair). The CN tiles of a cluster row share their
 * BM rows of A, the CM tiles of a cluster column their BN columns (rows of B): each CTA loads
 * BM / CN rows of A, multicast to its cluster row, and BN / CM rows of B, multicast to its
 * cluster column, each part into its place in the slot, the same in every CTA. With 2x2:
 *
 *                 columns n0 .. n0+BN-1    n0+BN .. n0+2BN-1
 *    rows m0         rank 0 (rm 0, rn 0)     rank 2 (rm 0, rn 1)     A rows: ranks 0, 2 and 1, 3
 *    rows m0+BM      rank 1 (rm 1, rn 0)     rank 3 (rm 1, rn 1)     B rows: ranks 0, 1 and 2, 3
 *
 *    slot of rank 0:  A rows 0..BM/2-1 <- r0 | BM/2.. <- r2 | B rows 0..BN/2-1 <- r0 | BN/2.. <- r1
 *
 * The 128-byte swizzle repeats every 8 rows of 128 bytes (1024 bytes), and TMA and wgmma both
 * take it from the address bits: a part must start 1024-aligned to land exactly as the rows of
 * one whole-tile load would, hence a multiple of 8 rows (the smallest, 64 x 128's half of A,
 * is 32 rows, 4 KiB). The CTAs that write into a CTA's slot, its cluster row and its cluster
 * column (CM + CN - 1 of them, itself included; not rank 3 for rank 0), are exactly the ones
 * its own loads write into: the relation "same rm or same rn" is symmetric. The barriers use
 * that (see the kernel). */
template <int BM, int BN, int CM, int CN> struct final_cluster {
    static constexpr int size = CM * CN, writers = CM + CN - 1;
    static constexpr int a_rows = BM / CN, b_rows = BN / CM; /* the part this CTA loads */
    static constexpr int a_part_bytes = a_rows * BK * 2, b_part_bytes = b_rows * BK * 2;
    static_assert(BM % CN == 0 && BN % CM == 0 && a_part_bytes % 1024 == 0 &&
                      b_part_bytes % 1024 == 0,
                  "each part of a slot starts on a 1024-byte boundary (whole swizzle atoms)");
    static_assert(size <= 8, "a portable cluster; the multicast mask has a bit per rank");
};

template <typename T, int BN>
static __device__ __forceinline__ void mma_k16(float (&d)[BN / 2], uint64_t a, uint64_t b) {
    if constexpr (std::is_same_v<T, f16_t>) wgmma_f16_ss<BN>(d, a, b, 1);
    else wgmma_bf16_ss<BN>(d, a, b, 1);
}

template <typename T, int BN, int CONS, int CM, int CN>
static __global__ void __launch_bounds__(final_shape<BN, CONS>::threads, 1)
    final_kernel(const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_c, T *__restrict__ C, int M, int N, int K,
                 const gemm06_tiles blocks, const int tma_store) {
    using S = final_shape<BN, CONS>;
    using Q = final_cluster<S::bm, BN, CM, CN>;
    constexpr int DEPTH = S::depth, BM = S::bm, CLUSTER = Q::size;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    /* through a shuffle: ptxas cannot recompute it from the shared window's base then, which it
     * did in the K loop, a dozen instructions a K tile, rather than keep it */
    const unsigned ring = __shfl_sync(0xffffffffu, smem_addr(align1024(smem)), 0);
    /* Broadcast from lane 0: ptxas then knows it is warp-uniform and keeps what derives from it
     * (the consumer's shared-memory addresses, its wgmma descriptors) in uniform registers,
     * not in per-thread ones copied over (R2UR) before every wgmma. */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const unsigned rank = cluster_ctarank();
    /* This CTA's place in its cluster block (final_cluster); with CN = 1 the compiler sees
     * rn = 0. */
    const int rm = CN == 1 ? (int)rank : (int)rank % CM, rn = CN == 1 ? 0 : (int)rank / CM;
    const int k_tiles = (K + BK - 1) / BK;
    const int n_blocks = blocks.tiles_m * blocks.tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        if (tma_store) tma_prefetch_map(&map_c);
        /* empty[s]: every consumer warp of every CTA that writes into our slot s hands it back
         * (see release below). */
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), Q::writers * CONS * 4);
        }
        fence_mbarrier_init_cluster();
    }
    cluster_arrive_relaxed();
    cluster_wait();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            /* Our part of A goes to our cluster row (ranks rm + CM j), our part of B to our
             * cluster column (ranks CM rn .. CM rn + CM - 1); 2x1: A to ourselves alone, a plain
             * load, and B to both (0b11). */
            unsigned short mask_a = 0;
            for (int j = 0; j < CN; j++) mask_a |= (unsigned short)(1u << (rm + CM * j));
            const unsigned short mask_b = (unsigned short)(((1u << CM) - 1) << (CM * rn));
            int it = 0;
            for (int p = cluster_id; p < n_blocks; p += clusters) {
                int bm, bn;
                gemm06_tile_at(blocks, p, bm, bn);
                const int m0 = (bm * CM + rm) * BM, n0 = (bn * CN + rn) * BN;
                for (int t = 0; t < k_tiles; t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * S::slot_bytes, bar = smem_addr(&full[s]);
                    /* Every CTA that writes into our slot s writes into it only after this same
                     * wait in its own producer, on its own empty[s], which counts our consumers'
                     * release too: so no part of the next round lands on a slot still read. */
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    /* The whole slot's bytes, whoever loads them: our parts and our partners'
                     * (which may land before this arming: the tx-count may go negative). */
                    mbarrier_arrive_expect_tx(bar, S::slot_bytes);
                    if constexpr (CN == 1)
                        tma_load_2d(a, &map_a, bar, t * BK, m0);
                    else
                        tma_load_2d_multicast(a + rn * Q::a_part_bytes, &map_a, bar, t * BK,
                                              m0 + rn * Q::a_rows, mask_a);
                    tma_load_2d_multicast(a + S::a_bytes + rm * Q::b_part_bytes, &map_b, bar,
                                          t * BK, n0 + rm * Q::b_rows, mask_b);
                }
            }
            /* The tail: wait until the consumers of every CTA that writes into ours (they are
             * the ones that arrive on our barriers) have handed back every slot of ours, i.e.
             * until their last remote arrival on our barriers has landed. Every CTA of the
             * cluster runs the same blocks and K tiles, so these DEPTH phases are the last
             * ones anybody arrives on. After it nothing from a partner can still reach this
             * block (its multicast bytes landed before our consumers could release), so the
             * block may exit once everyone is done; the relaxed cluster barrier below does not
             * order the remote arrivals by itself. */
            for (int i = 0; i < DEPTH; i++, it++)
                mbarrier_wait_parity(smem_addr(&empty[it % DEPTH]), ((it / DEPTH) & 1) ^ 1);
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const bool signals = threadIdx.x % 32 == 0, stores = threadIdx.x % 128 == 0;
        const unsigned staging = ring + DEPTH * S::slot_bytes + c * S::staging_bytes;
        /* Hand slot s back to every CTA whose loads write into it, our cluster column (our
         * part of B's sharers, ourselves included) and the rest of our cluster row (A's): the
         * same CTAs whose slot ours write into, so each one's producer, waiting on its own
         * empty[s], knows that every CTA it is about to write into is done with the slot. Not
         * the diagonal CTA of a 2x2 cluster: it never writes here, and its producer need not
         * wait for us. (Arriving on all four would also be correct, with a count of 4 CONS 4,
         * but would make every slot wait for the slowest of four CTAs instead of three.) */
        /* the barriers' shared addresses, made once (through a shuffle, like the ring's):
         * smem_addr costs an S2UR of the CTA's rank and more wherever it runs */
        const unsigned full0 = __shfl_sync(0xffffffffu, smem_addr(&full[0]), 0);
        const unsigned empty0 = __shfl_sync(0xffffffffu, smem_addr(&empty[0]), 0);
        auto release = [&](int s) {
            if (signals) {
                const unsigned bar = empty0 + 8 * s;
                for (int i = 0; i < CM; i++) mbarrier_arrive_remote(mapa_shared(bar, i + CM * rn));
                for (int j = 1; j < CN; j++)
                    mbarrier_arrive_remote(mapa_shared(bar, rm + CM * ((rn + j) % CN)));
            }
        };
        /* The ring position as slot and phase, apart (it % DEPTH and (it / DEPTH) & 1 cost a
         * multiply-high and more each K tile for DEPTH 6), and the slot-0 descriptors of our
         * operand tiles, to which every K step only adds (desc_advance; chapter 07 measured
         * both in its shorter FP8 K loop). */
        int slot = 0, last = 0;
        unsigned phase = 0;
        const uint64_t ring_a = desc_sw128(ring + c * 64 * 128);
        const uint64_t ring_b = desc_sw128(ring + S::a_bytes);
        unsigned boxes = 0; /* boxes staged so far: buffer boxes % 2 is next */
        for (int p = cluster_id; p < n_blocks; p += clusters) {
            int bm, bn;
            gemm06_tile_at(blocks, p, bm, bn);
            /* A tile wholly past M or N (the last cluster row or column of a grid that does not
             * divide into whole cluster blocks) is computed all the same: its CTA's producer
             * still loads its parts of A and B, which partners in range may need (the tile
             * past N still loads half of the A rows its row partner multiplies), and TMA
             * completes a box's full byte count on every receiver's barrier even when it is
             * all zero fill; its consumers still release every slot, which the partners'
             * producers wait for. Only its stores do nothing: TMA drops a box wholly outside
             * C, store_fragment skips every element. Skipping such a tile would leave the
             * partners waiting on bytes and arrivals that never come. */
            const int m0 = (bm * CM + rm) * BM, n0 = (bn * CN + rn) * BN;
            float d[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
            wgmma_fence_operands(d);

            for (int t = 0; t < k_tiles; t++) {
                const uint64_t a = desc_advance(ring_a, slot * S::slot_bytes);
                const uint64_t b = desc_advance(ring_b, slot * S::slot_bytes);
                mbarrier_wait_parity(full0 + 8 * slot, phase);
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; k++)
                    mma_k16<T, BN>(d, desc_advance(a, 32 * k), desc_advance(b, 32 * k));
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (t > 0) release(last);
                last = slot;
                if (++slot == DEPTH) slot = 0, phase ^= 1;
            }
            wgmma_wait_group<0>();
            wgmma_fence_operands(d);
            release(last);

            if (!tma_store) { /* N % 8 != 0: no map of C can exist */
                store_fragment<BN>(d, C, M, N, m0 + 64 * c, n0);
                continue;
            }
            store_boxes<BN, T>(d, &map_c, staging, boxes, m0 + 64 * c, n0, 1 + c, stores);
        }
        if (stores && tma_store) tma_store_wait<0>();
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

/* The grouped order's group height, in cluster rows (pairs of tile rows, with either cluster):
 * 8 = 16 tile rows = 2048 rows of C, the height stage 5 chose (stages 6 and 7 group 16 pairs,
 * 4096 rows). GEMM06_GROUP_ROWS=n (1..64) overrides it, read once, for the sweep (NOTES.md). */
#define FINAL_GROUP_PAIRS 8

/* A forced tile, read once from GEMM06_FINAL_TILE (128x256, 128x128 or 64x128; the README's
 * sweep), as rows * 1000 + columns: 0 when unset, -1 when it is none of those. */
static int forced_tile(void) {
    static int tile = -2;
    if (tile == -2) {
        const char *t = getenv("GEMM06_FINAL_TILE");
        tile = !t || !*t                 ? 0
               : !strcmp(t, "128x256") ? 128256
               : !strcmp(t, "128x128") ? 128128
               : !strcmp(t, "64x128")  ? 64128
                                       : -1;
    }
    return tile;
}

/* The cluster's shape, read once from GEMM06_FINAL_CLUSTER (tiles along M x along N: 2x1, the
 * default, or 2x2; the sweep), as its width along N, CN: 1 or 2, -1 when it is neither. */
static int cluster_n_from_env(void) {
    static int cn = -2;
    if (cn == -2) {
        const char *e = getenv("GEMM06_FINAL_CLUSTER");
        cn = !e || !*e || !strcmp(e, "2x1") ? 1 : !strcmp(e, "2x2") ? 2 : -1;
    }
    return cn;
}

/* The grid: launch_balanced_grid over cluster blocks (measured with 2x1: 64 clusters instead
 * of 66 ran 0.7% faster at 4096^3 and 1.2% at 8192^3 on an H100: the README's table, from the
 * sweeps). GEMM06_FINAL_CLUSTERS=n launches
 * min(n, resident) instead. */
static long balanced_clusters(long blocks, long resident) {
    const char *e = getenv("GEMM06_FINAL_CLUSTERS");
    if (e && atol(e) > 0) return atol(e) < resident ? atol(e) : resident;
    return launch_balanced_grid(blocks, resident);
}

template <typename T, int BN, int CONS, int CM, int CN>
static int launch_final(const T *A, const T *B, T *C, int M, int N, int K, int order,
                        cudaStream_t stream) {
    /* the schedule's grid: cluster blocks, CM tile rows by CN tile columns each; the last
     * cluster row and column may stick out of C (see the kernel) */
    using S = final_shape<BN, CONS>;
    using Q = final_cluster<S::bm, BN, CM, CN>;
    const long rows = (blocks_for(M, S::bm) + CM - 1) / CM,
               cols = (blocks_for(N, BN) + CN - 1) / CN;
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 cluster rows or columns");
    char err[256];
    /* boxes of the parts each CTA loads */
    const gemm06_maps *maps = gemm06_maps_for((const bf16_t *)A, (const bf16_t *)B, M, N, K,
                                              Q::a_rows, Q::b_rows, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    /* The TMA store needs rows of C 16 bytes apart and C itself 16-byte aligned. */
    const CUtensorMap *map_c = NULL;
    if (N % 8 == 0 && (uintptr_t)C % 16 == 0) {
        map_c = gemm06_store_map_for((const bf16_t *)C, M, N, err, sizeof err);
        if (!map_c) return launch_unsupported("%s", err);
    }
    static const CUtensorMap unused = {}; /* passed when the epilogue stores from registers */
    gemm06_tiles blocks = {(int)rows, (int)cols, order, gemm06_group_rows_from_env("GEMM06_GROUP_ROWS", FINAL_GROUP_PAIRS)};
    if (gemm06_schedule(&blocks, order, stream) < 0)
        return launch_unsupported("could not upload the Hilbert tile schedule");
    /* clusters along x: blocks 4c .. 4c + 3 (2c, 2c + 1 with 2x1) are cluster c, rank
     * blockIdx.x % size; launch_resident_clusters asks the occupancy API for that size. */
    launch_cfg cfg = {dim3(Q::size), dim3(S::threads), (size_t)S::smem, Q::size, stream};
    const void *kernel = (const void *)final_kernel<T, BN, CONS, CM, CN>;
    static int resident; /* per instantiation */
    if (!resident) resident = launch_resident_clusters(kernel, &cfg);
    if (resident > 0)
        cfg.grid = dim3((unsigned)(Q::size * balanced_clusters(rows * cols, resident)));
    return launch_kernel(final_kernel<T, BN, CONS, CM, CN>, cfg, maps->map_a, maps->map_b,
                         map_c ? *map_c : unused, C, M, N, K, blocks, map_c != NULL);
}

/* The size rule: the tile with the least estimated time, rounds x (tile area / the tile's
 * rate), where a round is one cluster block per cluster that fits (SMs / cluster size; a
 * cluster block is CM x CN tiles: a pair stacked along M with 2x1) and the rate is the tile's
 * TFLOPS with that tile forced at 8192^3 on an H100 with 2x1 clusters (README, "Stage 8"; the
 * same rates serve 2x2 until it is measured). 816 and 751 are 815.7 and 750.8 rounded, from the
 * sweep made before the 64 x 128 tile existed (NOTES.md, "The rule's rates"):
 *   git show e8f937e:06_wgmma_tma/measured/sweeps_h100/final_bn256.csv (and final_bn128.csv)
 * 505 is measured/sweeps_h100.csv, run final_tile64x128 (505.9). That file's 128 x 256 and
 * 128 x 128 runs (805.6, 733.1) would pick the same tile at every shape it holds. A wide tile
 * computes faster per flop; a narrow one fills the SMs at sizes where the wide one leaves them
 * idle. Ties go to the wider tile (listed first). */
typedef struct {
    int code, bm, bn, rate; /* rate: TFLOPS at 8192^3 */
} final_tile;
static const final_tile final_tiles[] = {
    {128256, 128, 256, 816}, {128128, 128, 128, 751}, {64128, 64, 128, 505}};

static int pick_tile(int M, int N, int cn) {
    const long slots = launch_sms() / (2 * cn);
    int best = 0;
    double best_cost = 0;
    for (int t = 0; t < (int)(sizeof final_tiles / sizeof final_tiles[0]); t++) {
        const final_tile *f = &final_tiles[t];
        const long blocks =
            (blocks_for(M, f->bm) + 1) / 2 * ((blocks_for(N, f->bn) + cn - 1) / cn);
        const long rounds = (blocks + slots - 1) / slots;
        const double cost = (double)rounds * f->bm * f->bn / f->rate;
        if (t == 0 || cost < best_cost) best = t, best_cost = cost;
    }
    return final_tiles[best].code;
}

template <typename T, int CM, int CN>
static int launch_tile(int tile, const T *A, const T *B, T *C, int M, int N, int K, int order,
                       cudaStream_t stream) {
    switch (tile) {
    case 128256: return launch_final<T, 256, 2, CM, CN>(A, B, C, M, N, K, order, stream);
    case 128128: return launch_final<T, 128, 2, CM, CN>(A, B, C, M, N, K, order, stream);
    default: return launch_final<T, 128, 1, CM, CN>(A, B, C, M, N, K, order, stream);
    }
}

template <typename T>
static int launch_sized(const T *A, const T *B, T *C, int M, int N, int K, cudaStream_t stream) {
    const int order = gemm06_order_from_env(GEMM06_ORDER_GROUPED);
    if (order < 0) return launch_unsupported("GEMM06_TILE_ORDER must be rows, grouped or hilbert");
    int tile = forced_tile();
    if (tile < 0)
        return launch_unsupported("GEMM06_FINAL_TILE must be 128x256, 128x128 or 64x128");
    const int cn = cluster_n_from_env();
    if (cn < 0) return launch_unsupported("GEMM06_FINAL_CLUSTER must be 2x1 or 2x2");
    if (tile == 0) tile = pick_tile(M, N, cn);
    return cn == 2 ? launch_tile<T, 2, 2>(tile, A, B, C, M, N, K, order, stream)
                   : launch_tile<T, 2, 1>(tile, A, B, C, M, N, K, order, stream);
}

extern "C" int STAGE(gemm06_final)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                   int K, cudaStream_t stream) {
    return launch_sized<bf16_t>(A, B, C, M, N, K, stream);
}

extern "C" int STAGE(gemm06_final_f16)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                       int K, cudaStream_t stream) {
    return launch_sized<f16_t>(A, B, C, M, N, K, stream);
}
