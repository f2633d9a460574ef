/* Stage 3 — FlashAttention-2 on the tensor cores: both products with mma.sync m16n8k16.
 *
 * Change from stage 2: the same algorithm (a block per query tile, K/V tiles of 64 keys, the
 * online softmax), but Q K^T and P V run on the tensor cores, fp16/bf16 in, fp32 accumulators,
 * with the operands read by ldmatrix. Stage 2 spent D fp32 FFMAs and D shared loads per score;
 * here one HMMA does 16 x 8 x 16 multiply-adds, and the FFMA work left is the softmax's.
 *
 * FlashAttention-2's warp layout: 4 warps, each owning 16 query rows of the block's 64 and
 * every key of the tile (splitting the keys across warps instead, as FlashAttention-1 did,
 * would leave each warp a part of every row's max, sum and output to combine through shared
 * memory on every tile). So a row's statistics live in the 4 lanes that hold it
 * (lanes_max<4>, lanes_sum<4>), and P never leaves the registers: the fp32 C fragment of the
 * scores, rounded to fp16/bf16 two by two, is exactly the A fragment of P V (fa2.cuh,
 * attn_softmax). Stage 2's 16 KiB P tile and its barrier are gone.
 *
 * Per warp and key tile: Q (16 x D, in registers since the start: D/16 A fragments), K^T from
 * ldmatrix (K rows are the n-major B operand already), S in 8 n-tiles of 8 keys (32 fp32 per
 * lane), then V through ldmatrix .trans (V is [key][d], k-major; .trans makes it the n-major
 * fragment). Tiles reach shared memory by cp.async (16-byte copies, rows past n zero-filled),
 * rows padded by 8 elements so the 8 rows of an ldmatrix hit 8 bank groups.
 *
 * Kept simple on purpose, and stage 4's business: one K and one V buffer, loaded together and
 * waited for together (the tensor cores idle during every load), scores scaled by a multiply
 * and exponentiated with expf, causal tiles above the diagonal computed and masked, the mask
 * tested on every score of every tile.
 *
 * Registers at D = 128, per lane: O 64 fp32, S 32 fp32, Q 32, P 16 (S's registers, largely):
 * about 150 live, under the 255 a 128-thread block may use. What to look for in the SASS:
 * HMMA.16816.F32 (.BF16), LDSM.16.M88.4 (Q, K) and LDSM.16.MT88.4 (V), LDGSTS, MUFU.EX2, and no
 * LDL/STL (make test checks them).
 *
 * A/B switches (08_flash_attn/ab.list; not part of the lesson's kernel): the README's "The
 * schedule, not the registers" measures what ptxas makes of the same loop:
 *   ATTN_AB_LOAD_PER_CHUNK  fa2.cuh's tile loads as first written (addresses per copy, 237
 *                           registers at D = 128): ptxas then interleaves the exponentials with
 *                           P V's mma's
 *   ATTN_AB_KSTEP_PV        the softmax's exponentials and P V issued k-step by k-step (16 keys
 *                           at a time) after the row max and the rescale */
#include "stage.h"
#include "attn.h"
#include "fa2.cuh"
#include "launch.cuh"

