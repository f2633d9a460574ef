/* What the Hopper stages (5 and 6) share: the two wgmma products for either 16-bit type, the
 * operand descriptors, the accumulator fragment seen as fa2.cuh's n8 tiles, and, on the host,
 * the 3D tensor maps over [b h, n, D]. Stage 5's opening comment explains the layouts. */
#ifndef ATTN_HOPPER_CUH
#define ATTN_HOPPER_CUH

#include <string.h>

#include <type_traits>

#include "attn.h"
#include "launch.cuh"
#include "tensor_map.h"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define ATTN_PANEL_COLS 64 /* a TMA box's width: 64 16-bit values = 128 bytes */

/* The two products for T = __half or __nv_bfloat16. */
template <typename T, int N>
static __device__ __forceinline__ void mma_ss(float (&d)[N / 2], uint64_t a, uint64_t b,
                                              int scale_d) {
    if constexpr (std::is_same_v<T, __half>) wgmma_f16_ss<N>(d, a, b, scale_d);
    else wgmma_bf16_ss<N>(d, a, b, scale_d);
}
template <typename T, int N>
static __device__ __forceinline__ void mma_rs_tb(float (&d)[N / 2], const unsigned (&a)[4],
                                                 uint64_t b) {
    if constexpr (std::is_same_v<T, __half>) wgmma_f16_rs_tb<N>(d, a, b, 1);
    else wgmma_bf16_rs_tb<N>(d, a, b, 1);
}

/* K-major operand, 128-byte rows, 128-byte swizzle: SBO = 1024 (8 rows), LBO unused (16). */
static __device__ __forceinline__ uint64_t desc_kmajor(unsigned addr) {
    return wgmma_desc(addr, WGMMA_SWIZZLE_128B, 16, 1024);
}
/* V as B of P V (N-major): 8 keys to the next 8 at SBO = 1024, 64 columns of D to the next 64
 * at LBO = one panel of ATTN_WGMMA_BK rows. */
static __device__ __forceinline__ uint64_t desc_v(unsigned addr) {
    return wgmma_desc(addr, WGMMA_SWIZZLE_128B, ATTN_WGMMA_BK * 128, 1024);
}

/* The wgmma accumulator fragment as stage 4's n8 tiles. Register i of an m64nN fragment is row
 * 16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2: for each 8 columns j
 * (registers 4 j .. 4 j + 3), warp w's 16 rows in mma.sync's m16n8 C layout, which is what
 * fa2.cuh's float[N / 8][4] holds ([j][e]: row g + 8 (e / 2), column 8 j + 2 (l % 4) + e % 2,
 * with g = l / 4 of the warp's 16 rows). So the mask, the softmax and the store of fa2.cuh
 * apply unchanged, on the same registers. */
template <int R>
static __device__ __forceinline__ float (&as_n8_tiles(float (&d)[R]))[R / 4][4] {
    return *reinterpret_cast<float(*)[R / 4][4]>(&d);
}

/* ---- the producer side: barriers and loads ------------------------------------------------- */

/* The mbarriers: Q's, and a "full" (the TMA landed) and an "empty" (the consumers handed it
 * back) barrier for every K slot (KS of them) and every V slot (VS; stage 6 at D = 128 has one
 * V slot more than K slots). */
template <int KS, int VS = KS> struct attn_ring_bars {
    unsigned long long q_full, k_full[KS], v_full[VS], k_empty[KS], v_empty[VS];
};

/* Thread 0, before the block's __syncthreads(): the maps prefetched, the barriers initialized
 * (a full barrier waits for the producer's one arrive.expect_tx; an empty one for one arrival
 * per consumer warp), the inits made visible to the TMA unit. */
template <int KS, int VS>
static __device__ __forceinline__ void attn_ring_init(attn_ring_bars<KS, VS> &b,
                                                      const CUtensorMap *mq, const CUtensorMap *mk,
                                                      const CUtensorMap *mv,
                                                      unsigned consumer_warps) {
    tma_prefetch_map(mq);
    tma_prefetch_map(mk);
    tma_prefetch_map(mv);
    mbarrier_init(smem_addr(&b.q_full), 1);
    for (int s = 0; s < KS; s++) {
        mbarrier_init(smem_addr(&b.k_full[s]), 1);
        mbarrier_init(smem_addr(&b.k_empty[s]), consumer_warps);
    }
    for (int s = 0; s < VS; s++) {
        mbarrier_init(smem_addr(&b.v_full[s]), 1);
        mbarrier_init(smem_addr(&b.v_empty[s]), consumer_warps);
    }
    fence_proxy_async_shared();
}

