/* Stage 7 — the store handed off: stage 6 with the epilogue through shared memory, stored by
 * an idle thread of the producer warpgroup while the consumers go back to their K loops.
 *
 * What changes from stage 6, and why it is faster:
 *  - Stage 6's consumer stores its 64 x 128 sums from registers at the end of each tile: 32
 *    4-byte stores a thread, each warp's spread over 8 rows of D, and its next tile's slots,
 *    already full, wait meanwhile. The tensor core waits with it, and the two consumers of a
 *    block, started by the same full barriers, store at the same moment.
 *  - Here a consumer rounds its sums to bf16 into two 64 x 64 boxes in shared memory, in the
 *    128-byte swizzle that a TMA store reads (stage_box: stmatrix, chapter 06's stage 7),
 *    fences them into the async proxy, arrives on staged[c] (128 arrivals) and goes back to
 *    its K loop. One thread of the producer warpgroup's second warp, idle until now, waits on
 *    staged[c], stores both boxes by TMA (a band past M stores nothing), waits until the
 *    stores have read them (tma_store_wait<0>) and arrives on unstaged[c]. The consumer waits
 *    on unstaged[c] only before it stages its next tile, a whole K loop later, when the
 *    stores are long done: it waits on neither the stores nor its partner consumer. (The final
 *    kernel first stored as chapter 06's stage 8 does, each consumer its own boxes behind named
 *    barriers and the bulk groups' wait; a build that skipped the store then ran 3-4% faster
 *    at the squares, and handing the store off won most of that back: NOTES.md, "The store
 *    handed off".)
 *  - The boxes take 32 KiB: the ring drops from 6 slots to 5.
 *  - From registers still when N % 8 != 0 or D is not 16-byte aligned: no TMA map of D exists
 *    then (its row stride must be a multiple of 16 bytes). The launch takes one path or the
 *    other, a kernel argument.
 *
 * What to look for. SASS: STSM (stmatrix) and the consumer's arrival after a FENCE.VIEW.ASYNC.S,
 * UTMASTG in the producer warpgroup; the K loop as long as stage 6's or longer (make test
 * prints both): the loop itself is stage 8's work. The table: short K (4096 x 32768 x 512,
 * where a tile is four K tiles and its store a large share) and the squares against stage 6.
 *
 * Shapes: any N; M % 4 == 0 (the TMA map of A's scales); K % 16 == 0. */
#include <type_traits>

