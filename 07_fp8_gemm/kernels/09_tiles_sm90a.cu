/* Stage 9 — a tile per size: stage 8's kernel for the shapes where its one tile leaves SMs idle.
 *
 * Why: stage 8 is at the library where C has many 128 x 128 tiles (M = 4096, the squares) and at
 * 0.71-0.91 of it at M = 64 and 128, the inference shapes. There C has one row of 128 x 128
 * tiles, so each cluster's second block has no rows and only loads B for its partner, and the
 * tiles are few (64 x 2112 x 7168: 17 for 66 SM pairs, each running all 56 K tiles).
 *
 * What changes from stage 8 (the K loop, the producer and the store are stage 8's):
 *  - Two tiles from one kernel template over the consumers: 128 x 128 (two, stage 8's) and
 *    64 x 128 (one; its slot is 24 KiB, so 8 fit), the ring, the staging and the shared memory
 *    sized from the tile (tiles07_shape). Picked per launch as chapter 06's stage 8 does: the
 *    fewest rounds x the tile's rows / its rate, each rate measured with the tile forced at
 *    8192^3 (pick_tile). A unit is what a cluster takes from the tile order (a pair of tiles, a
 *    tile when blocks run alone, a piece of one under the K split); a round, one unit on every
 *    cluster.
 *  - One tile row, one block: where C has one row of a tile (M <= 64 for 64 x 128, M <= 128
 *    for 128 x 128) the clusters are of one block (CL = 1, cluster_for). A partner block there
 *    has its band past M and only loads half of B for the other, so every cluster tied up two
 *    SMs for one tile's math; alone, each block loads all of B's tile and every SM computes.
 *  - Few tiles, K split: where the 64 x 128 tile's units (a pair of tiles, or one alone) number
 *    at most a quarter of the SMs, each tile's K tiles are cut into pieces, each a unit of its
 *    own on a separate cluster, and the pieces' fp32 sums added by the last one (tiles07_split
 *    and merge_pieces below; split_ways and the workspace in ../split07_sm90a.cuh, which stages
 *    10-13 include too).
 * The three are one idea, more units than there are SMs at small M, and the README measures each
 * in one run (GEMM07_FINAL_TILE, GEMM07_FINAL_CLUSTER and GEMM07_FINAL_SPLIT force them).
 *
 * What to look for. The table: M = 64 and 128 against stage 8; the squares and M = 4096 as
 * stage 8 (the 128 x 128 tile in pairs is stage 8's kernel, its K loop instruction for
 * instruction).
 *
 * Shapes: any N; M % 4 == 0 (the TMA map of A's scales); K % 16 == 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "split07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BN 128      /* columns per tile: m64n128k32, two accumulator sets per consumer */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define CLUSTER 2   /* blocks per cluster, stacked along M, sharing B (but see CL) */

/* A tile of 64 * CONS rows by BN columns. Slots of operands (1024-aligned: the swizzle), as many
 * as fit (at most 8) beside the scales of their A rows (64 * CONS floats per slot, in a region of
 * their own after the ring) and the staging (two 8 KiB boxes per consumer, 1024-aligned for the
 * TMA store's swizzle). */
template <int CONS, int CL = CLUSTER>
struct tiles07_shape {
    static constexpr int bm = 64 * CONS, threads = 128 * (1 + CONS);
    static constexpr int a_bytes = bm * BK, b_half_bytes = BN / CL * BK;
    static constexpr int slot_bytes = (bm + BN) * BK;
    static constexpr int scale_bytes = bm * 4;
    static constexpr int staging_bytes = 2 * 8192; /* two 64-column boxes a consumer */
    /* the opt-in limit less static shared memory, rounded */
    static constexpr int budget = 227 * 1024 - 2048;
    static constexpr int fit = (budget - CONS * staging_bytes - 1024) / (slot_bytes + scale_bytes);
    static constexpr int depth = fit < 8 ? fit : 8;
    static constexpr int scales_at = depth * slot_bytes; /* from the ring's start */
    static constexpr int staging_at = (scales_at + depth * scale_bytes + 1023) / 1024 * 1024;
    static constexpr int smem = staging_at + CONS * staging_bytes + 1024;
};
static_assert(tiles07_shape<2>::depth == 5 && tiles07_shape<1>::depth == 8, "slots");
static_assert(tiles07_shape<2>::smem <= GEMM07_SMEM_FINAL &&
                  tiles07_shape<1>::smem <= GEMM07_SMEM_FINAL,
              "gemm07.h agrees");