/* The producer's one thread, in two pieces that stage 6 calls once per work item (it is
 * persistent) and attn_produce below calls once (stage 5).
 * attn_load_q: the Q tile (ATTN_WGMMA_BQ rows from q0) into q_s, announced on barrier qb.
 * attn_load_kv: K_j and V_j for every key tile j into slot (ring0 + j) % STAGES of their rings,
 * each once the consumers have handed the slot back. ring0 is how many tiles the rings have
 * carried before (0 for a block's only or first item): the slots and their parities run on
 * across items, never reset, so the wait on slot s's empty barrier in round r is parity
 * (r & 1) ^ 1 (passes at once in round 0). A tile is D / 64 boxes of 64 columns x
 * ATTN_WGMMA_BK rows, one TMA each, into panels of rows x 128 bytes. */
template <int D>
static __device__ __forceinline__ void attn_load_q(const CUtensorMap *mq, unsigned q_s,
                                                   unsigned qb, int q0, int pair) {
    constexpr int PANELS = D / ATTN_PANEL_COLS;
    constexpr unsigned Q_PANEL = ATTN_WGMMA_BQ * 128;
    mbarrier_arrive_expect_tx(qb, PANELS * Q_PANEL);
#pragma unroll
    for (int p = 0; p < PANELS; p++)
        tma_load_3d(q_s + p * Q_PANEL, mq, qb, ATTN_PANEL_COLS * p, q0, pair);
}

template <int KS, int D, int VS = KS>
static __device__ __forceinline__ void attn_load_kv(attn_ring_bars<KS, VS> &b,
                                                    const CUtensorMap *mk, const CUtensorMap *mv,
                                                    unsigned k_s, unsigned v_s, int pair,
                                                    int k_tiles, int ring0) {
    constexpr int PANELS = D / ATTN_PANEL_COLS;
    constexpr unsigned KV_PANEL = ATTN_WGMMA_BK * 128;
    constexpr unsigned KV_BYTES = PANELS * KV_PANEL;
    auto load = [&](const CUtensorMap *map, unsigned ring, unsigned long long *full,
                    unsigned long long *empty, int stages, int j) {
        const int r = ring0 + j, s = r % stages;
        const unsigned bar = smem_addr(&full[s]);
        mbarrier_wait_parity(smem_addr(&empty[s]), ((r / stages) & 1) ^ 1);
        mbarrier_arrive_expect_tx(bar, KV_BYTES);
#pragma unroll
        for (int p = 0; p < PANELS; p++)
            tma_load_3d(ring + s * KV_BYTES + p * KV_PANEL, map, bar, ATTN_PANEL_COLS * p,
                        j * ATTN_WGMMA_BK, pair);
    };
    for (int j = 0; j < k_tiles; j++) {
        load(mk, k_s, b.k_full, b.k_empty, KS, j);
        load(mv, v_s, b.v_full, b.v_empty, VS, j);
    }
}

/* Stage 5's producer: one block, one item: Q once, then its k_tiles K/V tiles from slot 0. */
template <int STAGES, int D>
static __device__ __forceinline__ void attn_produce(attn_ring_bars<STAGES> &b,
                                                    const CUtensorMap *mq, const CUtensorMap *mk,
                                                    const CUtensorMap *mv, unsigned q_s,
                                                    unsigned k_s, unsigned v_s, int q0, int pair,
                                                    int k_tiles) {
    attn_load_q<D>(mq, q_s, smem_addr(&b.q_full), q0, pair);
    attn_load_kv<STAGES, D>(b, mk, mv, k_s, v_s, pair, k_tiles, 0);
}

/* ---- host: the tensor maps ------------------------------------------------------------------- */

