/* Stage 2 — tiled attention with the online softmax (FlashAttention's algorithm), on CUDA cores.
 *
 * Change from stage 1: S is never written. A block owns 64 queries of one (batch, head) and
 * walks over the keys in tiles of 64: it loads the K and V tiles into shared memory, computes
 * the 64 x 64 scores of its queries against them, and folds them into a running result:
 *     m_new = max(m, max_j s_j)                      (the running row max)
 *     alpha = exp(m - m_new)                         (how much the old terms shrink)
 *     p_j   = exp(s_j - m_new)
 *     l     = alpha * l + sum_j p_j                  (the running sum)
 *     acc   = alpha * acc + sum_j p_j v_j            (the unnormalized output, fp32)
 * and after the last tile O = acc / l, LSE = m + log(l) (README, "The online softmax"). Global
 * memory sees Q, K, V once per query tile and O once: no n^2 term at all. The exponentials are
 * expf (the accurate one, MUFU.EX2 after a range reduction), the scale a separate multiply:
 * folding scale * log2(e) into one FFMA before exp2 is stage 4's trick.
 *
 * The block: 256 threads, 4 per query row (t = 4 * row + quad). For each key tile a thread
 * computes 16 scores (keys quad, quad + 4, ...), the 4 lanes of a row meet with lanes_max<4> for
 * the tile's max, and each keeps its own part of l (they share m, so their parts rescale alike;
 * lanes_sum<4> adds them at the end). P goes through shared memory (a 64 x 64 fp32 tile) so that
 * each thread can then add all 64 keys into its D / 4 output columns (2 * quad + 8 * j and the
 * next one). Rows of the Q, K, V tiles are padded by 2 elements and P's by 1, so that the 8
 * rows a warp reads at once start in 8 different banks.
 *
 * Edges: a query row past seq is computed on zeros and not stored; a key past seq, or after the
 * query when causal, scores -inf, so p = 0 (its V row is loaded as zeros). Causal tiles wholly
 * above the diagonal are still computed and masked (skipping them is stage 4's): the causal
 * rows do the same work as the others, half of it thrown away.
 *
 * What to look for: every score costs D shared-memory loads for one FFMA each, in fp32 on the
 * CUDA cores (about 1/15 of the tensor cores' fp16 rate on an H100), and the block's
 * __syncthreads separate loading from computing: nothing overlaps. Stage 3 moves both
 * products to mma.sync. The SASS must show MUFU.EX2 and no local memory (LDL/STL). */
#include "stage.h"
#include "attn.h"
#include "launch.cuh"
#include "reduce.cuh"

#define BQ ATTN_TILED_BQ
#define BK ATTN_TILED_BK
#define THREADS 256

/* rows x D elements from src (rows r0, r0 + 1, ... of a [seq, D] matrix) into a tile with rows
 * of LD elements; rows past seq become zeros. 16-byte global loads, 4-byte shared stores (the
 * padded rows are only 4-byte aligned). */