/* A K split for few tiles (the launcher's split_ways): `ways` units per tile, unit u doing K
 * tiles split_end(u % ways - 1) .. split_end(u % ways) - 1 of tile u / ways; the workspace holds
 * every unit's fp32 sums, one counter per warp of a tile. ways = 1: no split, no workspace. */
struct tiles07_split {
    int ways;
    float4 *partials;
    int *counters;
};

/* CL: blocks per cluster, 2 (stacked along M, sharing B) or 1 (a tile of which C has one row:
 * 64 x 128 at M <= 64, 128 x 128 at M <= 128; a second block there would only load half of B
 * for its partner, its own band past M, so every cluster would tie up two SMs for one tile's math; alone, each block
 * loads all of B's tile and every SM computes). */
template <int CONS, int CL, bool SPLIT>
static __global__ void __launch_bounds__(tiles07_shape<CONS, CL>::threads, 1)
    tiles07_kernel(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sa,
                   const __grid_constant__ CUtensorMap map_d, bf16_t *__restrict__ D, int M, int N,
                   int K, const float *__restrict__ scale_b,
                   const gemm06_tiles pairs, const int tma_store, const tiles07_split split) {
    using S = tiles07_shape<CONS, CL>;
    constexpr int DEPTH = S::depth, BM = S::bm;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    /* the store handed to a warp of the producer warpgroup (HANDOFF): a consumer's boxes staged,
     * and read out again by the TMA stores */
    __shared__ __align__(8) unsigned long long staged[CONS], unstaged[CONS];
    unsigned char *base = align1024(smem);
    /* through a shuffle: ptxas cannot recompute it from the shared window's base then, which it
     * did in the K loop, a dozen instructions a K tile, rather than keep it */
    const unsigned ring = __shfl_sync(0xffffffffu, smem_addr(base), 0);
    /* Broadcast from lane 0: ptxas then knows it is warp-uniform and keeps what derives from it
     * (the consumer's shared-memory addresses, its wgmma descriptors) in uniform registers,
     * not in per-thread ones copied over (R2UR) before every wgmma. */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK, k_tiles4 = (k_tiles + 3) / 4 * 4;
    /* SPLIT false: ways is the constant 1 and the split's code compiles away (kept out of every
     * other launch: the merge's code alone, never run, cost 1-3% at 4096^3 and 8192^3) */
    const int ways = SPLIT ? split.ways : 1;
    const int n_pairs = pairs.tiles_m * pairs.tiles_n, n_units = n_pairs * ways;
    const int cluster_id = blockIdx.x / CL, clusters = gridDim.x / CL;
    constexpr unsigned expect = S::slot_bytes + S::scale_bytes;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        tma_prefetch_map(&map_sa);
        if (tma_store) tma_prefetch_map(&map_d);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CL * CONS * 4);
        }
        for (int c = 0; c < CONS; c++) {
            mbarrier_init(smem_addr(&staged[c]), 128);
            mbarrier_init(smem_addr(&unstaged[c]), 1);
        }
        fence_mbarrier_init_cluster();
    }
    cluster_arrive_relaxed();
    cluster_wait();

    /* The store handed off (one band a consumer, no K split, C stored by TMA): each consumer
     * stages its tile's boxes, fences them into the async proxy and arrives on staged[c]; one
     * thread of the producer warpgroup's second warp (otherwise idle) waits for them, stores
     * them by TMA, waits until they are read and arrives on unstaged[c], which a consumer waits
     * on before it stages its next tile. The consumers pay neither the named barriers nor the
     * bulk groups' wait: a consumer of one band waited on both, and the tensor core with it,
     * its partner storing at the same moment. */
    constexpr bool HANDOFF = !SPLIT; /* a K split's last piece stores from registers */
    const bool handoff = HANDOFF && tma_store;
    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (handoff && threadIdx.x == 32) {
            unsigned p = 0;
            for (int u = cluster_id; u < n_units; u += clusters, p ^= 1) {
                int pm, tn;
                gemm06_tile_at(pairs, u, pm, tn);
                const int m0 = (pm * CL + (int)rank) * BM;
#pragma unroll
                for (int c = 0; c < CONS; c++) {
                    const unsigned at = ring + S::staging_at + c * S::staging_bytes;
                    const int row0 = m0 + 64 * c;
                    mbarrier_wait_parity(smem_addr(&staged[c]), p);
                    tma_store_2d_if(&map_d, at, tn * BN, row0, row0 < M);
                    tma_store_2d_if(&map_d, at + 8192, tn * BN + 64, row0, row0 < M);
                    tma_store_commit();
                }
                tma_store_wait<0>();
#pragma unroll
                for (int c = 0; c < CONS; c++) mbarrier_arrive(smem_addr(&unstaged[c]));
            }
        }
        if (threadIdx.x == 0) {
            int it = 0;
            for (int u = cluster_id; u < n_units; u += clusters) {
                int pm, tn;
                gemm06_tile_at(pairs, u / ways, pm, tn);
                const int m0 = (pm * CL + (int)rank) * BM, n0 = tn * BN;
                const int t1 = split_end(k_tiles, ways, u % ways);
                for (int t = split_end(k_tiles, ways, u % ways - 1); t < t1;
                     t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * S::slot_bytes, bar = smem_addr(&full[s]);
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    mbarrier_arrive_expect_tx(bar, expect);
                    if constexpr (CL == 1) { /* alone: all of B's tile */
                        tma_load_2d(a, &map_a, bar, t * BK, m0);
                        tma_load_2d(a + S::a_bytes, &map_b, bar, t * BK, n0);
                    } else {
                        tma_load_2d(a, &map_a, bar, t * BK, m0);
                        tma_load_2d_multicast(a + S::a_bytes + rank * S::b_half_bytes, &map_b,
                                              bar, t * BK, n0 + (int)rank * (BN / CL),
                                              (1u << CL) - 1);
                    }
                    tma_load_2d(ring + S::scales_at + s * S::scale_bytes, &map_sa, bar, m0, t);
                }
            }
            /* The tail (chapter 06, stage 6): every slot of ours handed back by both blocks'
             * consumers, so no multicast of the partner's can still land here. */
            for (int i = 0; i < DEPTH; i++, it++)
                mbarrier_wait_parity(smem_addr(&empty[it % DEPTH]), ((it / DEPTH) & 1) ^ 1);
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const int t128 = threadIdx.x % 128;
        const bool signals = t128 % 32 == 0;
        const int row = 16 * (t128 / 32) + (t128 % 32) / 4; /* in its 64 rows; and row + 8 */
        const unsigned staging = ring + S::staging_at + c * S::staging_bytes;
        /* slot 0's A and B tiles; every other operand's descriptor is an add away */
        const uint64_t ring_a = desc_sw128(ring), ring_b = desc_sw128(ring + S::a_bytes);
        /* The barriers' and the scales' shared addresses, made once (through a shuffle, like
         * the ring's): smem_addr costs an S2UR of the CTA's rank and more wherever it runs. */
        const unsigned full0 = __shfl_sync(0xffffffffu, smem_addr(&full[0]), 0);
        const unsigned empty0 = __shfl_sync(0xffffffffu, smem_addr(&empty[0]), 0);
        auto release = [&](int s) { /* no branch: see mbarrier_arrive_remote_if */
#pragma unroll
            for (unsigned r = 0; r < CL; r++)
                mbarrier_arrive_remote_if(mapa_shared(empty0 + 8 * s, r), signals);
        };
        /* K split (tiles07_split): each warp writes its band's fp32 sums to the unit's slot
         * (float4s, lane after lane) and counts itself on the tile's counter; the warp that
         * arrives last adds the pieces 0, 1, ... in that order, each read back from the
         * workspace (its own too: the bits do not depend on which came last), sets the counter
         * back to 0 for the next launch, and stores its rows. Per warp: the rows are its own,
         * so no other warp is waited for, and the store is store_fragment's (store_boxes needs
         * the whole warpgroup at its named barriers). */
        const int warp = t128 / 32, lane = t128 % 32;
        auto merge_pieces = [&](float(&acc)[BN / 2], int u) {
            const int tile = u / ways, piece = u % ways;
            const int who = ((int)rank * CONS + c) * 4 + warp;
            constexpr int PER = CL * CONS * 4; /* warps of a cluster's tile */
            auto slot = [&](int q) {
                return split.partials + ((size_t)(tile * ways + q) * PER + who) *
                                            (BN / 8) * 32 + lane;
            };
            float4 *mine = slot(piece);
#pragma unroll
            for (int q = 0; q < BN / 8; q++)
                mine[32 * q] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2],
                                           acc[4 * q + 3]);
            __threadfence();
            __syncwarp();
            int before = 0;
            int *counter = split.counters + (size_t)tile * PER + who;
            if (lane == 0) before = atomicAdd(counter, 1);
            before = __shfl_sync(0xffffffffu, before, 0);
            if (before != ways - 1) return false;
            if (lane == 0) atomicExch(counter, 0);
            __threadfence();
