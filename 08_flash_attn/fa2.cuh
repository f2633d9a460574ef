/* The fragment-level pieces of FlashAttention-2 on mma.sync, shared by stages 3 and 4 (the
 * stages differ in how tiles reach shared memory and when; what a warp does with a tile once
 * it is there is the same, and lives here once).
 *
 * The warp layout (README, "Stage 3"): each warp owns 16 query rows (stage 3) or 32 (stage 4:
 * two m16 tiles, MT = 2 below) and walks over every key of the tile, so a row's max, sum and
 * output live in one warp and never meet another warp's. In each m16 tile of 16 rows, lane t
 * holds, for its group g = t / 4 and pair p = 2 (t % 4):
 *   scores  s[j][0..1] = S(row g,     keys 8 j + p, + 1)   s[j][2..3] = S(row g + 8, same keys)
 *   output  acc[d][0..1] = O(row g,   cols 8 d + p, + 1)   acc[d][2..3] = O(row g + 8, same)
 * (the m16n8k16 C layout, common/ptx/mma.cuh), so rows g and g + 8 are held by the 4 lanes
 * 4 g .. 4 g + 3: a row's max and sum take two xor shuffles (lanes_max<4>, lanes_sum<4>).
 * The products take all MT m-tiles at once (each K/V fragment feeds MT mma's); the mask, the
 * softmax and the store below work on one m-tile and are called once per m-tile.
 *
 * Shared-memory tiles are rows of D 16-bit elements, addressed in 16-byte chunks (8 elements)
 * by attn_chunk_off: padded rows (stage 3) or XOR-swizzled unpadded rows (stage 4). Every
 * ldmatrix below reads 8 rows at one logical chunk; either layout puts those 8 chunks in 8
 * different 16-byte bank groups. */
#ifndef ATTN_FA2_CUH
#define ATTN_FA2_CUH

#include "attn.h"
#include "ptx/cp_async.cuh"
#include "ptx/ex2.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"
#include "reduce.cuh"

/* ---- types: the mma and the packing of two floats into one operand register ------------- */

template <typename T> __device__ __forceinline__ void attn_mma(float d[4], const unsigned a[4],
                                                              const unsigned b[2]);
template <> __device__ __forceinline__ void attn_mma<__half>(float d[4], const unsigned a[4],
                                                            const unsigned b[2]) {
    mma_m16n8k16_f32(d, a, b);
}
template <> __device__ __forceinline__ void attn_mma<__nv_bfloat16>(float d[4], const unsigned a[4],
                                                                   const unsigned b[2]) {
    mma_m16n8k16_bf16_f32(d, a, b);
}

/* lo in the low 16 bits: the lower column (key) of an A-fragment register. */
template <typename T> __device__ __forceinline__ unsigned attn_pack(float lo, float hi);
template <> __device__ __forceinline__ unsigned attn_pack<__half>(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const unsigned *)&h;
}
template <> __device__ __forceinline__ unsigned attn_pack<__nv_bfloat16>(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *(const unsigned *)&h;
}

/* ---- shared-memory tiles ------------------------------------------------------------------ */

/* Byte offset of 16-byte chunk `chunk` of row `row` in a tile of D-element rows.
 * Padded (SWZ false): rows of D + 8 elements, so consecutive rows start 16 bytes further
 * along the banks: 8 rows at one chunk hit 8 bank groups. Costs 8 elements a row.
 * Swizzled (SWZ true): unpadded rows, chunk c stored at c ^ (row & 7). A row is 128 or 256
 * bytes (a multiple of the 128-byte bank width), so the bank group of a chunk is its physical
 * index mod 8, and 8 consecutive rows give c's low 3 bits 8 different XORs. */
template <int D, bool SWZ> __device__ __forceinline__ unsigned attn_chunk_off(int row, int chunk) {
    if (SWZ) return (unsigned)(row * D * 2 + ((chunk ^ (row & 7)) << 4));
    return (unsigned)(row * (D + 8) * 2 + (chunk << 4));
}

/* ROWS rows of a [n, D] matrix from row r0 into a tile, by cp.async (16 bytes a copy, THREADS
 * threads). Rows past n are zero-filled (a zero-byte copy: it reads nothing, but is given the
 * matrix's first row as a valid address): a zero V row times p = 0 adds 0, where garbage could
 * be a NaN. The caller commits.
 * Copy i of thread t is chunk c = t + i THREADS of the tile: row c / CH, chunk c % CH. As
 * THREADS is a multiple of CH, that is row t / CH + i STEP (STEP = THREADS / CH rows a pass) at
 * the thread's one chunk t % CH; and as STEP is a multiple of 8, row & 7 (the swizzle) is the
 * same in every pass: the shared address of pass i is pass 0's plus i STEP rows, an immediate.
 * (Written so, the compiler keeps one address register where it kept one a pass.) */