#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128      /* rows of D per block: two consumer warpgroups of 64 */
#define BN 128      /* columns of D per block: m64n128k32, two accumulator sets */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define DEPTH 5     /* slots in the ring: the staging boxes take a sixth slot's room */
#define CONSUMERS 2 /* consumer warpgroups */
#define CLUSTER 2   /* blocks per cluster, stacked along M, sharing B */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define B_HALF_BYTES (BN / CLUSTER * BK) /* the rows of B's tile each block loads */
#define SLOT_BYTES ((BM + BN) * BK)      /* 32 KiB of operands */
#define SCALE_BYTES (BM * 4)             /* A's scales of the slot's K tile */
#define SCALES_AT (DEPTH * SLOT_BYTES)    /* from the ring's start: the scales after the slots */
/* a consumer's two 8 KiB boxes, 1024-aligned for the store's swizzle, after the scales */
#define STAGING_BYTES (2 * 8192)
#define STAGING_AT ((SCALES_AT + DEPTH * SCALE_BYTES + 1023) / 1024 * 1024)
static_assert(STAGING_AT + CONSUMERS * STAGING_BYTES + 1024 == GEMM07_SMEM_HANDOFF,
              "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    handoff_kernel(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sa,
                   const __grid_constant__ CUtensorMap map_d, bf16_t *__restrict__ D, int M, int N,
                   int K, const float *__restrict__ scale_b, const gemm06_tiles pairs,
                   const int tma_store) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    /* a consumer's boxes staged, and read out again by the TMA stores */
    __shared__ __align__(8) unsigned long long staged[CONSUMERS], unstaged[CONSUMERS];
    unsigned char *base = align1024(smem);
    const unsigned ring = smem_addr(base);
    const unsigned scales = ring + SCALES_AT; /* DEPTH x 128 floats of A's scales */
    const float *scale_rows = (const float *)(base + SCALES_AT);
    const int wg = threadIdx.x / 128; /* 0: producer, 1..CONSUMERS: consumers */
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK, k_tiles4 = (k_tiles + 3) / 4 * 4;
    const int n_units = pairs.tiles_m * pairs.tiles_n; /* a unit: one pair of tiles */
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        tma_prefetch_map(&map_sa);
        if (tma_store) tma_prefetch_map(&map_d);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CLUSTER * CONSUMERS * 4); /* both blocks' warps */
        }
        for (int c = 0; c < CONSUMERS; c++) {
            mbarrier_init(smem_addr(&staged[c]), 128); /* every thread of the consumer */
            mbarrier_init(smem_addr(&unstaged[c]), 1); /* the storing thread */
        }
        fence_mbarrier_init_cluster();
    }
    /* the partner's barriers initialized before any multicast or remote arrival reaches them */
    cluster_arrive_relaxed();
    cluster_wait();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        /* The stores, unit after unit: consumer c's boxes once it has staged them, then, once
         * TMA has read both consumers' boxes, each handed back for the next unit's. Its own
         * warp: thread 0 may be waiting on an empty slot meanwhile. */
        if (tma_store && threadIdx.x == 32) {
            unsigned p = 0; /* the staged barriers' phase */
            for (int u = cluster_id; u < n_units; u += clusters, p ^= 1) {
                int pm, tn;
                gemm06_tile_at(pairs, u, pm, tn);
                const int m0 = (pm * CLUSTER + (int)rank) * BM;
#pragma unroll
                for (int c = 0; c < CONSUMERS; c++) {
                    const unsigned at = ring + STAGING_AT + c * STAGING_BYTES;
                    const int row0 = m0 + 64 * c;
                    mbarrier_wait_parity(smem_addr(&staged[c]), p);
                    tma_store_2d_if(&map_d, at, tn * BN, row0, row0 < M);
                    tma_store_2d_if(&map_d, at + 8192, tn * BN + 64, row0, row0 < M);
                    tma_store_commit();
                }
                tma_store_wait<0>();
#pragma unroll
                for (int c = 0; c < CONSUMERS; c++) mbarrier_arrive(smem_addr(&unstaged[c]));
            }
        }
        if (threadIdx.x == 0) {
            int it = 0; /* K tiles loaded so far, across tiles: the ring position */
            for (int u = cluster_id; u < n_units; u += clusters) {
                int pm, tn;
                gemm06_tile_at(pairs, u, pm, tn);
                const int m0 = (pm * CLUSTER + (int)rank) * BM;
                for (int t = 0; t < k_tiles; t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * SLOT_BYTES, bar = smem_addr(&full[s]);
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    /* both halves of B land here, ours and the partner's */
                    mbarrier_arrive_expect_tx(bar, SLOT_BYTES + SCALE_BYTES);
                    tma_load_2d(a, &map_a, bar, t * BK, m0);
                    tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b, bar, t * BK,
                                          tn * BN + (int)rank * (BN / CLUSTER),
                                          (1u << CLUSTER) - 1);
                    tma_load_2d(scales + s * SCALE_BYTES, &map_sa, bar, m0, t); /* {i, kb} */
                }
            }
            /* The tail (chapter 06, stage 6): every slot of ours handed back by both blocks'
             * consumers, so no multicast of the partner's can still land here. */
            for (int i = 0; i < DEPTH; i++, it++)
                mbarrier_wait_parity(smem_addr(&empty[it % DEPTH]), ((it / DEPTH) & 1) ^ 1);
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1; /* which 64 rows of the tile */
        const int t128 = threadIdx.x % 128;
        const bool signals = t128 % 32 == 0; /* lane 0 of each warp hands the slot back */
        const int row = 64 * c + 16 * (t128 / 32) + (t128 % 32) / 4; /* and row + 8 */
        const unsigned staging = ring + STAGING_AT + c * STAGING_BYTES;
        unsigned handed = 0; /* units staged so far: the unstaged barrier's phase is its parity */
        /* The slot goes back to both producers: each multicast half of B into it. Predicated
         * inside the asm, no branch (stage 5: a branch would serialize the wgmmas). */
        auto release = [&](int s) {
#pragma unroll
            for (unsigned r = 0; r < CLUSTER; r++)
                mbarrier_arrive_remote_if(mapa_shared(smem_addr(&empty[s]), r), signals);
        };
        int it = 0; /* K tiles consumed so far, across tiles, in step with the producer's */
        float sum[BN / 2];
        float b_scale = 1.0f; /* B's scale of the oldest K tile in flight */
        const float *sb = scale_b;
        /* K tile i of the ring (its slot's operands) into acc, once its slot is full. */
        auto issue = [&](float(&acc)[BN / 2], int i) {
            const int s = i % DEPTH;
            const unsigned a = ring + s * SLOT_BYTES + c * 64 * BK;
            const unsigned b = ring + s * SLOT_BYTES + A_BYTES;
            mbarrier_wait_parity_in_asm(smem_addr(&full[s]), (i / DEPTH) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++)
                wgmma_e4m3_e4m3_ss<BN>(acc, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k),
                                       k > 0);
            wgmma_commit_group();
        };
        /* K tile t of the unit, the oldest in flight (in acc), done once at most `pending`
         * groups are: its slot handed back, its sum promoted. With one pending a K tile
         * follows, whose B scale is loaded now. */
        auto finish = [&](float(&acc)[BN / 2], int t, auto pending) {
            const int s = it % DEPTH;
            const float f0 = scale_rows[s * BM + row] * b_scale; /* read before the release */
            const float f1 = scale_rows[s * BM + row + 8] * b_scale;
            if (decltype(pending)::value) b_scale = __ldg(sb + t + 1);
            wgmma_wait_group<decltype(pending)::value>();
            wgmma_fence_operands(acc);
            release(s);
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] += acc[i] * ((i / 2) % 2 ? f1 : f0);
            it++;
        };
        const std::integral_constant<int, 1> newest_pending;
        const std::integral_constant<int, 0> none_pending;
        /* K tile t is in acc: issue t + 1 into next, then finish t. */
        auto step = [&](float(&acc)[BN / 2], float(&next)[BN / 2], int t) {
            issue(next, it + 1);
            finish(acc, t, newest_pending);
        };
        /* K tiles 1 .. kt - 1 of a unit whose K tile 0 is in flight into `part`; at the end
         * every group is done. */
        auto rest_of_unit = [&](int kt, float(&part)[BN / 2], float(&other)[BN / 2]) {
            int t = 0;
            for (; t + 2 < kt; t += 2) {
                step(part, other, t);
                step(other, part, t + 1);
            }
            if (t + 1 < kt) {
                step(part, other, t);
                finish(other, t + 1, none_pending);
            } else {
                finish(part, t, none_pending);
            }
        };
        for (int u = cluster_id; u < n_units; u += clusters) {
            int pm, tn;
            gemm06_tile_at(pairs, u, pm, tn);
            const int m0 = (pm * CLUSTER + (int)rank) * BM;
            sb = scale_b + (long)tn * k_tiles4;
            b_scale = __ldg(sb);
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f;
            float part[BN / 2], other[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) part[i] = 0.0f;
            wgmma_fence_operands(part);
            /* A band past M (the pair's second tile when C has an odd number of tile rows,
             * the lower half of a tile when M ends in its upper half) has nothing to multiply,
             * but its slots must still go back to both producers. */
            if (m0 + 64 * c < M) {
                issue(part, it);
                rest_of_unit(k_tiles, part, other);
            } else {
                for (int t = 0; t < k_tiles; t++, it++) {
                    mbarrier_wait_parity(smem_addr(&full[it % DEPTH]), (it / DEPTH) & 1);
                    release(it % DEPTH);
                }
            }
            if (!tma_store) {
                store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, tn * BN);
                continue;
            }
            /* Stage, fence, hand over. The wait is for the stores of the unit before, long
             * done by now: a whole K loop ran since. */
            mbarrier_wait_parity(smem_addr(&unstaged[c]), (handed & 1) ^ 1);
            stage_box<BN, bf16_t>(sum, staging, 0);
            stage_box<BN, bf16_t>(sum, staging + 8192, 1);
            fence_proxy_async_shared(); /* the generic proxy's writes, seen by TMA's reads */
            mbarrier_arrive(smem_addr(&staged[c]));
            handed++;
        }
    }
    /* no block leaves while its partner may still arrive on its barriers */
    cluster_arrive_relaxed();
    cluster_wait();
}

