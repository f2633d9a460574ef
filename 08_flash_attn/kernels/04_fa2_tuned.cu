/* Stage 4 — FlashAttention-2 tuned: FlashAttention-2's own warp layout (32 query rows a warp,
 * two blocks an SM), the loads under the products, a cheaper softmax, half the causal work
 * skipped.
 *
 * Change from stage 3, each against a cost stage 3 pays:
 *  - 32 query rows a warp (two m16 tiles), 4 warps and 128 queries a block. Every K and V
 *    fragment a warp reads by ldmatrix feeds two mma's, one per m-tile (fa2.cuh, MT = 2): half
 *    the shared-memory reads per FLOP of 16-row warps, and each K/V tile in shared memory
 *    serves 128 queries (half stage 3's L2 -> SM traffic per FLOP). Each warp also has two
 *    independent chains of mma's and of softmax work to interleave.
 *  - Two blocks an SM: __launch_bounds__(128, 2) caps a lane at 255 registers (65536 / 256
 *    threads), and a block's shared memory (96 KiB at D = 128) leaves room for a second block
 *    on sm_90 (228 KiB an SM). The two blocks' barriers are independent, so one block's
 *    softmax and barrier waits can run under the other's products; one block of 8 warps would
 *    bring every warp of the SM to the same two barriers per key tile.
 *  - Q stays in shared memory and its A fragments are re-read by ldmatrix at each k-step of
 *    Q K^T, as FlashAttention-2 does: at D = 128 a lane holds O (2 x 16 n8-tiles x 4 = 128
 *    fp32) and S for 64 keys (2 x 8 x 4 = 64 fp32); Q in registers would be 64 more. Per k-step
 *    that is 2 ldmatrix for Q against BK / 16 for K and 2 BK / 8 mma's.
 *  - Loads overlap the products. Two K and two V buffers: the copies of tile j + 1 are issued
 *    as soon as tile j - 1's buffers are free (the first barrier of iteration j), and K and V
 *    are separate cp.async groups, waited for separately. So S = Q K_j^T starts when K_j has
 *    landed, V_j lands under S and the softmax, and the loads of tile j + 1 run under both
 *    products of tile j. Stage 3's tensor cores idled through every load.
 *  - Swizzled shared memory: unpadded rows, chunk c of row r at c ^ (r & 7) (fa2.cuh,
 *    attn_chunk_off). Conflict-free ldmatrix like stage 3's padding, with no padding: the Q
 *    tile and the four K/V buffers are 96 KiB at D = 128, under sm_89's 99 KiB a block.
 *  - The softmax's arithmetic: scores stay raw (q.k), their max is taken raw, and
 *    p = 2^(s c - m c) with c = scale * log2(e): one FFMA and one MUFU.EX2 (ex2.approx) per
 *    score, where stage 3 paid an FMUL for the scale, then expf's range reduction around its
 *    MUFU.EX2. At D = 64 there is one exponential per 256 tensor-core FLOPs: an H100 SM's 16
 *    exponentials a clock (the MUFU's rate on cc 8.x/9.0) against its 4096 dense fp16 FLOPs
 *    a clock (989 TFLOPS / 132 SMs / 1.83 GHz) is one per 256. The exponentials alone can take
 *    as long as both products, so every instruction around them counts.
 *  - Causal: the key tiles wholly after the block's last query are not loaded or computed
 *    (the loop ends at min(n, q0 + 128)); a warp skips the products of a tile whose first key
 *    is after its last query (it still meets the barriers); the mask is applied only to an
 *    m-tile's tiles that cross its diagonal or hold keys past n. Causal blocks run in reverse
 *    query order (the longest first), so the short ones fill the tail.
 *  - Per-D key tiles for the register budget: 64 keys at D = 128 (O 128 + S 64 registers a
 *    lane), 128 at D = 64 (O 64 + S 128): half the loop trips, barriers and rescales of O per
 *    key of 64-key tiles. Both use about 255 registers and spill nothing (README, "Stage 4").
 *
 * What to look for: in the SASS, MUFU.EX2 without the FMULs and FSETPs of expf around it,
 * LDGSTS between the HMMAs, two HMMAs after each LDSM of K or V, and no LDL/STL (make test
 * checks HMMA, LDSM, LDGSTS, MUFU.EX2, no local memory). In a profile, 2 blocks (8 warps) an
 * SM on sm_90, shared-memory bank conflicts of ldmatrix at zero, and the tensor pipe busier
 * than stage 3's.
 *
 * A/B switches (08_flash_attn/ab.list; not part of the lesson's kernel): each -D takes one idea
 * of README "Stage 4" out, to measure its share beside the unmodified stage.
 *   ATTN_AB_ONE_BLOCK   4b: one block an SM: the dynamic shared memory raised to half an SM's
 *                           (with the 1 KiB each block reserves, a second no longer fits; the
 *                           launcher checks it with the occupancy API); the kernel is unchanged
 *   ATTN_AB_NO_PREFETCH 4d: K_j and V_j loaded together into one buffer each, waited for, then
 *                           computed (stage 3's loop): no copy under the products (the second
 *                           buffers stay allocated, so the blocks an SM do not change)
 *   ATTN_AB_PADDED      4e: rows padded by 8 elements (stage 3's layout) instead of the swizzle:
 *                           102 KiB at D = 128, 90 KiB at D = 64 (sm_90: still 2 blocks an SM;
 *                           sm_80: 1 at both D; sm_89: D = 128 no longer fits its 99 KiB)
 *   ATTN_AB_EXPF        4f: scores scaled by a multiply, expf (stage 3's softmax), no exp2 folding
 *   ATTN_AB_NO_SKIP     4g: causal computes every key tile up to n (past the diagonal masked)
 *   ATTN_AB_MASK_ALL    4g: the mask applied to every tile, not only where needed */