/* A [pairs, n, D] tensor of 16-bit values as TMA sees it: dims {D, n, pairs} (innermost first),
 * boxes of 64 columns x `rows` rows x 1 (b, h), 128-byte swizzle, zeros past row n. */
static inline int encode_3d(CUtensorMap *map, const void *base, attn_dtype t, int n, int pairs,
                            int d, unsigned rows, char *err, size_t len) {
    tensor_map_desc m;
    memset(&m, 0, sizeof m);
    m.base = base;
    m.type = t == ATTN_F16 ? TMAP_F16 : TMAP_BF16;
    m.rank = 3;
    m.dims[0] = (uint64_t)d, m.dims[1] = (uint64_t)n, m.dims[2] = (uint64_t)pairs;
    m.strides[0] = (uint64_t)d * 2, m.strides[1] = (uint64_t)n * d * 2;
    m.box[0] = ATTN_PANEL_COLS, m.box[1] = rows, m.box[2] = 1;
    m.swizzle = TMAP_SWIZZLE_128B;
    m.fill = TMAP_FILL_ZERO;
    return tensor_map_encode(map, &m, err, len);
}

/* The maps of one problem, kept for the next launch (the timed launches of a shape reuse them:
 * encoding is a driver call). Keyed by everything they encode. Q, K and V are loaded in boxes
 * of 128 rows; O (stage 6) is stored in boxes of 64, a consumer's rows. */
typedef struct {
    const void *q, *k, *v, *o;
    int n, pairs, d;
    attn_dtype dtype;
    CUtensorMap mq, mk, mv, mo;
} wgmma_maps;

static inline const wgmma_maps *maps_for(const attn_args *a, char *err, size_t len) {
    enum { SLOTS = 4 };
    static wgmma_maps kept[SLOTS];
    static int filled, victim;
    const int pairs = a->b * a->h;
    for (int i = 0; i < filled; i++) {
        const wgmma_maps *w = &kept[i];
        if (w->q == a->q && w->k == a->k && w->v == a->v && w->o == a->o && w->n == a->n &&
            w->pairs == pairs && w->d == a->d && w->dtype == a->dtype)
            return w;
    }
    wgmma_maps w = {a->q, a->k, a->v, a->o, a->n, pairs, a->d, a->dtype, {}, {}, {}, {}};
    const unsigned bq = ATTN_WGMMA_BQ, bk = ATTN_WGMMA_BK;
    if (encode_3d(&w.mq, a->q, a->dtype, a->n, pairs, a->d, bq, err, len) != TENSOR_MAP_OK ||
        encode_3d(&w.mk, a->k, a->dtype, a->n, pairs, a->d, bk, err, len) != TENSOR_MAP_OK ||
        encode_3d(&w.mv, a->v, a->dtype, a->n, pairs, a->d, bk, err, len) != TENSOR_MAP_OK ||
        encode_3d(&w.mo, a->o, a->dtype, a->n, pairs, a->d, 64, err, len) != TENSOR_MAP_OK)
        return NULL;
    const int at = filled < SLOTS ? filled++ : (victim++ % SLOTS);
    kept[at] = w;
    return &kept[at];
}

/* One block of `threads` per 128 queries of a (batch, head), `smem` bytes of dynamic shared
 * memory, the maps of the problem (kept between launches). */
template <typename T>
static inline int attn_hopper_launch(void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, T *,
                                                    float *, int, int, float, int),
                                     unsigned threads, size_t smem, const attn_args *a,
                                     cudaStream_t stream) {
    const int q_tiles = (a->n + ATTN_WGMMA_BQ - 1) / ATTN_WGMMA_BQ;
    const long blocks = (long)q_tiles * a->b * a->h;
    if (blocks > 0x7fffffffL)
        return launch_unsupported("%ld query tiles: more than a grid's 2^31 - 1 blocks", blocks);
    char err[256];
    const wgmma_maps *w = maps_for(a, err, sizeof err);
    if (!w) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3((unsigned)blocks), dim3(threads), smem, 1, stream};
    return launch_kernel(kernel, cfg, w->mq, w->mk, w->mv, (T *)a->o, a->lse, a->n, q_tiles,
                         a->scale, a->causal);
}

#endif
