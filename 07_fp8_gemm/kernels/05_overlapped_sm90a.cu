/* Stage 5 — two accumulators in turn: stage 4, where each consumer issues K tile t + 1 into a
 * second accumulator before it promotes tile t, so the tensor core multiplies while the
 * warpgroup adds.
 *
 * Stage 4's gap. A consumer waited for its tile's wgmmas (wait_group<0>), then promoted: 64
 * FFMAs, during which its own tensor-core work had stopped. Only the other consumer could fill
 * the gap, and the two, released by the same full barrier, stay in step: they multiply together
 * and add together.
 *
 * The change. Two accumulator sets per consumer, part and other, taken by the K tiles in turn.
 * With tile t in flight into one, the consumer waits for slot t + 1, issues it into the other,
 * and only then waits for tile t with wgmma_wait_group<1> (every group but the newest done):
 * tile t + 1's four wgmmas are queued on the tensor core while tile t is released and promoted.
 * The loop is unrolled by two (step(part, other), step(other, part)) so that each accumulator
 * stays one fixed set of registers. Registers: the fp32 sums and two accumulators, 64 + 64 + 64
 * = 192 of the consumer's 232 (setmaxnreg); the rest hold addresses and scales. B's scale of a
 * K tile is loaded during the promotion of the tile before it (stage 4 issued it before the
 * slot's wait; the wait before a promotion here is the next tile's).
 *
 * The trap. ptxas keeps groups in flight only on a path it knows the whole warpgroup takes. A
 * C-level branch on a per-thread value between a wgmma and its wait (stage 4's spin loop around
 * try_wait, its `if (lane == 0)` around the arrive: harmless there, with nothing in flight) can
 * make it wait after every group (warning C7518, which chapters 07 and 08 met; docs/hopper.md,
 * "ptxas messages"), and the overlap is gone. So the spin is inside the asm
 * (mbarrier_wait_parity_in_asm) and the arrive's predicate inside its asm (mbarrier_arrive_if):
 * between issue and wait ptxas sees straight-line code. (ptxas 13.0.88 kept this kernel's groups
 * in flight with either C-level form too, for 4.5 and 9.5 more instructions a K tile.)
 *
 * The loop's lambdas (wait_full, issue, finish, step, rest_of_unit, release) are the final
 * kernel's, whose persistent blocks walk many units (tiles, or pieces of one's K tiles); here a
 * block's unit is its one tile.
 *
 * What to look for. SASS: in the K loop (two K tiles), four QGMMA.64x128x32 into one
 * accumulator, WARPGROUP.DEPBAR.LE gsb0, 0x1, the slot's predicated SYNCS.ARRIVE and the 64
 * FFMAs that promote the other, then the same with the two swapped; DEPBAR.LE gsb0, 0x0 only
 * after the loop (the last K tile). No C75xx line in -Xptxas -v; no LDL/STL. The table:
 * overlapped against block_scaled, the same tile, slots and epilogue.
 *
 * Shapes: any N; M % 4 == 0; K % 16 == 0 (stage 4's). */
#include <type_traits>