#include "stage.h"
#include "attn.h"
#include "fa2.cuh"
#include "launch.cuh"

#define BQ ATTN_FA2T_BQ
#define ROWS ATTN_FA2T_WARP_ROWS /* query rows a warp */
#define MT (ROWS / 16)           /* m16 tiles a warp: 2 */
#define WARPS (BQ / ROWS)
#define THREADS (WARPS * 32)
#define LOG2E 1.4426950408889634f
#if defined(ATTN_AB_PADDED) /* takes out 4e: padded rows, as stage 3 */
#define SWIZZLED false
#define TILE_ROW_BYTES(D) (((D) + 8) * 2)
#else
#define SWIZZLED true
#define TILE_ROW_BYTES(D) ((D) * 2)
#endif

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS, 2)
    fa2_tuned_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                     T *__restrict__ o, float *__restrict__ lse, int n, int q_tiles, float scale,
                     int causal) {
    constexpr int BK = ATTN_FA2T_BK(D), NT = BK / 8;
    constexpr unsigned Q_BYTES = BQ * TILE_ROW_BYTES(D), KV_BYTES = BK * TILE_ROW_BYTES(D);
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *qs = smem, *ks = smem + Q_BYTES, *vs = ks + 2 * KV_BYTES; /* ks, vs: 2 each */

    const long pair = blockIdx.x / q_tiles; /* b * heads + h */
    int tile = blockIdx.x % q_tiles;
    if (causal) tile = q_tiles - 1 - tile;
    const int q0 = tile * BQ;
    const long base = pair * n * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wq0 = q0 + ROWS * warp; /* the warp's first query */
    /* row g of m-tile 0; the lane's rows are query + 16 mt and query + 16 mt + 8 */
    const int query = wq0 + lane / 4;
#if defined(ATTN_AB_NO_SKIP) /* takes out 4g's skip: every key tile, as stage 3 */
    const int kv_end = n;
#else
    const int kv_end = causal ? min(n, q0 + BQ) : n;
#endif
    const int k_tiles = (kv_end + BK - 1) / BK;
    const float c = scale * LOG2E;

    /* Three groups: Q, K_0, V_0. The Q tile stays in shared memory for the block's life: its
     * A fragments are re-read by ldmatrix at every k-step of Q K^T (they would take 64 more
     * registers a lane at D = 128). */
    attn_load_tile<T, D, BQ, THREADS, SWIZZLED>(qs, q + base, q0, n);
    cp_async_commit();
    attn_load_tile<T, D, BK, THREADS, SWIZZLED>(ks, k + base, 0, n);
    cp_async_commit();
    attn_load_tile<T, D, BK, THREADS, SWIZZLED>(vs, v + base, 0, n);
    cp_async_commit();
    const unsigned qs_addr = smem_addr(qs), ks_addr = smem_addr(ks), vs_addr = smem_addr(vs);

    float acc[MT][D / 8][4], m[MT][2], l[MT][2];
    attn_zero(acc);
#pragma unroll
    for (int mt = 0; mt < MT; mt++) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.0f;

    for (int j = 0; j < k_tiles; j++) {
        const int k0 = j * BK;
#if defined(ATTN_AB_NO_PREFETCH) /* takes out 4d: one buffer each, load, wait, compute (stage 3) */
        const unsigned cur = 0;
        if (j > 0) {
            __syncthreads(); /* every warp is done with tile j - 1 */
            attn_load_tile<T, D, BK, THREADS, SWIZZLED>(ks, k + base, k0, n);
            attn_load_tile<T, D, BK, THREADS, SWIZZLED>(vs, v + base, k0, n);
            cp_async_commit();
        }
        cp_async_wait<0>();
        __syncthreads();
#else
        const unsigned cur = (unsigned)(j & 1) * KV_BYTES, nxt = (unsigned)((j + 1) & 1) * KV_BYTES;
        /* Groups issued so far end with K_j, V_j: all but the newest (V_j) means K_j (and, at
         * j = 0, Q) is here. The barrier also says every warp is done with tile j - 1, whose
         * buffers (nxt) the copies of tile j + 1 now overwrite. */
        cp_async_wait<1>();
        __syncthreads();
        if (j + 1 < k_tiles)
            attn_load_tile<T, D, BK, THREADS, SWIZZLED>(ks + nxt, k + base, k0 + BK, n);
        cp_async_commit(); /* committed even when empty, so the group counts stay the same */
        if (j + 1 < k_tiles)
            attn_load_tile<T, D, BK, THREADS, SWIZZLED>(vs + nxt, v + base, k0 + BK, n);
        cp_async_commit();
#endif

        /* Causal: a tile whose first key is after the warp's last query is all masked for this
         * warp: it adds nothing, so the warp skips both products (it still meets the barriers). */
#if defined(ATTN_AB_NO_SKIP) /* takes out 4g's skip: every warp computes every tile */
        const bool live = k0 < n; /* always: "true" made ptxas spill at D = 128 */
#else
        const bool live = !causal || k0 <= wq0 + ROWS - 1;
#endif
        unsigned p[MT][NT / 2][4];
        if (live) {
            float s[MT][NT][4];
            attn_qk_smem<T, D, BK, MT, SWIZZLED>(s, qs_addr, ROWS * warp, ks_addr + cur, lane);
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                /* Only a tile that crosses this m-tile's diagonal, or runs past n, has a key to
                 * mask. */
#if defined(ATTN_AB_MASK_ALL) /* takes out 4g's "mask only where needed": every tile */
                if (k0 < n) /* always: "true" made ptxas spill at D = 64 */
#else
                if (k0 + BK > n || (causal && k0 + BK - 1 > wq0 + 16 * mt))
#endif
                    attn_mask<NT>(s[mt], k0, query + 16 * mt, n, causal, lane);
#if defined(ATTN_AB_EXPF) /* takes out 4f: scaled scores and expf, as stage 3 (m then scaled) */
#pragma unroll
                for (int jt = 0; jt < NT; jt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) s[mt][jt][e] *= scale;
                attn_softmax<T, NT, D / 8, false>(s[mt], acc[mt], m[mt], l[mt], p[mt], c);
#else
                attn_softmax<T, NT, D / 8, true>(s[mt], acc[mt], m[mt], l[mt], p[mt], c);
#endif
            }
        }

#if !defined(ATTN_AB_NO_PREFETCH) /* (4d out: V_j landed with K_j) */
        /* Newest groups: K_{j+1}, V_{j+1}; all older, V_j among them, have landed. */
        cp_async_wait<2>();
        __syncthreads();
#endif
        if (live) attn_pv<T, D, BK, MT, SWIZZLED>(acc, p, vs_addr + cur, lane);
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#if defined(ATTN_AB_EXPF) /* (4f out: m is a scaled score) */
        attn_store<T, D>(acc[mt], m[mt], l[mt], o + base, lse + pair * n, query + 16 * mt, n, 1.0f,
                         lane);
#else
        attn_store<T, D>(acc[mt], m[mt], l[mt], o + base, lse + pair * n, query + 16 * mt, n, scale,
                         lane);
#endif
}