template <typename T, int D, int ROWS, int THREADS, bool SWZ>
__device__ __forceinline__ void attn_load_tile(unsigned char *tile, const T *mat, int r0, int n) {
#if defined(ATTN_AB_LOAD_PER_CHUNK) /* A/B (08_flash_attn/ab.list): the first version's loads */
    constexpr int CH = D / 8; /* each copy's addresses made from its chunk index: more registers */
#pragma unroll
    for (int i = 0; i < ROWS * CH / THREADS; i++) {
        const int c = (int)threadIdx.x + i * THREADS, row = c / CH, chunk = c % CH;
        const bool in = r0 + row < n;
        cp_async_16_zfill(tile + attn_chunk_off<D, SWZ>(row, chunk),
                          in ? mat + (long)(r0 + row) * D + chunk * 8 : mat, in ? 16 : 0);
    }
#else
    constexpr int CH = D / 8, STEP = THREADS / CH, ROW_BYTES = SWZ ? D * 2 : (D + 8) * 2;
    static_assert(THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0,
                  "every thread copies one chunk column, the same number of times");
    const int row = (int)threadIdx.x / CH, chunk = (int)threadIdx.x % CH;
    unsigned char *dst = tile + attn_chunk_off<D, SWZ>(row, chunk);
    const T *src = mat + (long)(r0 + row) * D + chunk * 8;
#pragma unroll
    for (int i = 0; i < ROWS / STEP; i++) {
        const bool in = r0 + row + i * STEP < n;
        cp_async_16_zfill(dst + i * STEP * ROW_BYTES, in ? src + (long)i * STEP * D : mat,
                          in ? 16 : 0);
    }
#endif
}

/* ---- the two products ------------------------------------------------------------------------ */

/* A warp's rows are MT m-tiles of 16 (stage 3: MT = 1; stage 4: MT = 2, 32 rows): m-tile mt is
 * tile rows row0 + 16 mt .. + 15. Every K or V fragment a warp reads from shared memory feeds
 * MT mma's, one per m-tile. */

/* The A fragment of k-step kk (columns 16 kk .. 16 kk + 15) of the 16 tile rows from row0: the
 * x4's matrices 0-3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15,
 * k 8-15): registers a0..a3 of the A layout. Lane l addresses row l % 16 at chunk
 * 2 kk + l / 16. */
template <int D, bool SWZ>
__device__ __forceinline__ void attn_load_a(unsigned (&a)[4], unsigned tile, int row0, int kk,
                                            int lane) {
    ldmatrix_x4(a[0], a[1], a[2], a[3],
                tile + attn_chunk_off<D, SWZ>(row0 + lane % 16, 2 * kk + lane / 16));
}

/* The warp's Q rows as A fragments, every k-step, to keep in registers (stage 3). */
template <int D, int MT, bool SWZ>
__device__ __forceinline__ void attn_load_q(unsigned (&q)[MT][D / 16][4], unsigned tile, int row0,
                                            int lane) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            attn_load_a<D, SWZ>(q[mt][kk], tile, row0 + 16 * mt, kk, lane);
}

/* One k-step (16 columns of D) of s += Q K^T for the warp's MT m-tiles and the tile's BK keys,
 * given the m-tiles' A fragments a of that k-step. B = K^T (k = D, n = keys) is K itself read
 * n-major, so no .trans: one x4 gives keys 8 j .. 8 j + 15 at 16 columns of D, matrices
 * (keys 8j+0-7, k 0-7), (8j+0-7, k 8-15), (8j+8-15, k 0-7), (8j+8-15, k 8-15) = b0, b1 of
 * n-tile j, then b0, b1 of n-tile j + 1. Lane l addresses key 8 j + l % 8 + 8 (l / 16) at
 * chunk 2 kk + (l / 8) % 2. */
template <typename T, int D, int BK, int MT, bool SWZ>
__device__ __forceinline__ void attn_qk_step(float (&s)[MT][BK / 8][4], const unsigned (&a)[MT][4],
                                             unsigned ktile, int kk, int lane) {
#pragma unroll
    for (int j = 0; j < BK / 8; j += 2) {
        unsigned b[4];
        ldmatrix_x4(b[0], b[1], b[2], b[3],
                    ktile + attn_chunk_off<D, SWZ>(8 * j + lane % 8 + 8 * (lane / 16),
                                                   2 * kk + (lane / 8) % 2));
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            attn_mma<T>(s[mt][j], a[mt], b);
            attn_mma<T>(s[mt][j + 1], a[mt], b + 2);
        }
    }
}

