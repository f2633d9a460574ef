/* Stage 7 — the epilogue: the accumulators go to shared memory with stmatrix and leave with a
 * TMA store, which runs while the consumers start the next tile.
 *
 * What changes from stage 6. There, at the end of each tile the consumers wrote C straight
 * from registers: 64 bf16x2 stores per thread, each row of a warp's store a 16-byte piece, and
 * the tensor cores idle until the last one had issued. Here each consumer warpgroup
 *   1. waits until its previous TMA store has read its staging area (issued one tile ago, long
 *      done: the wait costs nothing but keeps the reuse legal), and meets its 127 siblings at
 *      a named barrier, so that none writes the staging area before that wait is over;
 *   2. converts its fragment to bf16 and writes it with 16 stmatrix.x4 per thread into 32 KiB
 *      of shared memory, laid out as four 64 x 64 boxes in the 128-byte swizzle (stage_fragment
 *      in gemm06_sm90a.cuh: conflict-free, 16 bytes per row per instruction);
 *   3. fences the writes into the async proxy (fence.proxy.async: TMA reads shared memory
 *      through the async proxy, and a barrier orders threads, not proxies), meets its 127
 *      siblings at a named barrier (bar.sync 1 + c, 128: the producer and the other consumer
 *      do not take part), and one thread issues four TMA stores and commits them;
 *   4. goes straight on to the next tile's wgmmas. The stores drain from shared memory to L2
 *      while the tensor cores work; TMA clips the boxes at M and N.
 * The price is shared memory: 64 KiB of staging beside the ring leaves room for 3 slots, not
 * 4 (3 x 48 + 64 + 1 = 209 KiB of the 227, with the alignment slack).
 *
 * Everything else is stage 6: persistent, clusters of 2 along M sharing B by multicast,
 * producer warpgroup plus two consumers, 128 x 256 tiles.
 *
 * What to look for. SASS: STSM.16.M88.4, FENCE.VIEW.ASYNC.S, BAR.SYNC with a register id,
 * UTMASTG.2D, UTMACMDFLUSH; no STG (the old epilogue's global stores). Profile (expected, not
 * measured here): the gap in tensor-pipe activity between tiles shrinks from the length of
 * the stores to that of the stmatrix.
 *
 * Shapes: any M; N % 8 == 0 (C's row stride in 16-byte units, for its tensor map); K % 8 == 0. */
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

#define BM 128
#define BN 256
#define BK GEMM06_BK
#define DEPTH 3
#define CONSUMERS 2
#define CLUSTER 2
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK * 2)
#define B_HALF_BYTES (BN / CLUSTER * BK * 2)
#define SLOT_BYTES ((BM + BN) * BK * 2)
#define STAGING_BYTES (64 * BN * 2) /* one consumer's 64 x 256 bf16 */
static_assert(DEPTH * SLOT_BYTES + CONSUMERS * STAGING_BYTES + 1024 == GEMM06_SMEM_EPILOGUE,
              "gemm06.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    epilogue_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, int K, const gemm06_tiles pairs) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    const unsigned ring = smem_addr(align1024(smem));
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK;
    const int n_pairs = pairs.tiles_m * pairs.tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        tma_prefetch_map(&map_c);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CLUSTER * CONSUMERS * 4);
        }
        fence_mbarrier_init_cluster();
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
        const bool signals = threadIdx.x % 32 == 0, stores = threadIdx.x % 128 == 0;
        const unsigned staging = ring + DEPTH * SLOT_BYTES + c * STAGING_BYTES;
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

            if (stores) tma_store_wait<0>(); /* our last store has read the staging area */
            named_barrier_sync(1 + c, 128);
            stage_fragment<BN>(d, staging);
            fence_proxy_async_shared();
            named_barrier_sync(1 + c, 128);
            if (stores) {
                for (int box = 0; box < BN / 64; box++)
                    tma_store_2d(&map_c, staging + box * 8192, tn * BN + 64 * box, m0 + 64 * c);
                tma_store_commit();
            }
        }
        if (stores) tma_store_wait<0>(); /* the block's shared memory must outlive the reads */
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

extern "C" int STAGE(gemm06_epilogue)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                      int K, cudaStream_t stream) {
    const int order = gemm06_order_from_env(GEMM06_ORDER_GROUPED);
    if (order < 0) return launch_unsupported("GEMM06_TILE_ORDER must be rows, grouped or hilbert");
    if (N % 8)
        return launch_unsupported("N %% 8 != 0: the TMA store needs C's rows in 16-byte units");
    const long tiles_m = blocks_for(M, BM), tiles_n = blocks_for(N, BN);
    const long pair_rows = (tiles_m + CLUSTER - 1) / CLUSTER;
    if (pair_rows > 65535 || tiles_n > 65535 || pair_rows * tiles_n > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN / CLUSTER, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const CUtensorMap *map_c = gemm06_store_map_for(C, M, N, err, sizeof err);
    if (!map_c) return launch_unsupported("%s", err);
    gemm06_tiles pairs = {(int)pair_rows, (int)tiles_n, order, 0};
    if (gemm06_schedule(&pairs, order, stream) < 0)
        return launch_unsupported("could not upload the Hilbert tile schedule");
    launch_cfg cfg = {dim3(CLUSTER), dim3(THREADS), (size_t)GEMM06_SMEM_EPILOGUE, CLUSTER, stream};
    static int resident;
    if (!resident) resident = launch_resident_clusters((const void *)epilogue_kernel, &cfg);
    if (resident < 1)
        return launch_kernel(epilogue_kernel, cfg, maps->map_a, maps->map_b, *map_c, K, pairs);
    const long n_pairs = pair_rows * tiles_n;
    cfg.grid = dim3((unsigned)(CLUSTER * (n_pairs < resident ? n_pairs : resident)));
    return launch_kernel(epilogue_kernel, cfg, maps->map_a, maps->map_b, *map_c, K, pairs);
}