#define BQ ATTN_FA2_BQ
#define BK ATTN_FA2_BK
#define WARPS (BQ / 16)
#define THREADS (WARPS * 32)

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS)
    fa2_mma_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                   T *__restrict__ o, float *__restrict__ lse, int n, int q_tiles, float scale,
                   int causal) {
    constexpr int TILE = BQ * (D + 8) * 2; /* BQ == BK: Q, K and V tiles alike */
    static_assert(BQ == BK, "one tile size for Q, K and V");
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *qs = smem, *ks = smem + TILE, *vs = smem + 2 * TILE;

    const long pair = blockIdx.x / q_tiles; /* b * heads + h */
    const int q0 = (blockIdx.x % q_tiles) * BQ;
    const long base = pair * n * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int query = q0 + 16 * warp + lane / 4; /* row g; the lane's other row is query + 8 */

    attn_load_tile<T, D, BQ, THREADS, false>(qs, q + base, q0, n);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    /* One m16 tile a warp (fa2.cuh's MT = 1): the arrays' first index is that tile. */
    unsigned qf[1][D / 16][4];
    attn_load_q<D, 1, false>(qf, smem_addr(qs), 16 * warp, lane);

    float acc[1][D / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    attn_zero(acc);

    for (int k0 = 0; k0 < n; k0 += BK) {
        __syncthreads(); /* every warp is done reading the previous K and V tiles */
        attn_load_tile<T, D, BK, THREADS, false>(ks, k + base, k0, n);
        attn_load_tile<T, D, BK, THREADS, false>(vs, v + base, k0, n);
        cp_async_commit();
        cp_async_wait<0>();
        __syncthreads(); /* ... and every thread's copies have landed */

        float s[1][BK / 8][4];
        attn_qk<T, D, BK, 1, false>(s, qf, smem_addr(ks), lane);
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[0][j][e] *= scale;
        attn_mask<BK / 8>(s[0], k0, query, n, causal, lane);

#if defined(ATTN_AB_KSTEP_PV) /* A/B: the exponentials of k-step kk, then its mma's */
        float mx[2] = {m[0], m[1]}, use[2], alpha[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < BK / 8; j++) {
            mx[0] = fmaxf(mx[0], fmaxf(s[0][j][0], s[0][j][1]));
            mx[1] = fmaxf(mx[1], fmaxf(s[0][j][2], s[0][j][3]));
        }
#pragma unroll
        for (int i = 0; i < 2; i++) {
            mx[i] = lanes_max<4>(mx[i]);
            use[i] = mx[i] == -INFINITY ? 0.0f : mx[i];
            alpha[i] = expf(m[i] - use[i]);
            m[i] = mx[i];
        }
        attn_rescale<D / 8>(acc[0], alpha);
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
#pragma unroll
            for (int j = 2 * kk; j < 2 * kk + 2; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[0][j][e] = expf(s[0][j][e] - use[e >> 1]);
                    sum[e >> 1] += s[0][j][e];
                }
            unsigned pk[4] = {attn_pack<T>(s[0][2 * kk][0], s[0][2 * kk][1]),
                              attn_pack<T>(s[0][2 * kk][2], s[0][2 * kk][3]),
                              attn_pack<T>(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]),
                              attn_pack<T>(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3])};
#pragma unroll
            for (int dt = 0; dt < D / 8; dt += 2) {
                unsigned b[4];
                const int key = 16 * kk + lane % 8 + 8 * ((lane / 8) % 2);
                ldmatrix_x4_trans(b[0], b[1], b[2], b[3],
                                  smem_addr(vs) + attn_chunk_off<D, false>(key, dt + lane / 16));
                attn_mma<T>(acc[0][dt], pk, b);
                attn_mma<T>(acc[0][dt + 1], pk, b + 2);
            }
        }
#pragma unroll
        for (int i = 0; i < 2; i++) l[i] = alpha[i] * l[i] + sum[i];
#else
        unsigned p[1][BK / 16][4];
        attn_softmax<T, BK / 8, D / 8, false>(s[0], acc[0], m, l, p[0], 0.0f);
        attn_pv<T, D, BK, 1, false>(acc, p, smem_addr(vs), lane);
#endif
    }
    attn_store<T, D>(acc[0], m, l, o + base, lse + pair * n, query, n, 1.0f, lane);
}

template <typename T, int D> static int launch(const attn_args *a, cudaStream_t stream) {
    const int q_tiles = (a->n + BQ - 1) / BQ;
    const long blocks = (long)q_tiles * a->b * a->h;
    if (blocks > 0x7fffffffL)
        return launch_unsupported("%ld query tiles: more than a grid's 2^31 - 1 blocks", blocks);
    const launch_cfg cfg = {dim3((unsigned)blocks), dim3(THREADS), (size_t)ATTN_FA2_SMEM(D), 1,
                            stream};
    return launch_kernel(fa2_mma_kernel<T, D>, cfg, (const T *)a->q, (const T *)a->k,
                         (const T *)a->v, (T *)a->o, a->lse, a->n, q_tiles, a->scale, a->causal);
}

extern "C" int STAGE(attn_fa2)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