template <int MT, int NT> __device__ __forceinline__ void attn_zero(float (&s)[MT][NT][4]) {
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < NT; j++) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
}

/* s = Q K^T with Q's fragments in registers (attn_load_q). */
template <typename T, int D, int BK, int MT, bool SWZ>
__device__ __forceinline__ void attn_qk(float (&s)[MT][BK / 8][4],
                                        const unsigned (&q)[MT][D / 16][4], unsigned ktile,
                                        int lane) {
    attn_zero(s);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        unsigned a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int r = 0; r < 4; r++) a[mt][r] = q[mt][kk][r];
        attn_qk_step<T, D, BK, MT, SWZ>(s, a, ktile, kk, lane);
    }
}

/* s = Q K^T with Q's fragments read from the Q tile (rows row0 ..) at each k-step, as
 * FlashAttention-2 does where registers are short: MT ldmatrix for Q, BK / 16 for K, then
 * 2 MT BK / 16 mma's. */
template <typename T, int D, int BK, int MT, bool SWZ>
__device__ __forceinline__ void attn_qk_smem(float (&s)[MT][BK / 8][4], unsigned qtile, int row0,
                                             unsigned ktile, int lane) {
    attn_zero(s);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        unsigned a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) attn_load_a<D, SWZ>(a[mt], qtile, row0 + 16 * mt, kk, lane);
        attn_qk_step<T, D, BK, MT, SWZ>(s, a, ktile, kk, lane);
    }
}

/* acc += P V. B = V (k = keys, n = D) is stored k-major ([key][d]), so ldmatrix .trans turns
 * each 8x8 block into the n-major fragment: matrices (keys 16kk+0-7, cols 8dt..), (keys
 * 16kk+8-15, cols 8dt..), (keys 16kk+0-7, cols 8dt+8..), (keys 16kk+8-15, cols 8dt+8..) = b0,
 * b1 of column tile dt, then of dt + 1. Lane l addresses key 16 kk + l % 8 + 8 ((l / 8) % 2) at
 * chunk dt + l / 16. */
template <typename T, int D, int BK, int MT, bool SWZ>
__device__ __forceinline__ void attn_pv(float (&acc)[MT][D / 8][4],
                                        const unsigned (&p)[MT][BK / 16][4], unsigned vtile,
                                        int lane) {
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++)
#pragma unroll
        for (int dt = 0; dt < D / 8; dt += 2) {
            unsigned b[4];
            ldmatrix_x4_trans(b[0], b[1], b[2], b[3],
                              vtile + attn_chunk_off<D, SWZ>(16 * kk + lane % 8 + 8 * ((lane / 8) % 2),
                                                             dt + lane / 16));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                attn_mma<T>(acc[mt][dt], p[mt][kk], b);
                attn_mma<T>(acc[mt][dt + 1], p[mt][kk], b + 2);
            }
        }
}

/* ---- the softmax on the fragments ------------------------------------------------------------ */

/* Scores of keys past n, or after the query when causal, become -inf (one m-tile). key0: the
 * tile's first key; query: the query of row g (row g + 8 is query + 8). */
template <int NT>
__device__ __forceinline__ void attn_mask(float (&s)[NT][4], int key0, int query, int n,
                                          int causal, int lane) {
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int key = key0 + 8 * j + 2 * (lane % 4) + (e & 1);
            if (key >= n || (causal && key > query + 8 * (e >> 1))) s[j][e] = -INFINITY;
        }
}

/* The online update of README "The online softmax" for one m-tile's rows g (i = 0) and g + 8
 * (i = 1), then P as A fragments for P V. m and l are per row; every lane of a row holds the
 * same m and its own part of l (the parts rescale alike; attn_store adds them).
 *   EXP2 false (stage 3): s holds scaled scores; p = expf(s - m).
 *   EXP2 true  (stage 4): s holds raw scores q.k and m their max; c = scale * log2(e), and
 *                         p = 2^(s c - m c) = e^(scale (s - m)): one FFMA and one MUFU.EX2.
 * The P registers: m16n8k16's C layout for n-tiles 2 kk and 2 kk + 1 (keys 16 kk + p, + 1 and
 * 16 kk + 8 + p, + 1; rows g and g + 8) is, element for element, its A layout for k-step kk
 * (a0: row g, k p; a1: row g + 8, k p; a2: row g, k p + 8; a3: row g + 8, k p + 8). So P
 * needs no shuffle and no shared memory: round two neighbours into one register.
 * In three steps: attn_softmax_exp (s becomes p in fp32, m and l updated, alpha the factor
 * 2^(m_old c - m_new c) that the accumulator must be multiplied by), attn_pack_p, attn_rescale;
 * attn_softmax does all three (stages 3-5). Stage 6 calls them apart: the exponentials while
 * its previous P V still runs, the packing and the rescale once it has landed. */
