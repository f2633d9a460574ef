/* Stage 6 — thread-block clusters: two blocks on neighbouring SMs compute the two 128x256 tiles
 * above each other (a 256x256 pair sharing one B tile), and each loads only half of that B tile,
 * sending it to both with one TMA multicast.
 *
 * What changes from stage 5. There, every block read its own A tile (16 KiB) and B tile (32 KiB)
 * per K step from L2. Here the grid is launched in clusters of 2 (blocks 2c and 2c+1, rank 0
 * and 1, on SMs of one GPC); the pair computes output tiles (2p, n) and (2p + 1, n), which read
 * the same B rows. The producer of rank r loads its own A tile, and rows 128r .. 128r + 127 of
 * the B tile with cp.async.bulk.tensor...multicast::cluster, mask 0b11: the TMA engine reads
 * them from L2 once and writes them into the same slot of both blocks' shared memory, and
 * signals each block's full barrier. L2 reads per pair and K step: 2 x 16 + 32 KiB instead of
 * 2 x (16 + 32): a third less.
 *
 * What the cluster costs: a slot may be refilled only when the consumers of *both* blocks are
 * done with it, since the partner's multicast writes into ours. So empty[s] counts 16 arrivals:
 * each consumer warp arrives on its own block's empty[s] and, through the cluster's shared
 * memory window (mapa), on its partner's. The arrival is mbarrier_arrive_remote, release at CTA
 * scope: the wgmma reads of the slot are complete (wait_group), nothing needs a GPU-wide fence;
 * the cluster-scope release (mbarrier_arrive_cluster) puts a MEMBAR.ALL.GPU before each
 * arrival, and with it this stage ran at 0.37x cuBLAS instead of stage 5's 0.89x.
 * full[s] still has one local arrival (our producer's
 * arrive_expect_tx of the whole 48 KiB slot) and receives the bytes of three copies: our A, our
 * B half, the partner's B half. The partner's bytes can land before our producer has armed the
 * barrier for that phase; the transaction count may go below zero for a while, which mbarriers
 * allow, and the phase cannot complete without the local arrival.
 * Set-up and tear-down need the whole cluster: the barriers are initialized and released at
 * cluster scope (fence_mbarrier_init_cluster, then a cluster barrier) before any block may
 * multicast into the other; and no block may exit while its partner may still write into its
 * shared memory or arrive on its barriers: the producer ends with a tail, waiting on every
 * empty[s] once more, which returns when the partner's last arrivals on our barriers have
 * landed (its multicast bytes landed before our consumers could release the slot), and a
 * cluster barrier at the end, reached by every thread, the producer's idle ones included.
 *
 * When M has an odd number of tile rows, the last pair's rank 1 computes a tile entirely past
 * M: its A loads are all zero fill, it still loads and multicasts its half of B (its partner
 * needs it), and store_fragment skips every row. No special case.
 *
 * The grid: as many clusters as can be resident at once (cudaOccupancyMaxActiveClusters, asked
 * once: 66 pairs need every GPC to offer an even number of free SMs), each looping over pairs in
 * the grouped order of stage 5 applied to pair rows.
 *
 * What to look for. SASS: UTMALDG.2D.MULTICAST, SYNCS.ARRIVE.TRANS64.RED.A1T0 with a remote
 * address (the arrivals on the partner's barrier), UCGABAR_ARV / UCGABAR_WAIT (the cluster
 * barriers). Profile: L2 to SM bytes down by about a third.
 *
 * Shapes: any M and N; K % 8 == 0. */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128