#pragma unroll
            for (int i = 0; i < BN / 2; i++) acc[i] = 0.0f;
            for (int q = 0; q < ways; q++) {
                const float4 *from = slot(q);
#pragma unroll
                for (int j = 0; j < BN / 8; j++) {
                    const float4 v = __ldcg(from + 32 * j);
                    acc[4 * j] += v.x, acc[4 * j + 1] += v.y;
                    acc[4 * j + 2] += v.z, acc[4 * j + 3] += v.w;
                }
            }
            return true;
        };
        /* The ring position, K tile after K tile across the tiles: slot and phase kept apart,
         * since it % DEPTH and (it / DEPTH) & 1 (DEPTH 5, say) cost a multiply-high and three
         * more instructions each, twice a K tile. */
        int slot = 0;
        unsigned phase = 0;
        auto advance = [](int &s, unsigned &p) {
            if (++s == DEPTH) s = 0, p ^= 1;
        };
        unsigned boxes = 0;
        /* B's scale of a unit's first K tile (BN = 128: one B block column a tile), issued at the
         * unit's start, before its first wait (stage 8). */
        /* Carried from unit to unit: the fp32 sums (store_unit's) and B's scales, the one the
         * next promotion takes and a pointer to the one after. The accumulators are the
         * unit's own: carried, ptxas spent 4-5 more instructions a K tile on descriptors. */
        float sum[BN / 2];
        float b_ahead = 1.0f;
        const float *b_next = scale_b;
        /* One K tile of this consumer's band from slot s into acc. */
        auto issue = [&](float(&acc)[BN / 2], int s) {
            const unsigned at = s * S::slot_bytes;
            const uint64_t a = desc_advance(ring_a, at + c * 64 * BK);
            const uint64_t b = desc_advance(ring_b, at);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++)
                wgmma_e4m3_e4m3_ss<BN>(acc, desc_advance(a, 32 * k), desc_advance(b, 32 * k),
                                       k > 0);
            wgmma_commit_group();
        };
        /* The factors of this thread's two rows (row, row + 8) for the K tile in slot s whose
         * B scale is b_scale: A's scale (beside the slot) times B's. */
        auto factors = [&](int s, float b_scale, float &f0, float &f1) {
            const unsigned rows = ring + S::scales_at + s * S::scale_bytes + c * 256;
            f0 = ld_shared_f32(rows + 4 * row) * b_scale;
            f1 = ld_shared_f32(rows + 4 * (row + 8)) * b_scale;
        };
        auto wait_full = [&](int s, unsigned p) { mbarrier_wait_parity_in_asm(full0 + 8 * s, p); };
        /* Tile t, in acc, done once at most `pending` groups (the newest) are still in flight:
         * its slot handed back, its sum promoted. With one pending, a K tile follows: its B
         * scale is loaded now, a K tile ahead (b_next: a pointer stepped by one, not
         * sb + t0 + t rebuilt as a 64-bit address every K tile). */
        auto finish = [&](float(&acc)[BN / 2], auto pending) {
            const int s = slot;
            float f0, f1;
            factors(s, b_ahead, f0, f1);
            if (decltype(pending)::value) b_ahead = __ldg(b_next++);
            wgmma_wait_group<decltype(pending)::value>();
            wgmma_fence_operands(acc);
            release(s);
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] += acc[i] * ((i / 2) % 2 ? f1 : f0);
            advance(slot, phase);
        };
        const std::integral_constant<int, 1> newest_pending;
        const std::integral_constant<int, 0> none_pending;
        /* Tile t is in acc: issue tile t + 1 into next, then finish t. */
        auto step = [&](float(&acc)[BN / 2], float(&next)[BN / 2]) {
            int s = slot;
            unsigned p = phase;
            advance(s, p);
            wait_full(s, p);
            issue(next, s);
            finish(acc, newest_pending);
        };
        /* K tiles 1 .. kt - 1 of a unit whose K tile 0 is in flight into `part`; at the end
         * every group is done. */
        auto rest_of_unit = [&](int kt, float(&part)[BN / 2], float(&other)[BN / 2]) {
            int t = 0;
            for (; t + 2 < kt; t += 2) {
                step(part, other);
                step(other, part);
            }
            if (t + 1 < kt) {
                step(part, other);
                finish(other, none_pending);
            } else {
                finish(part, none_pending);
            }
        };
        /* The unit's sums to D (its tile at row band0, column n0). */
        auto store_unit = [&](int u, int band0, int n0) {
            if (band0 >= M && !handoff) return; /* uniform over the block's consumer */
            if (ways > 1) { /* a K split: the last piece of the tile stores it */
                if (merge_pieces(sum, u)) store_fragment<BN, bf16_t>(sum, D, M, N, band0, n0);
                return;
            }
            if (!tma_store) {
                store_fragment<BN, bf16_t>(sum, D, M, N, band0, n0);
                return;
            }
            if constexpr (HANDOFF) { /* stage, fence, hand over (band0 >= M: not stored) */
                /* boxes: the count of hand-offs, whose parity the barriers' phase is */
                mbarrier_wait_parity(smem_addr(&unstaged[c]), (boxes & 1) ^ 1);
                stage_box<BN, bf16_t>(sum, staging, 0);
                stage_box<BN, bf16_t>(sum, staging + 8192, 1);
                fence_proxy_async_shared();
                mbarrier_arrive(smem_addr(&staged[c]));
                boxes++;
            }
        };
        for (int u = cluster_id; u < n_units; u += clusters) {
            /* unit u: its tile (pm, tn), K tiles t0 .. t0 + kt - 1 (all of them unless split),
             * and B's scales from its first */
            int pm, tn;
            gemm06_tile_at(pairs, u / ways, pm, tn);
            const int m0 = (pm * CL + (int)rank) * BM, n0 = tn * BN;
            const int t0 = split_end(k_tiles, ways, u % ways - 1);
            const int kt = split_end(k_tiles, ways, u % ways) - t0;
            b_ahead = __ldg(scale_b + (long)tn * k_tiles4 + t0); /* before the first wait */
            b_next = scale_b + (long)tn * k_tiles4 + t0 + 1;
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f;
            float part[BN / 2], other[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) part[i] = 0.0f;
            wgmma_fence_operands(part);
            /* This consumer's 64 rows. A band past M (a cluster's second block at M <= 64,
             * say): its slots handed back, nothing multiplied (stage 6). */
            const int band0 = m0 + 64 * c;
            if (band0 < M) {
                wait_full(slot, phase);
                issue(part, slot);
                rest_of_unit(kt, part, other);
            } else {
                for (int t = 0; t < kt; t++, advance(slot, phase)) {
                    mbarrier_wait_parity(full0 + 8 * slot, phase);
                    release(slot);
                }
            }
            store_unit(u, band0, n0);
        }
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

