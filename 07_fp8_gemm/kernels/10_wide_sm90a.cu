/* Stage 10 — the wide tile sharing A: 256 x 128 tiles, the cluster's two blocks side by side
 * along N, each loading half of A's K tile and multicasting it to both.
 *
 * Why: at M = 4096 and the squares stage 9 runs stage 8's 128 x 128 pairs, stacked along M and
 * sharing B. Per K tile such a cluster asks L2 for 48 KiB (two A tiles, one B tile) for
 * 256 x 128 outputs, 1.5 bytes an output and K tile, and stays at the library's level there.
 *
 * What changes from stage 9:
 *  - The tile: 256 x 128, two consumers of two 64-row bands each (WAVES = 2). A consumer holds
 *    128 registers of sums and one 64-register accumulator (a second would not fit in 232), so
 *    each band's wgmmas are waited for before the band is promoted (one_acc).
 *  - The cluster (SHARE_A): each block loads half of A's 256 rows, multicast into both, and all
 *    of its own 128 rows of B: 64 KiB for 256 x 256 outputs, 1.0 byte an output and K tile.
 *    Three 48 KiB slots fit; a consumer's two bands are staged together and handed off at once.
 *  - The turnaround (TURNS): with one accumulator the tensor core is busy only while the other
 *    consumer's group covers a consumer's wait, promotion and next issue. So the wait for the
 *    next K tile's slot comes at the end of the body, after the promotion, where ptxas issues
 *    its try_wait among the FFMAs; no band is tested against M where all are inside it (the
 *    branch would end that straight-line code); and the waits sleep (suspend-time hint) rather
 *    than spin on issue slots the wgmma warps need. Measured (H100, 2026-11-27, A/B, NOTES.md
 *    "The wide tile's turnaround"): 8192^3 block-scaled 1.024x -> 1.083x cuBLASLt; tensor pipe
 *    active at 4096 x 7168 x 16384 84% -> 91% (DeepGEMM's 91%).
 *  - The rule rates it by its TFLOPS at 8192^3 and takes it from 8 K tiles: below, its 3 slots
 *    fill and drain once a tile (4096 x 32768 x 512: 0.98x cuBLASLt against 1.03x).
 *
 * What to look for. SASS: A's UTMALDG.2D.MULTICAST; the try_wait among the promotion's FFMAs
 * (sass_checks.sh checks the final stage's). The table: the squares and M = 4096 against stage 9.
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

/* A tile of 64 * CONS * WAVES rows by BN columns. Slots of operands (1024-aligned: the
 * swizzle), as many as fit (at most 8) beside the scales of their A rows (64 * CONS * WAVES
 * floats per slot, in a region of their own after the ring) and the staging (two 8 KiB boxes per
 * band of a consumer, 1024-aligned for the TMA store's swizzle). */
template <int CONS, int WAVES, int CL = CLUSTER, bool SHARE_A = false>
struct wide07_shape {
    static constexpr int bm = 64 * CONS * WAVES, threads = 128 * (1 + CONS);
    static constexpr int a_bytes = bm * BK, b_half_bytes = BN / CL * BK;
    static constexpr int a_half_bytes = bm / CL * BK; /* SHARE_A: each block's part of A */
    static constexpr int slot_bytes = (bm + BN) * BK;
    static constexpr int scale_bytes = bm * 4;
    /* C leaves in two 64-column boxes of 8 KiB a band */
    static constexpr int band_staging = 2 * 8192;
    /* One accumulator a consumer beside its sums (the wide tiles: two bands; a second set would
     * not fit), each K tile's wgmmas waited for before its promotion; else two in turn. */
    static constexpr bool one_acc = WAVES > 1;
    /* SHARE_A (two bands a consumer, handed off together): a band's boxes each */
    static constexpr int staging_bytes = (SHARE_A ? WAVES : 1) * band_staging;
    /* the opt-in limit less static shared memory, rounded */
    static constexpr int budget = 227 * 1024 - 2048;
    static constexpr int fit = (budget - CONS * staging_bytes - 1024) / (slot_bytes + scale_bytes);
    static constexpr int depth = fit < 8 ? fit : 8;
    static constexpr int scales_at = depth * slot_bytes; /* from the ring's start */
    static constexpr int staging_at = (scales_at + depth * scale_bytes + 1023) / 1024 * 1024;
    static constexpr int smem = staging_at + CONS * staging_bytes + 1024;
};
static_assert(wide07_shape<2, 1>::depth == 5 && wide07_shape<1, 1>::depth == 8 &&
                  wide07_shape<2, 2>::depth == 3,
              "slots");
