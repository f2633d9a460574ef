/* Stage 5 — Hopper: K and V through TMA into an mbarrier ring, both products on wgmma (P from
 * registers), a producer warpgroup and two consumer warpgroups.
 *
 * What changes from stage 4, and why it is faster (H100: 1.21-1.65x stage 4 at N >= 2048, 0.78-0.96x
 * PyTorch's cuDNN backend; 08_flash_attn/measured/h100_stage5.csv and h100_stage5_sdpa.csv):
 *  - wgmma instead of mma.sync. On an H100 mma.sync m16n8k16 tops out near 660 dense fp16
 *    TFLOPS (about two thirds of the tensor cores' 989), and stage 4 reaches 360-380 at D = 128.
 *    wgmma is the instruction that runs them at full rate: one m64nNk16 per warpgroup, its B
 *    operand (and here also A of S = Q K^T) read by the tensor core straight from shared
 *    memory through a descriptor. No ldmatrix, no operand registers for Q, K or V: stage 4's
 *    LDSM per HMMA pair and the registers they fill are gone.
 *  - TMA and a producer. One thread of a producer warpgroup issues every copy (a K or V tile is
 *    D / 64 TMA boxes, one instruction each) and the consumers only wait on an mbarrier: no
 *    address arithmetic, no cp.async per 16 bytes, no __syncthreads. The producer gives its
 *    registers back (setmaxnreg 24) to the consumers (240), which hold S, O and P.
 *  - P from registers. The accumulator fragment of S = Q K^T, rounded to 16 bits in pairs, is
 *    the A fragment of O += P V for the rs form of wgmma (the layouts match element for element,
 *    below), so P never goes to shared memory, as in stages 3-4.
 *
 * The block: 128 queries of one (batch, head), 384 threads = 3 warpgroups.
 *   warpgroup 0, the producer: setmaxnreg.dec to 24; thread 0 loads the Q tile once, then K_j
 *     and V_j for every key tile j into slot j % 2 of a ring of 2 K and 2 V slots, each slot
 *     waiting on its own "empty" barrier (the consumers' release) and landing on its own "full"
 *     barrier (the TMA's complete_tx). K and V have separate barriers: S = Q K_j^T can start
 *     while V_j still lands.
 *   warpgroups 1 and 2, the consumers: setmaxnreg.inc to 240; consumer c owns query rows
 *     64 c .. 64 c + 63 of the tile and walks every key tile: S = Q K^T (m64n128k16 ss, D / 16
 *     of them), the online softmax on the fragment, O += P V (m64nDk16 rs with B N-major,
 *     8 of them), then it hands both slots back.
 *   Why two consumers of 64 rows rather than one consumer per 64-row block: each K/V tile in
 *   shared memory then serves 128 queries (half the L2 -> SM traffic per FLOP of 64-query
 *   blocks), and the two warpgroups are independent instruction streams on the same SM, so
 *   one's softmax (FFMA, MUFU, shuffles) can run while the other's wgmmas use the tensor cores.
 *   Nothing forces them out of step yet: FlashAttention-3's ping-pong (named barriers that
 *   make the two take turns) and the overlap of a warpgroup's own softmax with its next
 *   product are stage 6's.
 *
 * Registers: a consumer thread holds S (m64n128: 64 fp32), O (m64nD: D / 2 fp32: 64 at
 * D = 128), P (32 registers of two 16-bit values) and m, l (4): about 170 at D = 128 before
 * addresses, within 240. Key tiles of 128 at both D (stage 4 needed 64 at D = 128: there a
 * warp held 32 rows, here 16, so a thread's share of O and of S is half as large).
 *
 * Shared memory (1024-aligned, the swizzle's period): the Q tile, then the 2 K slots, then the
 * 2 V slots, each D / 64 panels of 128 rows x 128 bytes (64 columns of D), in TMA's 128-byte
 * swizzle (16-byte chunk c of row r at c ^ (r % 8)): 32 + 4 x 32 = 160 KiB at D = 128, 80 KiB
 * at D = 64. One block an SM (384 threads and 64 K registers are a whole SM's).
 *
 * The tensor maps are 3D over [b h, n, D]: box {64, 128, 1} at (column, row, b h). A box that
 * runs past row n is cut at n and zero-filled by TMA, so a tile never reads the next head's
 * rows; keys past n still score 0 (not -inf) and are masked; their V rows are zeros, and their
 * p is exactly 0 (ex2 of -inf). Query rows past n compute on zeros and are not stored.
 *
 * The operands (chapter 06's descriptors; common/ptx/wgmma.cuh):
 *  - S = Q K^T: A = Q (64 rows x D, K-major), B = K (128 keys x D, K-major, i.e. the product is
 *    A B^T). k-step kk (16 columns of D) lies in panel kk / 4 at byte 32 (kk % 4) of its
 *    128-byte rows: desc_sw128(panel + 32 (kk % 4)), SBO 1024 (8 rows to the next 8).
 *    Consumer c's A starts 64 rows (8 KiB, 1024-aligned) into each Q panel.
 *  - O += P V: A = P from registers; B = V (128 keys x D), k = keys, n = D: stored n-major
 *    (rows of D), so imm-trans-b = 1 (wgmma_*_rs_tb). Canonical MN-major 128-byte-swizzled
 *    layout: 64 n a row, 8 k-rows an atom (SBO = 1024 to the next 8 keys), the next 64 n at
 *    LBO = the panel (128 x 128 = 16 KiB); k-step kk (keys 16 kk ..) starts 2048 kk further.
 *  - The accumulator fragment (m64nN, fp32, N / 2 a thread): thread t of the warpgroup (warp
 *    w, lane l) holds in register i row 16 w + l / 4 + 8 ((i / 2) % 2), column
 *    8 (i / 4) + 2 (l % 4) + i % 2. The A fragment of the rs form (16-bit, k16, 4 registers):
 *    a0 = (row 16 w + l / 4, columns 2 (l % 4) + 0..1), a1 = (row + 8, same columns),
 *    a2 = (same row, columns + 8), a3 = (row + 8, columns + 8): mma.sync's m16n8k16 A layout
 *    for warp w's 16 rows (wgmma.cuh; PTX ISA figure "WGMMA .m64nNk16 register fragment
 *    layout for matrix A"). So for k-step kk
 *    (keys 16 kk .. 16 kk + 15) register r of P is S's registers 8 kk + 2 r and 8 kk + 2 r + 1,
 *    exponentiated and packed, low half the lower key.
 *
 * The mask, the softmax and the store are stage 4's, from fa2.cuh, called on the same
 * registers (as_n8_tiles, attn_hopper.cuh: the wgmma fragment is mma.sync's m16n8 C layout
 * repeated):
 * raw scores, their max, p = 2^(s c - m c) with c = scale log2 e (one FFMA and one MUFU.EX2 a
 * score). A row's 128 scores of a tile lie in the 4 lanes of a quad, 32 each (a thread's 64
 * registers of S are 32 of row g and 32 of row g + 8), so a row max or sum is two xor
 * shuffles (lanes_max<4>, lanes_sum<4>).
 *
 * Causal: the key loop ends at min(n, q0 + 128) (tiles after the block's last query are not
 * loaded), the 128-key diagonal tile is the only one masked (and tiles holding keys past n),
 * and blocks run longest first.
 *
 * Kept simple on purpose: each wgmma batch is waited for (wait_group 0) before its results are
 * used, so a warpgroup's tensor-core work and its softmax do not overlap within the warpgroup
 * (only across the two consumers), and no wgmma is in flight across a branch (no C7518).
 *
 * What to look for: in the SASS, HGMMA.64x128x16 (S) and HGMMA.64xDx16 with "gdesc[..].tnspB"
 * (P V), UTMALDG.3D, SYNCS (the mbarriers), USETMAXREG, MUFU.EX2, no LDL/STL, no LDSM.
 *
 * A/B switches (08_flash_attn/ab.list; not part of the lesson's kernel): each -D takes one idea
 * of README "Stage 5" out, to measure its share beside the unmodified stage.
 *   ATTN_AB_RING1   5d: one K and one V slot: K_{j+1} loads once S_j has read K_j, V_{j+1} once
 *                   P_j V_j has read V_j (K and V keep their own barriers) */