template <typename T, int D, int LD>
__device__ __forceinline__ void load_tile(T *tile, const T *src, int r0, int rows, int n) {
    constexpr int CHUNKS = D / 8; /* 8 elements per 16 bytes */
    for (int c = threadIdx.x; c < rows * CHUNKS; c += THREADS) {
        const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
        uint4 x = make_uint4(0, 0, 0, 0);
        if (r0 + r < n) x = *(const uint4 *)(src + (long)(r0 + r) * D + col);
        unsigned *dst = (unsigned *)(tile + r * LD + col);
        dst[0] = x.x, dst[1] = x.y, dst[2] = x.z, dst[3] = x.w;
    }
}

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS)
    tiled_online_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                        T *__restrict__ o, float *__restrict__ lse, int n, int q_tiles,
                        float scale, int causal) {
    constexpr int LD = D + 2, LP = BK + 1, COLS = D / 4, KEYS = BK / 4;
    extern __shared__ __align__(16) unsigned char smem[];
    T *qs = (T *)smem, *ks = qs + BQ * LD, *vs = ks + BK * LD;
    float *ps = (float *)(vs + BK * LD);

    const long pair = blockIdx.x / q_tiles; /* b * heads + h */
    const int q0 = (blockIdx.x % q_tiles) * BQ;
    const long base = pair * n * D;
    const int row = threadIdx.x >> 2, quad = threadIdx.x & 3, query = q0 + row;

    load_tile<T, D, LD>(qs, q + base, q0, BQ, n);

    float m = -INFINITY, l = 0.0f, acc[COLS];
#pragma unroll
    for (int j = 0; j < COLS; j++) acc[j] = 0.0f;

    for (int k0 = 0; k0 < n; k0 += BK) {
        __syncthreads(); /* the previous tile's readers are done with ks, vs, ps */
        load_tile<T, D, LD>(ks, k + base, k0, BK, n);
        load_tile<T, D, LD>(vs, v + base, k0, BK, n);
        __syncthreads();

        /* The 16 scores of this thread: keys quad + 4 c of the tile. */
        float s[KEYS];
#pragma unroll
        for (int c = 0; c < KEYS; c++) s[c] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; d += 2) {
            const float2 qv = attn_load2(qs + row * LD + d);
#pragma unroll
            for (int c = 0; c < KEYS; c++) {
                const float2 kv = attn_load2(ks + (quad + 4 * c) * LD + d);
                s[c] = fmaf(qv.x, kv.x, s[c]);
                s[c] = fmaf(qv.y, kv.y, s[c]);
            }
        }
        float tile_max = -INFINITY;
#pragma unroll
        for (int c = 0; c < KEYS; c++) {
            const int key = k0 + quad + 4 * c;
            const bool seen = key < n && !(causal && key > query);
            s[c] = seen ? s[c] * scale : -INFINITY;
            tile_max = fmaxf(tile_max, s[c]);
        }
        tile_max = lanes_max<4>(tile_max);

        /* The online update. Every row has key 0 in its first tile, so m is finite from then
         * on; the guard keeps exp(-inf - (-inf)) out of a row that has seen nothing yet. */
        const float m_new = fmaxf(m, tile_max);
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = expf(m - m_use);
        float part = 0.0f;
#pragma unroll
        for (int c = 0; c < KEYS; c++) {
            const float p = expf(s[c] - m_use);
            ps[row * LP + quad + 4 * c] = p;
            part += p;
        }
        l = alpha * l + part;
        m = m_new;
#pragma unroll
        for (int j = 0; j < COLS; j++) acc[j] *= alpha;
        __syncthreads(); /* the whole P tile is in ps */

        /* acc += P V over the tile's 64 keys, for this thread's D / 4 columns. */
#pragma unroll 2
        for (int key = 0; key < BK; key++) {
            const float p = ps[row * LP + key];
#pragma unroll
            for (int j = 0; j < COLS / 2; j++) {
                const float2 vv = attn_load2(vs + key * LD + 2 * quad + 8 * j);
                acc[2 * j] = fmaf(p, vv.x, acc[2 * j]);
                acc[2 * j + 1] = fmaf(p, vv.y, acc[2 * j + 1]);
            }
        }
    }

    const float l_row = lanes_sum<4>(l); /* every lane: the shuffles need all four */
    if (query < n) {
        const float inv = 1.0f / l_row;
        T *out = o + base + (long)query * D;
#pragma unroll
        for (int j = 0; j < COLS / 2; j++)
            attn_store2(out + 2 * quad + 8 * j, acc[2 * j] * inv, acc[2 * j + 1] * inv);
        if (quad == 0) lse[pair * n + query] = m + logf(l_row);
    }
}

template <typename T, int D> static int launch(const attn_args *a, cudaStream_t stream) {
    const int q_tiles = (a->n + BQ - 1) / BQ;
    const long blocks = (long)q_tiles * a->b * a->h;
    if (blocks > 0x7fffffffL)
        return launch_unsupported("%ld query tiles: more than a grid's 2^31 - 1 blocks", blocks);
    const launch_cfg cfg = {dim3((unsigned)blocks), dim3(THREADS), (size_t)ATTN_TILED_SMEM(D), 1,
                            stream};
    return launch_kernel(tiled_online_kernel<T, D>, cfg, (const T *)a->q, (const T *)a->k,
                         (const T *)a->v, (T *)a->o, a->lse, a->n, q_tiles, a->scale, a->causal);
}

extern "C" int STAGE(attn_tiled_online)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
