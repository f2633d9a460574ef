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
 *
 * Shapes: any M and N >= 1, K % 8 == 0. */
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
#define CLUSTER 2

/* A tile of 64 * CONS rows (one 64-row half per consumer warpgroup) by BN columns. Slots: as
 * many as fit beside the staging, two 8 KiB boxes per consumer. */
template <int BN, int CONS> struct final_shape {
    static constexpr int bm = 64 * CONS, threads = 128 * (1 + CONS);
    static constexpr int slot_bytes = (bm + BN) * BK * 2;
    static constexpr int staging_bytes = 2 * 8192; /* one consumer's two boxes of 64 x 64 */
    static constexpr int depth =
        (GEMM06_SMEM_FINAL - CONS * staging_bytes - 1024) / slot_bytes < 8
            ? (GEMM06_SMEM_FINAL - CONS * staging_bytes - 1024) / slot_bytes
            : 8;
    static constexpr int a_bytes = bm * BK * 2, b_half_bytes = BN / CLUSTER * BK * 2;
    static constexpr int smem = depth * slot_bytes + CONS * staging_bytes + 1024;
};
static_assert(final_shape<256, 2>::depth == 4 && final_shape<256, 2>::smem == GEMM06_SMEM_FINAL,
              "gemm06.h agrees");
static_assert(final_shape<128, 2>::depth == 6, "slots");
static_assert(final_shape<128, 1>::depth == 8 && final_shape<128, 1>::smem <= GEMM06_SMEM_FINAL,
              "slots");

template <typename T, int BN>
static __device__ __forceinline__ void mma_k16(float (&d)[BN / 2], uint64_t a, uint64_t b) {
    if constexpr (std::is_same_v<T, f16_t>) wgmma_f16_ss<BN>(d, a, b, 1);
    else wgmma_bf16_ss<BN>(d, a, b, 1);
}

template <typename T, int BN, int CONS>
static __global__ void __launch_bounds__(final_shape<BN, CONS>::threads, 1)
    final_kernel(const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_c, T *__restrict__ C, int M, int N, int K,
                 const gemm06_tiles pairs, const int tma_store) {
    using S = final_shape<BN, CONS>;
    constexpr int DEPTH = S::depth, BM = S::bm;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    const unsigned ring = smem_addr(align1024(smem));
    /* Broadcast from lane 0: ptxas then knows it is warp-uniform and keeps what derives from it
     * (the consumer's shared-memory addresses, its wgmma descriptors) in uniform registers,
     * not in per-thread ones copied over (R2UR) before every wgmma. */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const unsigned rank = cluster_ctarank();
    const int k_tiles = (K + BK - 1) / BK;
    const int n_pairs = pairs.tiles_m * pairs.tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        if (tma_store) tma_prefetch_map(&map_c);
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
                    mbarrier_arrive_expect_tx(bar, S::slot_bytes);
                    tma_load_2d(a, &map_a, bar, t * BK, m0);
                    tma_load_2d_multicast(a + S::a_bytes + rank * S::b_half_bytes, &map_b, bar,
                                          t * BK, tn * BN + (int)rank * (BN / CLUSTER),
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
        const unsigned staging = ring + DEPTH * S::slot_bytes + c * S::staging_bytes;
        auto release = [&](int s) {
            if (signals)
                for (unsigned r = 0; r < CLUSTER; r++)
                    mbarrier_arrive_remote(mapa_shared(smem_addr(&empty[s]), r));
        };
        int it = 0;
        unsigned boxes = 0; /* boxes staged so far: buffer boxes % 2 is next */
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
                const unsigned a = ring + s * S::slot_bytes + c * 64 * 128;
                const unsigned b = ring + s * S::slot_bytes + S::a_bytes;
                mbarrier_wait_parity(smem_addr(&full[s]), (it / DEPTH) & 1);
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; k++)
                    mma_k16<T, BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k));
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (t > 0) release((it - 1) % DEPTH);
            }
            wgmma_wait_group<0>();
            wgmma_fence_operands(d);
            release((it - 1) % DEPTH);

            if (!tma_store) { /* N % 8 != 0: no map of C can exist */
                store_fragment<BN>(d, C, M, N, m0 + 64 * c, tn * BN);
                continue;
            }
            store_boxes<BN, T>(d, &map_c, staging, boxes, m0 + 64 * c, tn * BN, 1 + c, stores);
        }
        if (stores && tma_store) tma_store_wait<0>();
    }
    cluster_arrive_relaxed();
    cluster_wait();
}

/* The grouped order's group height, in pairs of tile rows: 8 pairs = 16 tile rows = 2048 rows of
 * C, the height stage 5 chose (stages 6 and 7 group 16 pairs, 4096 rows). GEMM06_GROUP_ROWS=n
 * (1..64 pairs) overrides it, read once, for the README's sweep. */
#define FINAL_GROUP_PAIRS 8
static int group_rows_from_env(void) {
    static int rows = -1;
    if (rows < 0) {
        const char *e = getenv("GEMM06_GROUP_ROWS");
        const int v = e ? atoi(e) : 0;
        rows = v >= 1 && v <= 64 ? v : FINAL_GROUP_PAIRS;
    }
    return rows;
}

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