#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128      /* rows of D per block: two consumer warpgroups of 64 */
#define BN 128      /* columns of D per block: m64n128k32, three register sets of 64 */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define DEPTH 6     /* slots in the ring */
#define CONSUMERS 2 /* consumer warpgroups */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define SLOT_BYTES ((BM + BN) * BK) /* 32 KiB of operands */
#define SCALE_BYTES (BM * 4)        /* A's scales of the slot's K tile */
static_assert(DEPTH * (SLOT_BYTES + SCALE_BYTES) + 1024 == GEMM07_SMEM_OVERLAPPED,
              "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    overlapped_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_sa, bf16_t *__restrict__ D, int M,
                      int N, int K, const float *__restrict__ scale_b) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    unsigned char *base = align1024(smem);
    const unsigned ring = smem_addr(base);
    const unsigned scales = ring + DEPTH * SLOT_BYTES; /* DEPTH x 128 floats of A's scales */
    const float *scale_rows = (const float *)(base + DEPTH * SLOT_BYTES);
    const int wg = threadIdx.x / 128; /* 0: producer, 1..CONSUMERS: consumers */
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tiles = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        tma_prefetch_map(&map_sa);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);
            mbarrier_init(smem_addr(&empty[s]), CONSUMERS * 4); /* one arrival per consumer warp */
        }
        fence_proxy_async_shared();
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            for (int t = 0; t < tiles; t++) {
                const int s = t % DEPTH;
                const unsigned a = ring + s * SLOT_BYTES, bar = smem_addr(&full[s]);
                mbarrier_wait_parity(smem_addr(&empty[s]), ((t / DEPTH) & 1) ^ 1);
                mbarrier_arrive_expect_tx(bar, SLOT_BYTES + SCALE_BYTES);
                tma_load_2d(a, &map_a, bar, t * BK, m0);
                tma_load_2d(a + A_BYTES, &map_b, bar, t * BK, n0);
                tma_load_2d(scales + s * SCALE_BYTES, &map_sa, bar, m0, t); /* {i, kb} */
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1; /* which 64 rows of the tile */
        const int t128 = threadIdx.x % 128;
        const bool signals = t128 % 32 == 0; /* lane 0 of each warp hands a slot back */
        const int row = 64 * c + 16 * (t128 / 32) + (t128 % 32) / 4; /* and row + 8 */
        const float *sb = scale_b + (long)(n0 / 128) * ((tiles + 3) / 4 * 4);
        float sum[BN / 2]; /* the long fp32 sum */
#pragma unroll
        for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f;
        /* the ring position of the K tile finished next, and B's scale of that tile */
        int slot = 0;
        unsigned phase = 0;
        float b_ahead = __ldg(sb); /* in flight during the first wait */
        const float *b_next = sb + 1;
        auto advance = [](int &s, unsigned &p) {
            if (++s == DEPTH) s = 0, p ^= 1;
        };
        /* no branch for ptxas to see while groups are in flight: spin and predicate in the asm */
        auto wait_full = [&](int s, unsigned p) {
            mbarrier_wait_parity_in_asm(smem_addr(&full[s]), p);
        };
        auto release = [&](int s) { mbarrier_arrive_if(smem_addr(&empty[s]), signals); };
        /* One K tile of this consumer's rows, from slot s into acc: one group. */
        auto issue = [&](float(&acc)[BN / 2], int s) {
            const unsigned at = ring + s * SLOT_BYTES, a = at + c * 64 * BK, b = at + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++) /* scale_d = 0 on the first step: acc = A B */
                wgmma_e4m3_e4m3_ss<BN>(acc, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k),
                                       k > 0);
            wgmma_commit_group();
        };
        /* The K tile in acc (at `slot`), done once at most `pending` groups, the newest, are in
         * flight: its slot handed back (its operands and A's scales read), its sum promoted. */
        auto finish = [&](float(&acc)[BN / 2], auto pending) {
            const int s = slot;
            const float f0 = scale_rows[s * BM + row] * b_ahead; /* the full barrier covers them */
            const float f1 = scale_rows[s * BM + row + 8] * b_ahead;
            if (decltype(pending)::value) b_ahead = __ldg(b_next++); /* a K tile follows */
            wgmma_wait_group<decltype(pending)::value>();
            wgmma_fence_operands(acc);
            release(s);
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] += acc[i] * ((i / 2) % 2 ? f1 : f0);
            advance(slot, phase);
        };
        const std::integral_constant<int, 1> newest_pending;
        const std::integral_constant<int, 0> none_pending;
        /* The K tile in acc is in flight: issue the next into `next`, then finish acc's. */
        auto step = [&](float(&acc)[BN / 2], float(&next)[BN / 2]) {
            int s = slot;
            unsigned p = phase;
            advance(s, p);
            wait_full(s, p);
            issue(next, s);
            finish(acc, newest_pending);
        };
        /* K tiles 1 .. kt - 1 of a unit whose K tile 0 is in flight into part; at the end
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
        float part[BN / 2], other[BN / 2]; /* the two accumulators the K tiles take in turn */
#pragma unroll
        for (int i = 0; i < BN / 2; i++) part[i] = 0.0f, other[i] = 0.0f;
        wgmma_fence_operands(part);
        wgmma_fence_operands(other);
        wait_full(slot, phase);
        issue(part, slot);
        rest_of_unit(tiles, part, other);
        store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, n0);
    }
}

extern "C" int STAGE(gemm07_overlapped)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                        const float *scale_b, bf16_t *D, int M, int N, int K,
                                        cudaStream_t stream) {
    if (blocks_for(M, BM) > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    if (M % 4) return launch_unsupported("M %% 4 != 0: the scale map's rows must be 16-byte multiples");
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const CUtensorMap *map_sa = gemm07_scale_map_for(scale_a, M, K, BM, err, sizeof err);
    if (!map_sa) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3(blocks_for(N, BN), blocks_for(M, BM)), dim3(THREADS),
                            (size_t)GEMM07_SMEM_OVERLAPPED, 0, stream};
    return launch_kernel(overlapped_kernel, cfg, maps->map_a, maps->map_b, *map_sa, D, M, N, K,
                         scale_b);
}