template <int CONS, int CL = CLUSTER, bool SPLIT = false>
static int launch_tiles07(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                          const float *scale_b, bf16_t *D, int M, int N, int K,
                          cudaStream_t stream) {
    using S = tiles07_shape<CONS, CL>;
    const long rows = (blocks_for(M, S::bm) + CL - 1) / CL, cols = blocks_for(N, BN);
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    if (M % 4)
        return launch_unsupported("M %% 4 != 0: the scale map's rows must be 16-byte multiples");
    /* The split decided first: without one, the kernel without the split's code takes over
     * before anything is encoded here. */
    launch_cfg cfg = {dim3(CL), dim3(S::threads), (size_t)S::smem, CL, stream};
    const void *kernel = (const void *)tiles07_kernel<CONS, CL, SPLIT>;
    static int resident; /* per instantiation */
    if (!resident) resident = launch_resident_clusters(kernel, &cfg);
    tiles07_split split = {1, NULL, NULL};
    if (SPLIT) {
        split.ways = split_ways(rows * cols, resident, CL, (K + BK - 1) / BK);
        constexpr int PER = CL * CONS * 4; /* warps of a cluster's tile */
        const size_t tiles = (size_t)rows * cols;
        if (split.ways > 1 &&
            !reserve_split(tiles * split.ways * PER * (BN / 8) * 32, tiles * PER))
            split.ways = 1;
        if (split.ways == 1) /* the kernel without the split's code */
            return launch_tiles07<CONS, CL, false>(A, B, scale_a, scale_b, D, M, N, K, stream);
        split.partials = split_partials, split.counters = split_counters;
    }
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, S::bm, BN / CL, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const CUtensorMap *map_sa = gemm07_scale_map_for(scale_a, M, K, S::bm, err, sizeof err);
    if (!map_sa) return launch_unsupported("%s", err);
    static const CUtensorMap unused = {};
    const CUtensorMap *map_d = NULL;
    if (N % 8 == 0 && (uintptr_t)D % 16 == 0 &&
        !(map_d = gemm06_store_map_for(D, M, N, err, sizeof err)))
        return launch_unsupported("%s", err);
    /* grouped order, 8 pair rows a group (chapter 06's height) */
    const gemm06_tiles pairs = {(int)rows, (int)cols, GEMM06_ORDER_GROUPED, 8};
    if (resident > 0)
        cfg.grid =
            dim3((unsigned)(CL * launch_balanced_grid(rows * cols * split.ways, resident)));
    return launch_kernel(tiles07_kernel<CONS, CL, SPLIT>, cfg, maps->map_a, maps->map_b,
                         *map_sa, map_d ? *map_d : unused, D, M, N, K, scale_b, pairs,
                         map_d != NULL, split);
}

