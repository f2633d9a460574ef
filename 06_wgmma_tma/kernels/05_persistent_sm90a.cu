/* Stage 5 — a persistent kernel: one block per SM, each looping over output tiles in an order
 * that keeps the operand panels in L2.
 *
 * What changes from stage 4. There, a grid of ceil(M/128) x ceil(N/256) blocks ran one tile
 * each: every block filled an empty ring before its first wgmma (a few microseconds of copies
 * with no math) and stored its tile with no math after, and the blocks started in an order the
 * hardware chose. Here the grid is one block per SM; block b computes tiles b, b + G, b + 2G,
 * ... (G = the grid) of a sequence that the launcher chooses:
 *  - the ring runs on across tiles: the producer's counter of K tiles does not restart, so the
 *    slots freed by the last K tiles of one tile are refilled with the first K tiles of the
 *    next while the consumers are still storing. The prologue of every tile but the first is
 *    hidden behind the epilogue of the one before;
 *  - the consumers release the slot of their last K tile too (stage 4 never reused it);
 *  - the order of the tile sequence is ours (gemm06_sm90a.cuh explains rows, grouped and
 *    hilbert). GEMM06_TILE_ORDER=rows|grouped|hilbert forces one; the README compares them.
 *
 * The consumers still store C straight from registers, during which their tensor cores idle:
 * stage 7 moves that to shared memory and TMA and overlaps it with the next tile's wgmmas.
 *
 * What to look for. The grid in nsys / ncu is 132 blocks (H100 SXM). SASS as stage 4.
 * Profile: DRAM bytes read per tile go down with grouped/hilbert against rows (L2 hit rate up).
 *
 * Shapes: any M and N (no grid-dimension limit any more); K % 8 == 0. */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
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
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK * 2)
#define SLOT_BYTES ((BM + BN) * BK * 2)
static_assert(DEPTH * SLOT_BYTES + 1024 == GEMM06_SMEM_PERSISTENT, "gemm06.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, bf16_t *__restrict__ C, int M,
                      int N, int K, const gemm06_tiles sched) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    const unsigned ring = smem_addr(align1024(smem));
    const int wg = threadIdx.x / 128;
    const int k_tiles = (K + BK - 1) / BK;
    const int tiles = sched.tiles_m * sched.tiles_n;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CONSUMERS * 4);
        }
        fence_proxy_async_shared();
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int it = 0; /* K tiles issued by this block, over all its output tiles */
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int tm, tn;
                gemm06_tile_at(sched, tile, tm, tn);
                for (int t = 0; t < k_tiles; t++, it++) {
                    const int s = it % DEPTH;
                    const unsigned a = ring + s * SLOT_BYTES, bar = smem_addr(&full[s]);
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    mbarrier_arrive_expect_tx(bar, SLOT_BYTES);
                    tma_load_2d(a, &map_a, bar, t * BK, tm * BM);
                    tma_load_2d(a + A_BYTES, &map_b, bar, t * BK, tn * BN);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const bool signals = threadIdx.x % 32 == 0; /* lane 0 arrives for its warp */
        int it = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int tm, tn;
            gemm06_tile_at(sched, tile, tm, tn);
            float d[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
            wgmma_fence_operands(d); /* the zeros stay before the wgmmas (else C7515, below) */

            for (int t = 0; t < k_tiles; t++, it++) {
                const int s = it % DEPTH;
                const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128, b = ring + s * SLOT_BYTES + A_BYTES;
                mbarrier_wait_parity(smem_addr(&full[s]), (it / DEPTH) & 1);
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; k++)
                    wgmma_bf16_ss<BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k), 1);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (t > 0 && signals) mbarrier_arrive(smem_addr(&empty[(it - 1) % DEPTH]));
            }
            wgmma_wait_group<0>();
            wgmma_fence_operands(d);
            /* The last K tile's slot: free it now, so the producer can already load the next
             * tile's first K tile while this warpgroup stores. */
            if (signals) mbarrier_arrive(smem_addr(&empty[(it - 1) % DEPTH]));
            store_fragment<BN>(d, C, M, N, tm * BM + 64 * c, tn * BN);
        }
    }
}

extern "C" int STAGE(gemm06_persistent)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                        int K, cudaStream_t stream) {
    const int order = gemm06_order_from_env(GEMM06_ORDER_GROUPED);
    if (order < 0) return launch_unsupported("GEMM06_TILE_ORDER must be rows, grouped or hilbert");
    const long tiles_m = blocks_for(M, BM), tiles_n = blocks_for(N, BN);
    if (tiles_m > 65535 || tiles_n > 65535 || tiles_m * tiles_n > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    gemm06_tiles sched = {(int)tiles_m, (int)tiles_n, order, 0};
    if (gemm06_schedule(&sched, order, stream) < 0)
        return launch_unsupported("could not upload the Hilbert tile schedule");
    const long tiles = tiles_m * tiles_n;
    const unsigned grid = (unsigned)(tiles < launch_sms() ? tiles : launch_sms());
    const launch_cfg cfg = {dim3(grid), dim3(THREADS), (size_t)GEMM06_SMEM_PERSISTENT, 0, stream};
    return launch_kernel(persistent_kernel, cfg, maps->map_a, maps->map_b, C, M, N, K, sched);
}