#include "stage.h"
#include "attn.h"
#include "attn_hopper.cuh"
#include "fa2.cuh"
#include "launch.cuh"
#include "reduce.cuh"
#include "tensor_map.h"
#include "ptx/ex2.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#if defined(ATTN_AB_RING1) /* takes out 5d: a ring of one slot (ATTN_WGMMA_SMEM follows) */
#undef ATTN_WGMMA_STAGES
#define ATTN_WGMMA_STAGES 1
#endif

#define BQ ATTN_WGMMA_BQ         /* queries a block: 128 */
#define BK ATTN_WGMMA_BK         /* keys a tile: 128 */
#define STAGES ATTN_WGMMA_STAGES /* K slots, and V slots: 2 */
#define CONSUMERS 2              /* warpgroups of 64 query rows */
#define THREADS (128 * (1 + CONSUMERS))
#define PANEL_COLS ATTN_PANEL_COLS /* a TMA box: 64 16-bit values = 128 bytes */
#define LOG2E 1.4426950408889634f

static_assert(BQ == 64 * CONSUMERS, "a consumer per 64 query rows");

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS, 1)
    wgmma_attn_kernel(const __grid_constant__ CUtensorMap map_q,
                      const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v, T *__restrict__ o,
                      float *__restrict__ lse, int n, int q_tiles, float scale, int causal) {
    constexpr int PANELS = D / PANEL_COLS;
    constexpr unsigned Q_PANEL = BQ * 128, KV_PANEL = BK * 128;
    constexpr unsigned Q_BYTES = PANELS * Q_PANEL, KV_BYTES = PANELS * KV_PANEL;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) attn_ring_bars<STAGES> bars;
    const unsigned q_s = (smem_addr(smem) + 1023u) & ~1023u; /* the swizzle's period */
    const unsigned k_s = q_s + Q_BYTES, v_s = k_s + STAGES * KV_BYTES;
    /* Broadcast from lane 0: ptxas then keeps what derives from it (the consumer's addresses
     * and descriptors) in uniform registers (chapter 06, stage 8). */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);

    const int pair = blockIdx.x / q_tiles; /* b * heads + h */
    int tile = blockIdx.x % q_tiles;
    if (causal) tile = q_tiles - 1 - tile; /* longest first */
    const int q0 = tile * BQ;
    const int kv_end = causal ? min(n, q0 + BQ) : n;
    const int k_tiles = (kv_end + BK - 1) / BK;

    if (threadIdx.x == 0) attn_ring_init(bars, &map_q, &map_k, &map_v, CONSUMERS * 4);
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (threadIdx.x == 0) /* loads Q, then K_j and V_j into slot j % STAGES */
            attn_produce<STAGES, D>(bars, &map_q, &map_k, &map_v, q_s, k_s, v_s, q0, pair,
                                    k_tiles);
        return;
    }

    setmaxnreg_inc<240>();
    const int c = wg - 1; /* rows 64 c .. 64 c + 63 of the tile */
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int first = q0 + 64 * c;                     /* the consumer's first query */
    const int query = first + 16 * warp + lane / 4;    /* the thread's row g; row g + 8 is + 8 */
    const unsigned q_c = q_s + 64 * c * 128;           /* 64 rows into each Q panel */
    const float cexp = scale * LOG2E;

    float acc[D / 2], s[BK / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < D / 2; i++) acc[i] = 0.0f;
    wgmma_fence_operands(acc);

    mbarrier_wait_parity_in_asm(smem_addr(&bars.q_full), 0);
    for (int j = 0; j < k_tiles; j++) {
        const int st = j % STAGES;
        const unsigned full_parity = (j / STAGES) & 1;
        const unsigned ks = k_s + st * KV_BYTES, vs = v_s + st * KV_BYTES;
        const int k0 = j * BK;

        /* S = Q K_j^T: D / 16 k-steps of m64n128k16. */
        mbarrier_wait_parity_in_asm(smem_addr(&bars.k_full[st]), full_parity);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            mma_ss<T, BK>(s, desc_kmajor(q_c + (kk / 4) * Q_PANEL + 32 * (kk % 4)),
                          desc_kmajor(ks + (kk / 4) * KV_PANEL + 32 * (kk % 4)), kk > 0);
        wgmma_commit_group();
        wgmma_wait_group<0>();
        wgmma_fence_operands(s);
        if (lane == 0) mbarrier_arrive(smem_addr(&bars.k_empty[st])); /* K_j read: slot free */

        /* Only the diagonal tile (a key after this consumer's first query) or one with keys
         * past n has anything to mask. */
        if (k0 + BK > n || (causal && k0 + BK - 1 > first))
            attn_mask<BK / 8>(as_n8_tiles(s), k0, query, n, causal, lane);
        /* The online update (stage 4's: raw scores, p = 2^(s c - m c)), then P as the rs A
         * fragments: p[kk] packs n8 tiles 2 kk and 2 kk + 1, i.e. S's registers 8 kk .. 8 kk + 7
         * (see the opening comment). */
        unsigned p[BK / 16][4];
        attn_softmax<T, BK / 8, D / 8, true>(as_n8_tiles(s), as_n8_tiles(acc), m, l, p, cexp);

        /* O += P V_j: BK / 16 k-steps of m64nDk16, A = P from registers, V N-major. */
        mbarrier_wait_parity_in_asm(smem_addr(&bars.v_full[st]), full_parity);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) mma_rs_tb<T, D>(acc, p[kk], desc_v(vs + 2048 * kk));
        wgmma_commit_group();
        wgmma_wait_group<0>();
        wgmma_fence_operands(acc);
        if (lane == 0) mbarrier_arrive(smem_addr(&bars.v_empty[st]));
    }

    attn_store<T, D>(as_n8_tiles(acc), m, l, o + (long)pair * n * D, lse + (long)pair * n, query,
                     n, scale, lane);
}

/* ---- host (the tensor maps: attn_hopper.cuh) ------------------------------------------------- */

template <typename T, int D> static int launch(const attn_args *a, cudaStream_t stream) {
    return attn_hopper_launch<T>(wgmma_attn_kernel<T, D>, THREADS, ATTN_WGMMA_SMEM(D), a, stream);
}

extern "C" int STAGE(attn_wgmma)(const attn_args *a, cudaStream_t stream) {
    if (a->d != 64 && a->d != 128) return launch_unsupported("D = %d: 64 or 128 only", a->d);
    if (a->dtype == ATTN_F16)
        return a->d == 64 ? launch<__half, 64>(a, stream) : launch<__half, 128>(a, stream);
    return a->d == 64 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__nv_bfloat16, 128>(a, stream);
}