/* The tile, as chapter 06's stage 8 picks it: the fewest rounds x tile area / rate, where a
 * round is one unit on every cluster (a pair of tiles, or one tile alone). Rates:
 * TFLOPS of each tile forced at 8192^3 on an H100 (sweep.sh; measured/sweeps_h100 at f22a6c9).
 * GEMM07_FINAL_TILE=128x128 or 64x128 forces one (read once); any other value is refused. */
enum { TILE_64 = 1, TILE_128 = 2, TILE_BAD = 0 };

/* A tile's cluster: 1 block where C has one row of such tiles (the kernel's comment on CL),
 * else 2. Measured (H100, 2026-11-24, NOTES.md "One tile row: the 64 x 128 tile alone"): alone,
 * 64 x 32768 x 512 went from 0.87x to 0.97x cuBLASLt and 64 x 24576 x 1536 from 1.03x to
 * 1.09x; the 128 x 128 tile alone at M <= 128, where the rounds favour it over the 64 x 128
 * pairs: 128 x 32768 x 512 0.984x -> 1.026x (NOTES.md "The 128 x 128 tile alone").
 * GEMM07_FINAL_CLUSTER=1 or 2 forces either (read once; the tests run both at every shape); 0
 * for any other value. */
static int cluster_for(int M, int rows) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_CLUSTER");
        forced = !e || !*e ? 3 : !strcmp(e, "1") ? 1 : !strcmp(e, "2") ? 2 : 0;
    }
    if (forced != 3) return forced;
    return M <= rows ? 1 : 2;
}