static_assert(wide07_shape<2, 1>::smem <= GEMM07_SMEM_FINAL &&
                  wide07_shape<1, 1>::smem <= GEMM07_SMEM_FINAL &&
                  wide07_shape<2, 2>::smem <= GEMM07_SMEM_FINAL,
              "gemm07.h agrees");

/* A K split for few tiles (the launcher's split_ways): `ways` units per tile, unit u doing K
 * tiles split_end(u % ways - 1) .. split_end(u % ways) - 1 of tile u / ways; the workspace holds
 * every unit's fp32 sums, one counter per warp of a tile. ways = 1: no split, no workspace. */
struct wide07_split {
    int ways;
    float4 *partials;
    int *counters;
};

/* CL: blocks per cluster, 2 (stacked along M, sharing B) or 1 (the 64 x 128 tile when C has one
 * tile row, M <= 64: a second block there would only load half of B for its partner, its own
 * band past M, so every cluster would tie up two SMs for one tile's math; alone, each block
 * loads all of B's tile and every SM computes). */
template <int CONS, int WAVES, int CL, bool SPLIT, bool SHARE_A>
static __global__ void __launch_bounds__(wide07_shape<CONS, WAVES, CL, SHARE_A>::threads, 1)
    wide07_kernel(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sa,
                   const __grid_constant__ CUtensorMap map_d, bf16_t *__restrict__ D, int M, int N,
                   int K, const float *__restrict__ scale_b,
                   const gemm06_tiles pairs, const int tma_store, const wide07_split split) {
    using S = wide07_shape<CONS, WAVES, CL, SHARE_A>;
    static_assert(!SHARE_A || (CL == 2 && !SPLIT), "A shared: pairs of 128 columns");
    /* A pair's tile (pm, tn) as this block's first row and column: SHARE_A, the two blocks side
     * by side along N sharing A; else stacked along M sharing B. */
    auto row_of = [&](int pm, unsigned r) { return (SHARE_A ? pm : pm * CL + (int)r) * S::bm; };
    auto col_of = [&](int tn, unsigned r) { return (SHARE_A ? tn * CL + (int)r : tn) * BN; };
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
    /* TURNS: one accumulator a consumer, the two consumers taking turns on the tensor core (the
     * 256 x 128 tile sharing A), so each consumer's turnaround between K tiles is on the tensor
     * core's path (the K loop's wait_next and all_bands below). */
    constexpr bool TURNS = S::one_acc && SHARE_A;
    /* These tiles wait with a suspend-time hint (the producer for empty slots, the
     * consumers for full ones and for their staging): a warp that would spin on try_wait sleeps
     * until the phase completes, its issue slots left to the consumers' wgmmas and promotions.
     * Measured (H100, one session): +2.5-3% at the M = 4096 shapes the wide tile runs and
     * 8192^3; the other tiles gained nothing and the 64 x 128 ones lost up to 1%. */
    auto wait_phase = [](unsigned bar, unsigned p) {
        if constexpr (TURNS)
            mbarrier_wait_parity_sleep(bar, p);
        else
            mbarrier_wait_parity(bar, p);
    };

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
    constexpr bool HANDOFF = !SPLIT;
    const bool handoff = HANDOFF && tma_store;
    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (handoff && threadIdx.x == 32) {
            unsigned p = 0;
            for (int u = cluster_id; u < n_units; u += clusters, p ^= 1) {
                int pm, tn;
                gemm06_tile_at(pairs, u, pm, tn);
                const int m0 = row_of(pm, rank), n0 = col_of(tn, rank);
#pragma unroll
                for (int c = 0; c < CONS; c++) {
                    wait_phase(smem_addr(&staged[c]), p);
#pragma unroll
                    for (int w = 0; w < WAVES; w++) { /* a consumer's bands, staged together */
                        const unsigned at =
                            ring + S::staging_at + c * S::staging_bytes + w * S::band_staging;
                        const int row0 = m0 + 64 * (c * WAVES + w);
#pragma unroll
                        for (int b = 0; b < 2; b++)
                            tma_store_2d_if(&map_d, at + b * 8192, n0 + 64 * b, row0, row0 < M);
                    }
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
                const int m0 = row_of(pm, rank), n0 = col_of(tn, rank);
                const int t1 = split_end(k_tiles, ways, u % ways);
                for (int t = split_end(k_tiles, ways, u % ways - 1); t < t1;
                     t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * S::slot_bytes, bar = smem_addr(&full[s]);
                    wait_phase(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    mbarrier_arrive_expect_tx(bar, expect);
                    if constexpr (SHARE_A) { /* half of A each, multicast; all of B's own tile */
                        tma_load_2d_multicast(a + rank * S::a_half_bytes, &map_a, bar, t * BK,
                                              m0 + (int)rank * (BM / CL), (1u << CL) - 1);
                        tma_load_2d(a + S::a_bytes, &map_b, bar, t * BK, n0);
                    } else if constexpr (CL == 1) {
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
                wait_phase(smem_addr(&empty[it % DEPTH]), ((it / DEPTH) & 1) ^ 1);
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
        /* K split (wide07_split): each warp writes its band's fp32 sums to the unit's slot
         * (float4s, lane after lane) and counts itself on the tile's counter; the warp that
         * arrives last adds the pieces 0, 1, ... in that order, each read back from the
         * workspace (its own too: the bits do not depend on which came last), sets the counter
         * back to 0 for the next launch, and stores its rows. Per warp: the rows are its own,
         * so no other warp is waited for, and the store is store_fragment's (store_boxes needs
         * the whole warpgroup at its named barriers). */
        const int warp = t128 / 32, lane = t128 % 32;
        auto merge_pieces = [&](float(&acc)[BN / 2], int u, int w) {
            const int tile = u / ways, piece = u % ways;
            const int who = (((int)rank * CONS + c) * WAVES + w) * 4 + warp;
            constexpr int PER = CL * CONS * WAVES * 4; /* warps of a cluster's tile */
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
        /* B's scale of a unit's first K tile, issued at the unit's start, before its first wait
         * (stage 8). */
        /* B's 128-column block of a tile at column n0; SHARE_A: a partner block past N (its
         * loads zero-filled, its stores clipped) reads the last block's scales, not past them */
        auto b_column = [&](int n0) { return min(n0 / BN, (N - 1) / BN); };
        /* Carried from unit to unit: the fp32 sums (store_unit's) and B's scales, the one the
         * next promotion takes and a pointer to the one after. The accumulators are the
         * unit's own: carried, ptxas spent 4-5 more instructions a K tile on descriptors. */
        float sum[WAVES][BN / 2];
        float b_ahead = 1.0f;
        const float *b_next = scale_b;
        /* One K tile of band `band` (of the block's 64-row bands) from slot s into acc. */
        auto issue = [&](float(&acc)[BN / 2], int s, int band) {
            const unsigned at = s * S::slot_bytes;
            const uint64_t a = desc_advance(ring_a, at + band * 64 * BK);
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
        auto factors = [&](int s, int band, float b_scale, float &f0, float &f1) {
            const unsigned rows = ring + S::scales_at + s * S::scale_bytes + band * 256;
            f0 = ld_shared_f32(rows + 4 * row) * b_scale;
            f1 = ld_shared_f32(rows + 4 * (row + 8)) * b_scale;
        };
        auto promote = [&](float(&dst)[BN / 2], const float(&acc)[BN / 2], float f0,
                           float f1) {
#pragma unroll
            for (int i = 0; i < BN / 2; i++) dst[i] += acc[i] * ((i / 2) % 2 ? f1 : f0);
        };
        /* Two accumulators in turn: K tile t + 1 is issued before tile t is promoted, so the
         * tensor core multiplies while this warpgroup adds (wait_group<1>: all but the newest
         * group done). With one, each promotion is a gap in the tensor core's work unless the
         * other consumer happens to fill it, and the two consumers, started together, stay in
         * step. */
        auto wait_full = [&](int s, unsigned p) {
            if constexpr (TURNS)
                mbarrier_wait_parity_sleep(full0 + 8 * s, p);
            else
                mbarrier_wait_parity_in_asm(full0 + 8 * s, p);
        };
        /* Tile t, in acc, done once at most `pending` groups (the newest) are still in flight:
         * its slot handed back, its sum promoted. With one pending, a K tile follows: its B
         * scale is loaded now, a K tile ahead (b_next: a pointer stepped by one, not
         * sb + t0 + t rebuilt as a 64-bit address every K tile). */
        auto finish = [&](float(&acc)[BN / 2], auto pending) {
            const int s = slot;
            float f0, f1;
            factors(s, c, b_ahead, f0, f1);
            if (decltype(pending)::value) b_ahead = __ldg(b_next++);
            wgmma_wait_group<decltype(pending)::value>();
            wgmma_fence_operands(acc);
            release(s);
            promote(sum[0], acc, f0, f1);
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
            issue(next, s, c);
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
#pragma unroll
            for (int w = 0; w < WAVES; w++) {
                const int row0 = band0 + 64 * w;
                if (row0 >= M && !handoff) continue; /* uniform over the block's consumer */
                if (ways > 1) { /* a K split: the last piece of the tile stores it */
                    if (merge_pieces(sum[w], u, w))
                        store_fragment<BN, bf16_t>(sum[w], D, M, N, row0, n0);
                    continue;
                }
                if (!tma_store) {
                    store_fragment<BN, bf16_t>(sum[w], D, M, N, row0, n0);
                    continue;
                }
                if constexpr (HANDOFF) { /* stage, fence, hand over (row0 >= M: not stored) */
                    /* boxes: here the count of hand-offs, whose parity the barriers' phase is */
                    const unsigned at = staging + w * S::band_staging;
                    if (w == 0) wait_phase(smem_addr(&unstaged[c]), (boxes & 1) ^ 1);
                    stage_box<BN, bf16_t>(sum[w], at, 0);
                    stage_box<BN, bf16_t>(sum[w], at + 8192, 1);
                    if (w == WAVES - 1) {
                        fence_proxy_async_shared();
                        mbarrier_arrive(smem_addr(&staged[c]));
                        boxes++;
                    }
                }
            }
        };
        /* unit u: its tile (pm, tn), first row, K tiles t0 .. t0 + kt - 1 (all of them unless
         * split), and B's scales from its first */
        struct unit_at {
            int n0, m0, t0, kt;
        };
        auto begin_unit = [&](int u) {
            unit_at a;
            int pm, tn;
            gemm06_tile_at(pairs, u / ways, pm, tn);
            a.m0 = row_of(pm, rank), a.n0 = col_of(tn, rank);
            a.t0 = split_end(k_tiles, ways, u % ways - 1);
            a.kt = split_end(k_tiles, ways, u % ways) - a.t0;
            b_ahead = __ldg(scale_b + (long)b_column(a.n0) * k_tiles4 + a.t0);
            b_next = scale_b + (long)b_column(a.n0) * k_tiles4 + a.t0 + 1;
#pragma unroll
            for (int w = 0; w < WAVES; w++)
#pragma unroll
                for (int i = 0; i < BN / 2; i++) sum[w][i] = 0.0f;
            return a;
        };
        for (int u = cluster_id; u < n_units; u += clusters) {
            const unit_at a = begin_unit(u);
            float part[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) part[i] = 0.0f;
            wgmma_fence_operands(part);
            /* This consumer's rows: WAVES bands of 64, from m0 + 64 * WAVES * c. A band past M
             * (a cluster's second block at M <= 64, say) has nothing to compute or store. */
            const int band0 = a.m0 + 64 * WAVES * c;
            /* Two accumulators in turn where this consumer has rows (compiled only where the
             * registers hold two sets, !one_acc); else the one-accumulator loop below. */
            if (!S::one_acc && band0 < M) {
                if constexpr (!S::one_acc) {
                    float other[BN / 2];
                    wait_full(slot, phase);
                    issue(part, slot, c);
                    rest_of_unit(a.kt, part, other);
                }
            } else {
                const float *b_at = b_next; /* stepped, as b_next above */
                const int t_end = a.t0 + a.kt;
                /* One K tile, band after band (one accumulator: a band's wgmmas are waited
                 * for before its promotion). The wide tile waits for the next K tile's slot at
                 * the end of the body (wait_next), after the promotion, in the same
                 * straight-line code: ptxas then issues the wait's first try_wait among the
                 * promotion's FFMAs and tests its answer after them, so the try_wait's round
                 * trip leaves the path from a band's last wgmma to the next band's first. At
                 * the top of the body (wait_own), behind the loop's back edge, it cannot be
                 * moved there. For the same reason the body tests no band against M where all
                 * of the consumer's bands are inside it (all_bands): a test would end the
                 * straight-line code before the wait. */
                auto k_tile = [&](int t, auto wait_own, auto wait_next, auto all_bands) {
                    constexpr bool ALL = decltype(all_bands)::value;
                    const int s = slot;
                    const float b_scale = b_ahead;
                    if ((ALL || band0 < M) && t + 1 < t_end) b_ahead = __ldg(b_at);
                    if (decltype(wait_own)::value) wait_phase(full0 + 8 * s, phase);
#pragma unroll
                    for (int w = 0; w < WAVES; w++) {
                        if (!ALL && band0 + 64 * w >= M) continue;
                        const int band = c * WAVES + w;
                        issue(part, s, band);
                        float f0, f1;
                        factors(s, band, b_scale, f0, f1);
                        wgmma_wait_group<0>();
                        wgmma_fence_operands(part);
                        if (w == WAVES - 1) release(s);
                        promote(sum[w], part, f0, f1);
                    }
                    if (!ALL && band0 + 64 * (WAVES - 1) >= M) release(s); /* last band skipped */
                    b_at++;
                    advance(slot, phase);
                    if (decltype(wait_next)::value) wait_phase(full0 + 8 * slot, phase);
                };
                const std::integral_constant<bool, true> yes;
                const std::integral_constant<bool, false> no;
                constexpr bool ROTATE = TURNS, BY_BANDS = TURNS;
                auto tiles = [&](auto all_bands) {
                    if constexpr (ROTATE) { /* the unit's last K tile waits for no next slot:
                                             * the block's last unit has none that will fill */
                        if (a.kt > 0) wait_phase(full0 + 8 * slot, phase);
                        int t = a.t0;
                        for (; t + 1 < t_end; t++) k_tile(t, no, yes, all_bands);
                        if (t < t_end) k_tile(t, no, no, all_bands);
                    } else {
                        for (int t = a.t0; t < t_end; t++) k_tile(t, yes, no, all_bands);
                    }
                };
                if (BY_BANDS && band0 + 64 * WAVES <= M)
                    tiles(std::integral_constant<bool, BY_BANDS>());
                else
                    tiles(no);
            }
            store_unit(u, band0, a.n0);
        }
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

template <int CONS, int WAVES, int CL = CLUSTER, bool SPLIT = false, bool SHARE_A = false>
static int launch_wide07(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                          const float *scale_b, bf16_t *D, int M, int N, int K,
                          cudaStream_t stream) {
    using S = wide07_shape<CONS, WAVES, CL, SHARE_A>;
    const long rows = SHARE_A ? blocks_for(M, S::bm) : (blocks_for(M, S::bm) + CL - 1) / CL;
    const long cols = SHARE_A ? (blocks_for(N, BN) + CL - 1) / CL : blocks_for(N, BN);
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    if (M % 4)
        return launch_unsupported("M %% 4 != 0: the scale map's rows must be 16-byte multiples");
    /* The split decided first: without one, the kernel without the split's code takes over
     * before anything is encoded here. */
    launch_cfg cfg = {dim3(CL), dim3(S::threads), (size_t)S::smem, CL, stream};
    const void *kernel = (const void *)wide07_kernel<CONS, WAVES, CL, SPLIT, SHARE_A>;
    static int resident; /* per instantiation */
    if (!resident) resident = launch_resident_clusters(kernel, &cfg);
    wide07_split split = {1, NULL, NULL};
    if (SPLIT) {
        split.ways = split_ways(rows * cols, resident, CL, (K + BK - 1) / BK);
        constexpr int PER = CL * CONS * WAVES * 4; /* warps of a cluster's tile */
        const size_t tiles = (size_t)rows * cols;
        if (split.ways > 1 &&
            !reserve_split(tiles * split.ways * PER * (BN / 8) * 32, tiles * PER))
            split.ways = 1;
        if (split.ways == 1) /* the kernel without the split's code */
            return launch_wide07<CONS, WAVES, CL, false>(A, B, scale_a, scale_b, D, M,
                                                                   N, K, stream);
        split.partials = split_partials, split.counters = split_counters;
    }
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, SHARE_A ? S::bm / CL : S::bm,
                             SHARE_A ? BN : BN / CL, err, sizeof err);
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
    return launch_kernel(wide07_kernel<CONS, WAVES, CL, SPLIT, SHARE_A>, cfg, maps->map_a,
                         maps->map_b, *map_sa, map_d ? *map_d : unused, D, M, N, K,
                         scale_b, pairs, map_d != NULL, split);
}

/* The tile, as chapter 06's stage 8 picks it: the fewest rounds x tile area / rate, where a
 * round is one unit on every cluster. Tiles (consumers x bands of 64 rows each):
 * 256 x 128 (2 x 2), 128 x 128 (2 x 1), 64 x 128 (1 x 1). Rates: TFLOPS of each tile forced at
 * 8192^3 on an H100 (sweep.sh, 2026-11-23; measured/sweeps_h100 at f22a6c9), but the wide
 * tile's (below). GEMM07_FINAL_TILE=256x128a (the wide tile, A shared), 128x128 or 64x128
 * forces one (read once); any other value is refused. */
enum { TILE_64 = 1, TILE_128 = 2, TILE_256A = 6, TILE_BAD = 0 };

/* A tile's cluster: 1 block where C has one row of such tiles (the kernel's comment on CL),
 * else 2. GEMM07_FINAL_CLUSTER=1 or 2 forces either (read once; the tests run both at every
 * shape); 0 for any other value. */
static int cluster_for(int M, int rows) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_CLUSTER");
        forced = !e || !*e ? 3 : !strcmp(e, "1") ? 1 : !strcmp(e, "2") ? 2 : 0;
    }
    if (forced != 3) return forced;
    return M <= rows ? 1 : 2;
}

static int pick_tile(int M, int N, int K) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_TILE");
        forced = !e || !*e                 ? 4
                 : !strcmp(e, "128x128") ? TILE_128
                 : !strcmp(e, "64x128")  ? TILE_64
                 : !strcmp(e, "256x128a") ? TILE_256A
                                         : TILE_BAD;
    }
    if (forced != 4) return forced;
    const long cols = blocks_for(N, BN);
    static const int rows[3] = {64, 128, 256};
    /* The 256 x 128 tile shares A (TILE_256A: pairs side by side along N), rated against the
     * 128 x 128 tile by their ratio at 8192^3 in one session (H100, 2026-11-26: 1308 against
     * 1276 TFLOPS), and not picked below 8 K tiles, where its 3 slots fill and drain once a
     * tile (4096 x 32768 x 512: 0.98x cuBLASLt against 1.03x). */
    static const double rate[3] = {980, 1208, 1238};
    int best = TILE_64;
    double best_cost = 0;
    for (int i = 0; i < 3; i++) {
        const bool share_a = i == 2;
        if (share_a && (K + BK - 1) / BK < 8) continue;
        const int cl = i < 2 && cluster_for(M, rows[i]) == 1 ? 1 : CLUSTER;
        const long slots = launch_sms() / cl;
        const long pairs = share_a ? blocks_for(M, rows[i]) * ((cols + 1) / 2)
                                   : (blocks_for(M, rows[i]) + cl - 1) / cl * cols;
        const double cost = (double)((pairs + slots - 1) / slots) * rows[i] / rate[i];
        if (i == 0 || cost < best_cost) best = share_a ? TILE_256A : i + 1, best_cost = cost;
    }
    return best;
}

extern "C" int STAGE(gemm07_wide)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                    const float *scale_b, bf16_t *D, int M, int N, int K,
                                    cudaStream_t stream) {
    switch (pick_tile(M, N, K)) {
    case TILE_64:
        if (!cluster_for(M, 64)) return launch_unsupported("GEMM07_FINAL_CLUSTER must be 1 or 2");
        return cluster_for(M, 64) == 1
                   ? launch_wide07<1, 1, 1, true>(A, B, scale_a, scale_b, D, M, N, K, stream)
                   : launch_wide07<1, 1, 2, true>(A, B, scale_a, scale_b, D, M, N, K, stream);
    case TILE_128:
        if (!cluster_for(M, 128)) return launch_unsupported("GEMM07_FINAL_CLUSTER must be 1 or 2");
        return cluster_for(M, 128) == 1
                   ? launch_wide07<2, 1, 1>(A, B, scale_a, scale_b, D, M, N, K, stream)
                   : launch_wide07<2, 1>(A, B, scale_a, scale_b, D, M, N, K, stream);
    case TILE_256A:
        return launch_wide07<2, 2, CLUSTER, false, true>(A, B, scale_a, scale_b, D, M, N, K,
                                                              stream);
    default:
        return launch_unsupported("GEMM07_FINAL_TILE must be 256x128a, 128x128 or 64x128");
    }
}
