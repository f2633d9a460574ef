/* Stage 5 — the final FP8 kernels (WORK IN PROGRESS: compiled and SASS-checked, never run on a
 * GPU; see the closing note of 2026-11-23): stages 3 and 4 with chapter 06's persistent,
 * clustered, TMA-store machinery, per tensor and block-scaled, with a tile per size.
 *
 * What changes from stages 3 and 4 (both promote every K tile into fp32 registers; this stage
 * keeps that, so its products match cuBLASLt's, which accumulates the same way):
 *  - Persistent: one cluster of two blocks per pair of SMs walks the tiles in chapter 06's
 *    grouped order (gemm06_tile_at), so filling the ring and storing a tile overlap the next
 *    tile's loads instead of leaving the tensor cores idle (stage 2's per-tile cost).
 *  - Clusters: the two blocks of a cluster compute tiles stacked along M and share B's tile:
 *    each loads half of it and multicasts it to both (chapter 06, stage 6). A's scales (block
 *    scaling) are per row, so each block loads its own.
 *  - The epilogue through shared memory: stmatrix into two 8 KiB boxes per consumer, a TMA
 *    store per box (chapter 06, stages 7-8), overlapped with the next tile's main loop; from
 *    registers when N % 8 != 0.
 *  - A tile per size: 128 x 128 with two consumers, or 64 x 128 with one for small M and small
 *    grids (the inference shapes, M = 64 and 128), picked like chapter 06's stage 8 (rounds x
 *    tile area / rate). Two accumulator sets (the promoted sum and one K tile's part) cap the
 *    fragment at 64 x 128 per consumer: 128 + 128 registers would not fit at n256.
 *
 * Shapes: any M and N (block scaling: M % 4 == 0, the TMA map of A's scales); K % 16 == 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
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
#define CLUSTER 2   /* blocks per cluster, stacked along M, sharing B */

/* A tile of 64 * CONS rows by 128 columns. Slots of operands (1024-aligned: the swizzle), as
 * many as fit (at most 8) beside the scales of their A rows (block scaling: 64 * CONS floats per
 * slot, in a region of their own after the ring) and the staging (two 8 KiB boxes per
 * consumer, 1024-aligned for the TMA store's swizzle). */
template <bool BLOCK, int CONS> struct final07_shape {
    static constexpr int bm = 64 * CONS, threads = 128 * (1 + CONS);
    static constexpr int a_bytes = bm * BK, b_half_bytes = BN / CLUSTER * BK;
    static constexpr int slot_bytes = (bm + BN) * BK;
    static constexpr int scale_bytes = BLOCK ? bm * 4 : 0;
    static constexpr int staging_bytes = 2 * 8192;
    static constexpr int budget = 227 * 1024 - 2048; /* the opt-in limit less static smem, rounded */
    static constexpr int fit = (budget - CONS * staging_bytes - 1024) / (slot_bytes + scale_bytes);
    static constexpr int depth = fit < 8 ? fit : 8;
    static constexpr int scales_at = depth * slot_bytes; /* from the ring's start */
    static constexpr int staging_at = (scales_at + depth * scale_bytes + 1023) / 1024 * 1024;
    static constexpr int smem = staging_at + CONS * staging_bytes + 1024;
};
static_assert(final07_shape<false, 2>::depth == 6 && final07_shape<true, 2>::depth == 5 &&
                  final07_shape<false, 1>::depth == 8 && final07_shape<true, 1>::depth == 8,
              "slots");
static_assert(final07_shape<false, 2>::smem == GEMM07_SMEM_FINAL &&
                  final07_shape<true, 2>::smem <= GEMM07_SMEM_FINAL &&
                  final07_shape<false, 1>::smem <= GEMM07_SMEM_FINAL &&
                  final07_shape<true, 1>::smem <= GEMM07_SMEM_FINAL,
              "gemm07.h agrees");