/* Two blocks an SM need the largest shared-memory carveout (2 x 97 KiB of sm_90's 228): asked
 * for once per kernel. Only a hint (the kernel reads nothing through L1: cp.async.cg); a
 * refusal costs occupancy, not correctness, so its error is cleared. */
static bool prefer_shared(const void *kernel) {
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess)
        cudaGetLastError();
    return true;
}

template <typename T, int D> static int launch(const attn_args *a, cudaStream_t stream) {
    const int q_tiles = (a->n + BQ - 1) / BQ;
    const long blocks = (long)q_tiles * a->b * a->h;
    if (blocks > 0x7fffffffL)
        return launch_unsupported("%ld query tiles: more than a grid's 2^31 - 1 blocks", blocks);
    size_t smem = ATTN_FA2T_SMEM(D);
#if defined(ATTN_AB_PADDED) /* (4e out: rows of D + 8 elements; over sm_89's 99 KiB at D = 128) */
    smem = (size_t)(BQ + 4 * ATTN_FA2T_BK(D)) * TILE_ROW_BYTES(D);
#endif
#if defined(ATTN_AB_ONE_BLOCK) /* takes out 4b: half an SM's shared memory or more, one block */
    int dev = 0, per_sm = 0, fit = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (smem < (size_t)per_sm / 2) smem = (size_t)per_sm / 2;
#endif
    const launch_cfg cfg = {dim3((unsigned)blocks), dim3(THREADS), smem, 1, stream};
    static const bool carveout = prefer_shared((const void *)fa2_tuned_kernel<T, D>);
    (void)carveout;
#if defined(ATTN_AB_ONE_BLOCK) /* (4b out: checked, not assumed) */
    const int rc = launch_prepare((const void *)fa2_tuned_kernel<T, D>, &cfg);
    if (rc != LAUNCH_OK) return rc;
    const cudaError_t occ =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, fa2_tuned_kernel<T, D>, THREADS, smem);
    if (occ != cudaSuccess || fit != 1)
        return launch_unsupported("A/B 4b: %d blocks an SM, not 1", fit);
#endif
    return launch_kernel(fa2_tuned_kernel<T, D>, cfg, (const T *)a->q, (const T *)a->k,
                         (const T *)a->v, (T *)a->o, a->lse, a->n, q_tiles, a->scale, a->causal);
}

extern "C" int STAGE(attn_fa2_tuned)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