template <int NT, bool EXP2>
__device__ __forceinline__ void attn_softmax_exp(float (&s)[NT][4], float (&m)[2], float (&l)[2],
                                                 float (&alpha)[2], float c) {
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int j = 0; j < NT; j++) {
        mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
    }
    float use[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < 2; i++) {
        mx[i] = lanes_max<4>(mx[i]);
        /* a row that has seen only masked keys keeps m = -inf: exp of 0 in place of -inf - -inf */
        use[i] = mx[i] == -INFINITY ? 0.0f : mx[i];
        if (EXP2) {
            use[i] *= c;
            alpha[i] = ex2_approx(fmaf(m[i], c, -use[i]));
        } else {
            alpha[i] = expf(m[i] - use[i]);
        }
        m[i] = mx[i];
    }
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = e >> 1;
            s[j][e] = EXP2 ? ex2_approx(fmaf(s[j][e], c, -use[i])) : expf(s[j][e] - use[i]);
            sum[i] += s[j][e];
        }
#pragma unroll
    for (int i = 0; i < 2; i++) l[i] = alpha[i] * l[i] + sum[i];
}

/* P as the A fragments of P V: two neighbours of s rounded into one register (see above). */
template <typename T, int NT>
__device__ __forceinline__ void attn_pack_p(const float (&s)[NT][4], unsigned (&p)[NT / 2][4]) {
#pragma unroll
    for (int kk = 0; kk < NT / 2; kk++) {
        p[kk][0] = attn_pack<T>(s[2 * kk][0], s[2 * kk][1]);
        p[kk][1] = attn_pack<T>(s[2 * kk][2], s[2 * kk][3]);
        p[kk][2] = attn_pack<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        p[kk][3] = attn_pack<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
}

/* O *= alpha, per row: the accumulator brought to the new running max. */
template <int DT>
__device__ __forceinline__ void attn_rescale(float (&acc)[DT][4], const float (&alpha)[2]) {
#pragma unroll
    for (int d = 0; d < DT; d++) {
        acc[d][0] *= alpha[0], acc[d][1] *= alpha[0];
        acc[d][2] *= alpha[1], acc[d][3] *= alpha[1];
    }
}

template <typename T, int NT, int DT, bool EXP2>
__device__ __forceinline__ void attn_softmax(float (&s)[NT][4], float (&acc)[DT][4], float (&m)[2],
                                             float (&l)[2], unsigned (&p)[NT / 2][4], float c) {
    float alpha[2];
    attn_softmax_exp<NT, EXP2>(s, m, l, alpha, c);
    attn_rescale<DT>(acc, alpha);
    attn_pack_p<T, NT>(s, p);
}

/* The rows' 1 / l (the whole row's l, its four lanes' parts added) into inv, and LSE = m *
 * mscale + log(l) written for rows query and query + 8 below n: the part of attn_store that an
 * epilogue storing O another way shares (stage 6's TMA store). Every lane calls it. */
__device__ __forceinline__ void attn_lse(const float (&m)[2], const float (&l)[2], float (&inv)[2],
                                         float *lse, int query, int n, float mscale, int lane) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const float sum = lanes_sum<4>(l[i]);
        inv[i] = 1.0f / sum;
        const int r = query + 8 * i;
        if (r < n && lane % 4 == 0) lse[r] = m[i] * mscale + logf(sum);
    }
}

/* O = acc / l and LSE = m * mscale + log(l) for one m-tile's rows query (row g) and query + 8,
 * those below n. o and lse point at the (batch, head)'s first row. mscale turns m into a
 * scaled score: 1 when m was taken over scaled scores (stage 3), the scale when over raw ones
 * (stage 4). Every lane calls it (the shuffles of lanes_sum). */
template <typename T, int D>
__device__ __forceinline__ void attn_store(const float (&acc)[D / 8][4], const float (&m)[2],
                                           const float (&l)[2], T *o, float *lse, int query, int n,
                                           float mscale, int lane) {
    float inv[2];
    attn_lse(m, l, inv, lse, query, n, mscale, lane);
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int r = query + 8 * i;
        if (r < n) {
            T *out = o + (long)r * D + 2 * (lane % 4);
#pragma unroll
            for (int d = 0; d < D / 8; d++)
                attn_store2(out + 8 * d, acc[d][2 * i] * inv[i], acc[d][2 * i + 1] * inv[i]);
        }
    }
}

#endif