template <bool BLOCK, int CONS>
static __global__ void __launch_bounds__(final07_shape<BLOCK, CONS>::threads, 1)
    final07_kernel(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sa,
                   const __grid_constant__ CUtensorMap map_d, bf16_t *__restrict__ D, int M, int N,
                   int K, const float *__restrict__ scale_a, const float *__restrict__ scale_b,
                   const gemm06_tiles pairs, const int tma_store) {
    using S = final07_shape<BLOCK, CONS>;
    constexpr int DEPTH = S::depth, BM = S::bm;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    unsigned char *base = align1024(smem);
    const unsigned ring = smem_addr(base);
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK, k_tiles4 = (k_tiles + 3) / 4 * 4;
    const int n_pairs = pairs.tiles_m * pairs.tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    constexpr unsigned expect = S::slot_bytes + S::scale_bytes;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        if (BLOCK) tma_prefetch_map(&map_sa);
        if (tma_store) tma_prefetch_map(&map_d);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CLUSTER * CONS * 4);
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
                    const unsigned a = ring + s * S::slot_bytes, bar = smem_addr(&full[s]);
                    mbarrier_wait_parity(smem_addr(&empty[s]), ((it / DEPTH) & 1) ^ 1);
                    mbarrier_arrive_expect_tx(bar, expect);
                    tma_load_2d(a, &map_a, bar, t * BK, m0);
                    tma_load_2d_multicast(a + S::a_bytes + rank * S::b_half_bytes, &map_b, bar,
                                          t * BK, tn * BN + (int)rank * (BN / CLUSTER),
                                          (1u << CLUSTER) - 1);
                    if (BLOCK)
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
        const bool signals = t128 % 32 == 0, stores = t128 == 0;
        const int row = 64 * c + 16 * (t128 / 32) + (t128 % 32) / 4; /* and row + 8 */
        const unsigned staging = ring + S::staging_at + c * S::staging_bytes;
        const float tensor_scale = BLOCK ? 1.0f : __ldg(scale_a) * __ldg(scale_b);
        auto release = [&](int s) {
            if (signals)
                for (unsigned r = 0; r < CLUSTER; r++)
                    mbarrier_arrive_remote(mapa_shared(smem_addr(&empty[s]), r));
        };
        int it = 0;
        unsigned boxes = 0;
        for (int p = cluster_id; p < n_pairs; p += clusters) {
            int pm, tn;
            gemm06_tile_at(pairs, p, pm, tn);
            const int m0 = (pm * CLUSTER + (int)rank) * BM;
            const float *sb = scale_b + (long)tn * k_tiles4; /* BN = 128: one B block column */
            float sum[BN / 2], part[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f, part[i] = 0.0f;
            wgmma_fence_operands(part);

            for (int t = 0; t < k_tiles; t++, it++) {
                const int s = it % DEPTH;
                const unsigned a = ring + s * S::slot_bytes + c * 64 * 128;
                const unsigned b = ring + s * S::slot_bytes + S::a_bytes;
                const float b_scale = BLOCK ? __ldg(sb + t) : 1.0f;
                mbarrier_wait_parity(smem_addr(&full[s]), (it / DEPTH) & 1);
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 32; k++)
                    wgmma_e4m3_e4m3_ss<BN>(part, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k),
                                           k > 0);
                wgmma_commit_group();
                float f0 = 1.0f, f1 = 1.0f;
                if (BLOCK) {
                    const float *rows = (const float *)(base + S::scales_at + s * S::scale_bytes);
                    f0 = rows[row] * b_scale, f1 = rows[row + 8] * b_scale;
                }
                wgmma_wait_group<0>();
                wgmma_fence_operands(part);
                release(s);
#pragma unroll
                for (int i = 0; i < BN / 2; i++) sum[i] += part[i] * ((i / 2) % 2 ? f1 : f0);
            }
            if (!BLOCK) {
#pragma unroll
                for (int i = 0; i < BN / 2; i++) sum[i] *= tensor_scale;
            }
            if (!tma_store) {
                store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, tn * BN);
                continue;
            }
#pragma unroll
            for (int box = 0; box < BN / 64; box++, boxes++) {
                const unsigned buf = staging + (boxes % 2) * 8192;
                if (stores) tma_store_wait<1>();
                named_barrier_sync(1 + c, 128);
                stage_box<BN, bf16_t>(sum, buf, box);
                fence_proxy_async_shared();
                named_barrier_sync(1 + c, 128);
                if (stores) {
                    tma_store_2d(&map_d, buf, tn * BN + 64 * box, m0 + 64 * c);
                    tma_store_commit();
                }
            }
        }
        if (stores && tma_store) tma_store_wait<0>();
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