extern "C" int STAGE(gemm07_handoff)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                     const float *scale_b, bf16_t *D, int M, int N, int K,
                                     cudaStream_t stream) {
    const long rows = (blocks_for(M, BM) + CLUSTER - 1) / CLUSTER, cols = blocks_for(N, BN);
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    if (M % 4)
        return launch_unsupported("M %% 4 != 0: the scale map's rows must be 16-byte multiples");
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, BM, BN / CLUSTER, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const CUtensorMap *map_sa = gemm07_scale_map_for(scale_a, M, K, BM, err, sizeof err);
    if (!map_sa) return launch_unsupported("%s", err);
    /* D by TMA where its rows are whole 16 bytes and it starts on 16, else from registers */
    static const CUtensorMap unused = {};
    const CUtensorMap *map_d = NULL;
    if (N % 8 == 0 && (uintptr_t)D % 16 == 0 &&
        !(map_d = gemm06_store_map_for(D, M, N, err, sizeof err)))
        return launch_unsupported("%s", err);
    launch_cfg cfg = {dim3(CLUSTER), dim3(THREADS), (size_t)GEMM07_SMEM_HANDOFF, CLUSTER,
                      stream};
    static int resident; /* clusters that fit at once, asked once */
    if (!resident) resident = launch_resident_clusters((const void *)handoff_kernel, &cfg);
    /* pairs of tile rows (a cluster's two tiles) by tile columns, in the grouped order */
    const gemm06_tiles pairs = {(int)rows, (int)cols, GEMM06_ORDER_GROUPED, 8};
    if (resident > 0)
        cfg.grid = dim3((unsigned)(CLUSTER * launch_balanced_grid(rows * cols, resident)));
    return launch_kernel(handoff_kernel, cfg, maps->map_a, maps->map_b, *map_sa,
                         map_d ? *map_d : unused, D, M, N, K, scale_b, pairs, map_d != NULL);
}
