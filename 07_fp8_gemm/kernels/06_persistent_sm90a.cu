/* Stage 6 — persistent clusters: stage 5's block-scaled kernel (two accumulators in turn), run
 * by a grid of resident 2-block clusters that walk the tiles, where stage 5 had a block a tile.
 *
 * What changes from stage 5, and why it is faster:
 *  - A block a tile fills its ring before its first wgmma and empties it before its store: the
 *    tensor core idles through both, once a tile, and at short K that is a large share of a
 *    tile (4096 x 32768 x 512: four K tiles). Here one cluster per pair of SMs stays resident
 *    and walks the tiles (chapter 06, stage 5): the ring's slot and phase run on from tile to
 *    tile, so the producer loads the next tile's first K tiles while the consumers still
 *    promote this one's last.
 *  - The order: chapter 06's grouped order (gemm06_tile_at, 8 pair rows a group), so the tiles
 *    in flight at once share their A and B panels in L2.
 *  - Clusters sharing B (chapter 06, stage 6): the two blocks of a cluster compute tiles
 *    stacked along M, which read the same 128 rows of B. Each loads half of B's tile and
 *    multicasts it into both blocks: a quarter less operand traffic from L2. A's scales are per
 *    row, so each block loads its own. A slot then holds bytes its partner wrote: it may be
 *    refilled only when the consumers of both blocks have released it (empty[s] counts the 16
 *    consumer warps of the cluster, each arriving in both blocks), and no block may exit while
 *    a multicast of its partner's can still land in it (the producer's tail, then the cluster
 *    barrier).
 *  - The grid: the fewest resident clusters that keep the round count (launch_resident_clusters,
 *    launch_balanced_grid).
 * Unchanged: the epilogue from registers (store_fragment). The ring's fill now overlaps the
 * tile before, but the store does not: the consumer stores before it issues its next tile,
 * whose first slots are already full, so the tensor core still idles through the store once a
 * tile (stage 7). The K loop is stage 5's too, with its per-K-tile address and descriptor
 * arithmetic (stage 8).
 *
 * What to look for. SASS: UTMALDG.2D.MULTICAST (B's half), UCGABAR_ARV and UCGABAR_WAIT (the
 * cluster barrier at the start and before exit), the release as SYNCS.ARRIVE.TRANS64.RED to
 * both blocks; the K loop's instruction count per K tile beside stage 8's (make test prints
 * it). The table: short K (4096 x 32768 x 512) and the squares against stage 5.
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
#define DEPTH 6     /* slots in the ring */
#define CONSUMERS 2 /* consumer warpgroups */
#define CLUSTER 2   /* blocks per cluster, stacked along M, sharing B */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define B_HALF_BYTES (BN / CLUSTER * BK) /* the rows of B's tile each block loads */
#define SLOT_BYTES ((BM + BN) * BK)      /* 32 KiB of operands */
#define SCALE_BYTES (BM * 4)             /* A's scales of the slot's K tile */
static_assert(DEPTH * (SLOT_BYTES + SCALE_BYTES) + 1024 == GEMM07_SMEM_PERSISTENT,
              "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_sa, bf16_t *__restrict__ D, int M,
                      int N, int K, const float *__restrict__ scale_b, const gemm06_tiles pairs) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    unsigned char *base = align1024(smem);
    const unsigned ring = smem_addr(base);
    const unsigned scales = ring + DEPTH * SLOT_BYTES; /* DEPTH x 128 floats of A's scales */
    const float *scale_rows = (const float *)(base + DEPTH * SLOT_BYTES);
    const int wg = threadIdx.x / 128; /* 0: producer, 1..CONSUMERS: consumers */
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK, k_tiles4 = (k_tiles + 3) / 4 * 4;
    const int n_units = pairs.tiles_m * pairs.tiles_n; /* a unit: one pair of tiles */
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        tma_prefetch_map(&map_sa);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CLUSTER * CONSUMERS * 4); /* both blocks' warps */
        }
        fence_mbarrier_init_cluster();
    }
    /* the partner's barriers initialized before any multicast or remote arrival reaches them */
    cluster_arrive_relaxed();
    cluster_wait();

    if (wg == 0) {
        setmaxnreg_dec<40>();
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
            /* the slots of the next tile fill meanwhile; this warpgroup's tensor work waits */
            store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, tn * BN);
        }
    }
    /* no block leaves while its partner may still arrive on its barriers */
    cluster_arrive_relaxed();
    cluster_wait();
}

extern "C" int STAGE(gemm07_persistent)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
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
    launch_cfg cfg = {dim3(CLUSTER), dim3(THREADS), (size_t)GEMM07_SMEM_PERSISTENT, CLUSTER,
                      stream};
    static int resident; /* clusters that fit at once, asked once */
    if (!resident) resident = launch_resident_clusters((const void *)persistent_kernel, &cfg);
    /* pairs of tile rows (a cluster's two tiles) by tile columns, in the grouped order */
    const gemm06_tiles pairs = {(int)rows, (int)cols, GEMM06_ORDER_GROUPED, 8};
    if (resident > 0)
        cfg.grid = dim3((unsigned)(CLUSTER * launch_balanced_grid(rows * cols, resident)));
    return launch_kernel(persistent_kernel, cfg, maps->map_a, maps->map_b, *map_sa, D, M, N, K,
                         scale_b, pairs);
}