/* Chapter 06's balanced grid: the fewest clusters that keep the round count. */
static long balanced_clusters(long pairs, long resident) {
    const long fit = pairs < resident ? pairs : resident;
    const long rounds = (pairs + fit - 1) / fit;
    return (pairs + rounds - 1) / rounds;
}

template <bool BLOCK, int CONS>
static int launch_final07(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                          const float *scale_b, bf16_t *D, int M, int N, int K,
                          cudaStream_t stream) {
    using S = final07_shape<BLOCK, CONS>;
    const long rows = (blocks_for(M, S::bm) + CLUSTER - 1) / CLUSTER, cols = blocks_for(N, BN);
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    if (BLOCK && M % 4)
        return launch_unsupported("M %% 4 != 0: the scale map's rows must be 16-byte multiples");
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, S::bm, BN / CLUSTER, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    static const CUtensorMap unused = {};
    const CUtensorMap *map_sa = &unused;
    if (BLOCK && !(map_sa = gemm07_scale_map_for(scale_a, M, K, S::bm, err, sizeof err)))
        return launch_unsupported("%s", err);
    const CUtensorMap *map_d = NULL;
    if (N % 8 == 0 && (uintptr_t)D % 16 == 0) {
        map_d = gemm06_store_map_for(D, M, N, err, sizeof err);
        if (!map_d) return launch_unsupported("%s", err);
    }
    gemm06_tiles pairs = {(int)rows, (int)cols, GEMM06_ORDER_GROUPED, 8};
    launch_cfg cfg = {dim3(CLUSTER), dim3(S::threads), (size_t)S::smem, CLUSTER, stream};
    static int resident; /* per instantiation */
    if (!resident) resident = launch_resident_clusters((const void *)final07_kernel<BLOCK, CONS>, &cfg);
    if (resident > 0) cfg.grid = dim3((unsigned)(CLUSTER * balanced_clusters(rows * cols, resident)));
    return launch_kernel(final07_kernel<BLOCK, CONS>, cfg, maps->map_a, maps->map_b, *map_sa,
                         map_d ? *map_d : unused, D, M, N, K, scale_a, scale_b, pairs,
                         map_d != NULL);
}

/* 128 x 128 unless 64 x 128 tiles take fewer rounds on the SMs (M <= 64 per pair of blocks, or a
 * grid too small to fill them): chapter 06's estimate, rounds x area / rate, with the rates of
 * the bf16 tiles (not yet measured for FP8). GEMM07_FINAL_TILE=128x128|64x128 forces one (read
 * once); 0 for any other value. */
static int pick_cons(int M, int N) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_TILE");
        forced = !e || !*e ? 3 : !strcmp(e, "128x128") ? 2 : !strcmp(e, "64x128") ? 1 : 0;
    }
    if (forced != 3) return forced;
    const long slots = gemm06_sms() / CLUSTER, cols = blocks_for(N, BN);
    const long wide = ((blocks_for(M, 128) + 1) / 2 * cols + slots - 1) / slots;
    const long narrow = ((blocks_for(M, 64) + 1) / 2 * cols + slots - 1) / slots;
    return (double)narrow * 64 / 505 < (double)wide * 128 / 751 ? 1 : 2;
}

extern "C" int STAGE(gemm07_final_tensor)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                          const float *scale_b, bf16_t *D, int M, int N, int K,
                                          cudaStream_t stream) {
    const int cons = pick_cons(M, N);
    if (!cons) return launch_unsupported("GEMM07_FINAL_TILE must be 128x128 or 64x128");
    return cons == 1 ? launch_final07<false, 1>(A, B, scale_a, scale_b, D, M, N, K, stream)
                     : launch_final07<false, 2>(A, B, scale_a, scale_b, D, M, N, K, stream);
}

extern "C" int STAGE(gemm07_final_block)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                         const float *scale_b, bf16_t *D, int M, int N, int K,
                                         cudaStream_t stream) {
    const int cons = pick_cons(M, N);
    if (!cons) return launch_unsupported("GEMM07_FINAL_TILE must be 128x128 or 64x128");
    return cons == 1 ? launch_final07<true, 1>(A, B, scale_a, scale_b, D, M, N, K, stream)
                     : launch_final07<true, 2>(A, B, scale_a, scale_b, D, M, N, K, stream);
}