static int pick_tile(int M, int N) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_TILE");
        forced = !e || !*e ? 4
                 : !strcmp(e, "128x128") ? TILE_128
                 : !strcmp(e, "64x128")  ? TILE_64
                                         : TILE_BAD;
    }
    if (forced != 4) return forced;
    const long cols = blocks_for(N, BN);
    static const int rows[2] = {64, 128};
    static const double rate[2] = {980, 1208};
    double cost[2];
    for (int i = 0; i < 2; i++) {
        const int cl = cluster_for(M, rows[i]) == 1 ? 1 : CLUSTER;
        const long slots = launch_sms() / cl;
        const long pairs = (blocks_for(M, rows[i]) + cl - 1) / cl * cols;
        cost[i] = (double)((pairs + slots - 1) / slots) * rows[i] / rate[i];
    }
    return cost[1] < cost[0] ? TILE_128 : TILE_64;
}

extern "C" int STAGE(gemm07_tiles)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                   const float *scale_b, bf16_t *D, int M, int N, int K,
                                   cudaStream_t stream) {
    switch (pick_tile(M, N)) {
    case TILE_64:
        if (!cluster_for(M, 64)) return launch_unsupported("GEMM07_FINAL_CLUSTER must be 1 or 2");
        return cluster_for(M, 64) == 1
                   ? launch_tiles07<1, 1, true>(A, B, scale_a, scale_b, D, M, N, K, stream)
                   : launch_tiles07<1, 2, true>(A, B, scale_a, scale_b, D, M, N, K, stream);
    case TILE_128:
        if (!cluster_for(M, 128)) return launch_unsupported("GEMM07_FINAL_CLUSTER must be 1 or 2");
        return cluster_for(M, 128) == 1
                   ? launch_tiles07<2, 1>(A, B, scale_a, scale_b, D, M, N, K, stream)
                   : launch_tiles07<2, 2>(A, B, scale_a, scale_b, D, M, N, K, stream);
    default: return launch_unsupported("GEMM07_FINAL_TILE must be 128x128 or 64x128");
    }
}
