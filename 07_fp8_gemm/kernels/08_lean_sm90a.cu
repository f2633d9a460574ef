/* Stage 8 — a lean K loop: stage 7 with everything its K loop recomputed every K tile made
 * once, so the warp that issues the wgmmas has issue slots to spare.
 *
 * Why it matters here: the FP8 wgmma is short. A K tile is four m64n128k32 per consumer, and
 * every other instruction of the issuing warp, its 64 promotion FFMAs included, sits between
 * one wgmma and the next. Stage 7's loop has about a hundred of them a K tile besides the
 * FFMAs (ptxas 13.0; make test prints the count), and 16 R2UR; cuBLASLt's loop executes
 * about 52 (NOTES.md, "The K loop's instructions").
 *
 * What changes from stage 7 (the consumer's K loop; the producer and the store are stage 7's):
 *  - Uniform registers: threadIdx.x / 128 is the same for a whole warp, but ptxas does not
 *    know it, so every address derived from the consumer's index (its A band in each slot,
 *    hence every wgmma descriptor) lived in per-thread registers and was copied into uniform
 *    ones (R2UR) before each wgmma. The index broadcast from lane 0 (__shfl_sync) is uniform
 *    to ptxas, and so is all that derives from it; the ring's shared address too.
 *  - Descriptors by adds: slot 0's A and B descriptors made once; each operand's is an add
 *    away (desc_advance: the start address field is addr >> 4 in the low bits, and shared
 *    memory ends before a sum could carry out of it), where desc_sw128 was an and, a shift, an
 *    or and a move per operand, eight operands a K tile.
 *  - The ring position as a slot and a phase, stepped: it % 5 and (it / 5) & 1 cost a
 *    multiply-high and three more instructions each, twice a K tile.
 *  - Shared addresses made once: the barriers' (through a shuffle) and A's scales' (read by
 *    address, ld_shared_f32), which ptxas otherwise rebuilt from the CTA's rank
 *    (SR_CgaCtaId) or from the shared window's base inside the loop.
 *  - B's scales: a pointer stepped by one a K tile, not scale_b + tn * L4 + t rebuilt as a
 *    64-bit address from scale_b reloaded from the constant bank; and a unit's first scale
 *    issued at the unit's start, before its first wait: its line is in no cache after the
 *    bench's L2 flush, and stage 7's consumer waited for DRAM there, once a tile. (Loaded a
 *    whole unit ahead instead, -DGEMM07_AB_FIRST_B_AHEAD, it measured 0-7% slower: NOTES.md,
 *    "A unit's first B scale".)
 * The loop is then stage 9's for the 128 x 128 tile in clusters of two, instruction for
 * instruction: 48.5 a K tile besides the FFMAs, the 4 QGMMAs included.
 *
 * What to look for. SASS: no R2UR in the K loop; its count against stages 6 and 7 (make test:
 * sass_checks.sh); the descriptors' arithmetic as UIADD3 on uniform registers. The table: the
 * squares and M = 4096 against stage 7, and M = 64 and 128, where a tile's first B scale was
 * a DRAM round trip.
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
static_assert(STAGING_AT + CONSUMERS * STAGING_BYTES + 1024 == GEMM07_SMEM_LEAN,
              "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    lean_kernel(const __grid_constant__ CUtensorMap map_a,
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
    /* Through a shuffle: ptxas cannot recompute it from the shared window's base then, which
     * it did in the K loop, a dozen instructions a K tile, rather than keep it. */
    const unsigned ring = __shfl_sync(0xffffffffu, smem_addr(base), 0);
    const unsigned scales = ring + SCALES_AT; /* DEPTH x 128 floats of A's scales */
    /* Broadcast from lane 0: ptxas then knows it is warp-uniform and keeps what derives from
     * it (the consumer's shared addresses, its wgmma descriptors) in uniform registers, not in
     * per-thread ones copied over (R2UR) before every wgmma. */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
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
        const int row = 16 * (t128 / 32) + (t128 % 32) / 4; /* in its 64 rows; and row + 8 */
        const unsigned staging = ring + STAGING_AT + c * STAGING_BYTES;
        /* Slot 0's A and B tiles: every other operand's descriptor is an add away
         * (desc_advance), where desc_sw128 of each address is an and, a shift, an or and a move
         * per operand, eight operands a K tile. */
        const uint64_t ring_a = desc_sw128(ring), ring_b = desc_sw128(ring + A_BYTES);
        /* The barriers' shared addresses made once, through a shuffle like the ring's: ptxas
         * rebuilt smem_addr (an S2UR of the CTA's rank and more) in the loop otherwise. */
        const unsigned full0 = __shfl_sync(0xffffffffu, smem_addr(&full[0]), 0);
        const unsigned empty0 = __shfl_sync(0xffffffffu, smem_addr(&empty[0]), 0);
        /* The slot goes back to both producers: each multicast half of B into it. Predicated
         * inside the asm, no branch (stage 5: a branch would serialize the wgmmas). */
        auto release = [&](int s) {
#pragma unroll
            for (unsigned r = 0; r < CLUSTER; r++)
                mbarrier_arrive_remote_if(mapa_shared(empty0 + 8 * s, r), signals);
        };
        /* The ring position, K tile after K tile across the tiles: slot and phase kept apart,
         * since it % DEPTH and (it / DEPTH) & 1 (DEPTH 5) cost a multiply-high and three more
         * instructions each, twice a K tile. */
        int slot = 0;
        unsigned phase = 0;
        auto advance = [](int &s, unsigned &p) {
            if (++s == DEPTH) s = 0, p ^= 1;
        };
        unsigned handed = 0; /* units staged so far: the unstaged barrier's phase is its parity */