/* The grid: gemm06_balanced_clusters (measured: 64 clusters instead of 66 ran 0.5% faster at
 * 4096^3 and 1% at 8192^3 on an H100). GEMM06_FINAL_CLUSTERS=n launches min(n, resident)
 * instead. */
static long balanced_clusters(long pairs, long resident) {
    const char *e = getenv("GEMM06_FINAL_CLUSTERS");
    if (e && atol(e) > 0) return atol(e) < resident ? atol(e) : resident;
    return gemm06_balanced_clusters(pairs, resident);
}

template <typename T, int BN, int CONS>
static int launch_final(const T *A, const T *B, T *C, int M, int N, int K, int order,
                        cudaStream_t stream) {
    /* the schedule's grid: pairs of tile rows by tile columns */
    using S = final_shape<BN, CONS>;
    const long rows = (blocks_for(M, S::bm) + CLUSTER - 1) / CLUSTER, cols = blocks_for(N, BN);
    if (rows > 65535 || cols > 65535 || rows * cols > 0x7fffffffL)
        return launch_unsupported("more than 65535 tile rows or columns");
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for((const bf16_t *)A, (const bf16_t *)B, M, N, K, S::bm,
                                              BN / CLUSTER, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    /* The TMA store needs rows of C 16 bytes apart and C itself 16-byte aligned. */
    const CUtensorMap *map_c = NULL;
    if (N % 8 == 0 && (uintptr_t)C % 16 == 0) {
        map_c = gemm06_store_map_for((const bf16_t *)C, M, N, err, sizeof err);
        if (!map_c) return launch_unsupported("%s", err);
    }
    static const CUtensorMap unused = {}; /* passed when the epilogue stores from registers */
    gemm06_tiles pairs = {(int)rows, (int)cols, order, group_rows_from_env()};
    if (gemm06_schedule(&pairs, order, stream) < 0)
        return launch_unsupported("could not upload the Hilbert tile schedule");
    launch_cfg cfg = {dim3(CLUSTER), dim3(S::threads), (size_t)S::smem, CLUSTER, stream};
    const void *kernel = (const void *)final_kernel<T, BN, CONS>;
    static int resident; /* per instantiation */
    if (!resident) resident = launch_resident_clusters(kernel, &cfg);
    if (resident > 0)
        cfg.grid = dim3((unsigned)(CLUSTER * balanced_clusters(rows * cols, resident)));
    return launch_kernel(final_kernel<T, BN, CONS>, cfg, maps->map_a, maps->map_b,
                         map_c ? *map_c : unused, C, M, N, K, pairs, map_c != NULL);
}

/* The size rule: the tile with the least estimated time, rounds x (tile area / the tile's
 * rate), where a round is one tile per resident cluster pair slot (SMs / 2 pairs of tiles, a
 * pair being the cluster's two tiles stacked along M) and the rate is the tile's steady
 * throughput, measured with each tile forced at 8192^3 on an H100 (README, "Stage 8"). A wide
 * tile computes faster per flop; a narrow one fills the SMs at sizes where the wide one leaves
 * them idle. Ties go to the wider tile (listed first). */
typedef struct {
    int code, bm, bn, rate; /* rate: TFLOPS at 8192^3 */
} final_tile;
static const final_tile final_tiles[] = {
    {128256, 128, 256, 816}, {128128, 128, 128, 751}, {64128, 64, 128, 505}};

static int pick_tile(int M, int N) {
    const long slots = gemm06_sms() / CLUSTER;
    int best = 0;
    double best_cost = 0;
    for (int t = 0; t < (int)(sizeof final_tiles / sizeof final_tiles[0]); t++) {
        const final_tile *f = &final_tiles[t];
        const long pairs = (blocks_for(M, f->bm) + CLUSTER - 1) / CLUSTER * blocks_for(N, f->bn);
        const long rounds = (pairs + slots - 1) / slots;
        const double cost = (double)rounds * f->bm * f->bn / f->rate;
        if (t == 0 || cost < best_cost) best = t, best_cost = cost;
    }
    return final_tiles[best].code;
}

template <typename T>
static int launch_sized(const T *A, const T *B, T *C, int M, int N, int K, cudaStream_t stream) {
    const int order = gemm06_order_from_env(GEMM06_ORDER_GROUPED);
    if (order < 0) return launch_unsupported("GEMM06_TILE_ORDER must be rows, grouped or hilbert");
    int tile = forced_tile();
    if (tile < 0)
        return launch_unsupported("GEMM06_FINAL_TILE must be 128x256, 128x128 or 64x128");
    if (tile == 0) tile = pick_tile(M, N);
    switch (tile) {
    case 128256: return launch_final<T, 256, 2>(A, B, C, M, N, K, order, stream);
    case 128128: return launch_final<T, 128, 2>(A, B, C, M, N, K, order, stream);
    default: return launch_final<T, 128, 1>(A, B, C, M, N, K, order, stream);
    }
}

extern "C" int STAGE(gemm06_final)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                   int K, cudaStream_t stream) {
    return launch_sized<bf16_t>(A, B, C, M, N, K, stream);
}

extern "C" int STAGE(gemm06_final_f16)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                       int K, cudaStream_t stream) {
    return launch_sized<f16_t>(A, B, C, M, N, K, stream);
}