#define BN 256
#define BK GEMM06_BK
#define DEPTH 4
#define CONSUMERS 2
#define CLUSTER 2 /* blocks per cluster, along M */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK * 2)
#define B_HALF_BYTES (BN / CLUSTER * BK * 2) /* what each rank loads of B: 16 KiB */
#define SLOT_BYTES ((BM + BN) * BK * 2)
static_assert(DEPTH * SLOT_BYTES + 1024 == GEMM06_SMEM_CLUSTERS, "gemm06.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    clusters_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, bf16_t *__restrict__ C, int M,
                    int N, int K, const gemm06_tiles pairs) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    /* Same kernel, same static and dynamic layout in both blocks: the ring starts at the same
     * offset, so a multicast to "slot s" means the same bytes in each. */
    const unsigned ring = smem_addr(align1024(smem));
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK;
    const int n_pairs = pairs.tiles_m * pairs.tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CLUSTER * CONSUMERS * 4);
        }
        fence_mbarrier_init_cluster(); /* the inits, visible to the partner's TMA and arrivals */
    }
    cluster_arrive_relaxed();
    cluster_wait();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int it = 0;
            for (int p = cluster_id; p < n_pairs; p += clusters) {
                int pm, tn;
                gemm06_tile_at(pairs, p, pm, tn);
                const int m0 = (pm * CLUSTER + (int)rank) * BM;
                for (int t = 0; t < k_tiles; t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * SLOT_BYTES, bar = smem_addr(&full[s]);
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    mbarrier_arrive_expect_tx(bar, SLOT_BYTES);
                    tma_load_2d(a, &map_a, bar, t * BK, m0);
                    tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b, bar, t * BK,
                                          tn * BN + (int)rank * (BN / CLUSTER),
                                          (1u << CLUSTER) - 1);
                }
            }
            /* The tail: wait until both blocks' consumers have handed back every slot of
             * ours, i.e. until the partner's last remote arrival on our barriers has landed.
             * After it nothing from the partner can still reach this block (its multicast
             * bytes landed before our consumers could release), so the block may exit once
             * everyone is done; the relaxed cluster barrier below does not order the remote
             * arrivals by itself. */
            for (int i = 0; i < DEPTH; i++, it++)
                mbarrier_wait_parity(smem_addr(&empty[it % DEPTH]), ((it / DEPTH) & 1) ^ 1);
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const bool signals = threadIdx.x % 32 == 0;
        /* empty[s] of both blocks: slot s is ours and the target of the partner's multicast */
        auto release = [&](int s) {
            if (signals)
                for (unsigned r = 0; r < CLUSTER; r++)
                    mbarrier_arrive_remote(mapa_shared(smem_addr(&empty[s]), r));
        };
        int it = 0;
        for (int p = cluster_id; p < n_pairs; p += clusters) {
            int pm, tn;
            gemm06_tile_at(pairs, p, pm, tn);
            const int m0 = (pm * CLUSTER + (int)rank) * BM;
            float d[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
            wgmma_fence_operands(d);

            for (int t = 0; t < k_tiles; t++, it++) {
                const int s = it % DEPTH;
                const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128;
                const unsigned b = ring + s * SLOT_BYTES + A_BYTES;
                mbarrier_wait_parity(smem_addr(&full[s]), (it / DEPTH) & 1);
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; k++)
                    wgmma_bf16_ss<BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k), 1);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (t > 0) release((it - 1) % DEPTH);
            }
            wgmma_wait_group<0>();
            wgmma_fence_operands(d);
            release((it - 1) % DEPTH);
            store_fragment<BN>(d, C, M, N, m0 + 64 * c, tn * BN);
        }
    }
    /* Nobody leaves before the partner is done too (the producer's tail above made sure that
     * nothing of the partner's is still on its way to us). */
    cluster_arrive_relaxed();
    cluster_wait();
}

extern "C" int STAGE(gemm06_clusters)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                      int K, cudaStream_t stream) {
    const int order = gemm06_order_from_env(GEMM06_ORDER_GROUPED);
    if (order < 0) return launch_unsupported("GEMM06_TILE_ORDER must be rows, grouped or hilbert");
    const long tiles_m = blocks_for(M, BM), tiles_n = blocks_for(N, BN);
    const long pair_rows = (tiles_m + CLUSTER - 1) / CLUSTER;
    if (pair_rows > 65535 || tiles_n > 65535 || pair_rows * tiles_n > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN / CLUSTER, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    /* The schedule is over pairs of tile rows: pair (pm, tn) is tiles (2pm, tn), (2pm + 1, tn). */
    gemm06_tiles pairs = {(int)pair_rows, (int)tiles_n, order, 0};
    if (gemm06_schedule(&pairs, order, stream) < 0)
        return launch_unsupported("could not upload the Hilbert tile schedule");
    launch_cfg cfg = {dim3(CLUSTER), dim3(THREADS), (size_t)GEMM06_SMEM_CLUSTERS, CLUSTER, stream};
    static int resident; /* clusters that fit at once, asked once */
    if (!resident) resident = launch_resident_clusters((const void *)clusters_kernel, &cfg);
    if (resident < 1) return launch_kernel(clusters_kernel, cfg, maps->map_a, maps->map_b, C, M, N,
                                           K, pairs); /* reports why it cannot run */
    const long n_pairs = pair_rows * tiles_n;
    cfg.grid = dim3((unsigned)(CLUSTER * (n_pairs < resident ? n_pairs : resident)));
    return launch_kernel(clusters_kernel, cfg, maps->map_a, maps->map_b, C, M, N, K, pairs);
}