#if defined(GEMM07_AB_FIRST_B_AHEAD) /* (in: a unit's first B scale loaded a unit ahead) */
        auto first_b_scale = [&](int v) {
            float b = 1.0f;
            if (v < n_units) {
                int vm, vn;
                gemm06_tile_at(pairs, v, vm, vn);
                b = __ldg(scale_b + (long)vn * k_tiles4);
            }
            return b;
        };
        float b_first = first_b_scale(cluster_id);
#endif
        float sum[BN / 2];
        /* B's scales: the one the next promotion takes, and a pointer to the one after,
         * stepped by one a K tile (not scale_b + tn * k_tiles4 + t, a 64-bit address rebuilt
         * every K tile from scale_b reloaded from the constant bank). */
        float b_ahead = 1.0f;
        const float *b_next = scale_b;
        /* One K tile of this consumer's band from slot s into acc. */
        auto issue = [&](float(&acc)[BN / 2], int s) {
            const unsigned at = s * SLOT_BYTES;
            const uint64_t a = desc_advance(ring_a, at + c * 64 * BK);
            const uint64_t b = desc_advance(ring_b, at);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++)
                wgmma_e4m3_e4m3_ss<BN>(acc, desc_advance(a, 32 * k), desc_advance(b, 32 * k),
                                       k > 0);
            wgmma_commit_group();
        };
        auto wait_full = [&](int s, unsigned p) { mbarrier_wait_parity_in_asm(full0 + 8 * s, p); };
        /* The K tile in acc (slot `slot`), done once at most `pending` groups are: its slot
         * handed back, its sum promoted. With one pending a K tile follows, whose B scale is
         * loaded now. A's scales read by their shared address (ld_shared_f32), not through a
         * generic pointer that ptxas rebuilds from the shared window's base. */
        auto finish = [&](float(&acc)[BN / 2], auto pending) {
            const int s = slot;
            const unsigned rows = ring + SCALES_AT + s * SCALE_BYTES + c * 256;
            const float f0 = ld_shared_f32(rows + 4 * row) * b_ahead; /* before the release */
            const float f1 = ld_shared_f32(rows + 4 * (row + 8)) * b_ahead;
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
        /* The K tile in acc: issue the next into next, then finish this one. */
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
        for (int u = cluster_id; u < n_units; u += clusters) {
            int pm, tn;
            gemm06_tile_at(pairs, u, pm, tn);
            const int m0 = (pm * CLUSTER + (int)rank) * BM;
            /* B's scale of the unit's first K tile, issued before the unit's first wait: its line
             * is seldom in L1 (another tile column) and after the L2 flush of a timed launch not in
             * L2 either, and a load at the first promotion waited ~1 us for DRAM, once a tile;
             * here the slot's wait and the first wgmmas hide it. The rest of a unit's scales are
             * in that line or the next. */
#if defined(GEMM07_AB_FIRST_B_AHEAD)
            b_ahead = b_first;
            b_first = first_b_scale(u + clusters); /* in flight through this unit's K loop */
#else
            b_ahead = __ldg(scale_b + (long)tn * k_tiles4);
#endif
            b_next = scale_b + (long)tn * k_tiles4 + 1;
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f;
            float part[BN / 2], other[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; i++) part[i] = 0.0f;
            wgmma_fence_operands(part);
            /* a band past M: its slots handed back, nothing multiplied (stage 6) */
            if (m0 + 64 * c < M) {
                wait_full(slot, phase);
                issue(part, slot);
                rest_of_unit(k_tiles, part, other);
            } else {
                for (int t = 0; t < k_tiles; t++, advance(slot, phase)) {
                    mbarrier_wait_parity(full0 + 8 * slot, phase);
                    release(slot);
                }
            }
            if (!tma_store) {
                store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, tn * BN);
                continue;
            }
            /* Stage, fence, hand over (stage 7). */
            mbarrier_wait_parity(smem_addr(&unstaged[c]), (handed & 1) ^ 1);
            stage_box<BN, bf16_t>(sum, staging, 0);
            stage_box<BN, bf16_t>(sum, staging + 8192, 1);
            fence_proxy_async_shared();
            mbarrier_arrive(smem_addr(&staged[c]));
            handed++;
        }
    }
    /* no block leaves while its partner may still arrive on its barriers */
    cluster_arrive_relaxed();
    cluster_wait();
}

extern "C" int STAGE(gemm07_lean)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
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
    launch_cfg cfg = {dim3(CLUSTER), dim3(THREADS), (size_t)GEMM07_SMEM_LEAN, CLUSTER,
                      stream};
    static int resident; /* clusters that fit at once, asked once */
    if (!resident) resident = launch_resident_clusters((const void *)lean_kernel, &cfg);
    /* pairs of tile rows (a cluster's two tiles) by tile columns, in the grouped order */
    const gemm06_tiles pairs = {(int)rows, (int)cols, GEMM06_ORDER_GROUPED, 8};
    if (resident > 0)
        cfg.grid = dim3((unsigned)(CLUSTER * launch_balanced_grid(rows * cols, resident)));
    return launch_kernel(lean_kernel, cfg, maps->map_a, maps->map_b, *map_sa,
                         map_d ? *map_d : unused, D, M, N, K, scale_b, pairs, map_d != NULL);
}
