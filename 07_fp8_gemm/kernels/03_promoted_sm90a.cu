/* Stage 3 — promotion: stage 2 with the sums of each 128-wide K tile added into fp32 registers
 * outside the tensor core.
 *
 * The accuracy problem. Stage 2 lets the tensor core accumulate the whole K loop. On Hopper
 * the FP8 wgmma does not keep a full fp32 accumulator between its k32 steps: DeepSeek-V3's
 * report measured about 14 bits kept, so each addition into a large running sum loses the low
 * bits of the addend, and the loss grows with K (their figure: about 2% relative error at
 * K = 4096). The fix (DeepSeek-V3, DeepGEMM; cuBLASLt does the same unless asked for "fast
 * accumulation"): let the tensor core sum only one K tile (4 k32 steps, 128 of k) into a fresh
 * accumulator, wait for it, and add that partial sum into a second set of fp32 registers with
 * ordinary FADDs. The tensor core's short sums stay small, and the long sum is exact fp32.
 *
 * What it costs. Two accumulator sets per thread: 2 x 64 for a 64 x 128 fragment. A 64 x 256
 * fragment would need 2 x 128 registers, more than a thread may have, so the tile is 128 x 128
 * (6 slots of 32 KiB in the ring). And each consumer now waits for its wgmmas after every K
 * tile (wait_group<0>) before it can add: while it adds, its tensor core work stops, and only
 * the other consumer's wgmmas keep the tensor cores busy.
 *
 * What to look for. SASS: QGMMA.64x128x32, FADDs between them; the README's table of error
 * against K, this stage against stage 2.
 *
 * Shapes: any M and N; K % 16 == 0. */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128      /* rows of D per block: two consumer warpgroups of 64 */
#define BN 128      /* columns of D per block: m64n128k32, two accumulator sets */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define DEPTH 6     /* slots in the ring */
#define CONSUMERS 2 /* consumer warpgroups */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define SLOT_BYTES ((BM + BN) * BK) /* 32 KiB */
static_assert(DEPTH * SLOT_BYTES + 1024 == GEMM07_SMEM_PROMOTED, "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    promoted_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b, bf16_t *__restrict__ D,
                         int M, int N, int K, const float *__restrict__ scale_a,
                         const float *__restrict__ scale_b) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    const unsigned ring = smem_addr(align1024(smem));
    const int wg = threadIdx.x / 128; /* 0: producer, 1..CONSUMERS: consumers */
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tiles = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
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
                mbarrier_arrive_expect_tx(bar, SLOT_BYTES);
                tma_load_2d(a, &map_a, bar, t * BK, m0);
                tma_load_2d(a + A_BYTES, &map_b, bar, t * BK, n0);
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1; /* which 64 rows of the tile */
        float sum[BN / 2], part[BN / 2]; /* the long fp32 sum; one K tile's partial sum */
#pragma unroll
        for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f, part[i] = 0.0f;
        wgmma_fence_operands(part);

        for (int t = 0; t < tiles; t++) {
            const int s = t % DEPTH;
            const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128, b = ring + s * SLOT_BYTES + A_BYTES;
            mbarrier_wait_parity(smem_addr(&full[s]), (t / DEPTH) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++) /* scale_d = 0 on the first step: part = A B */
                wgmma_e4m3_e4m3_ss<BN>(part, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k),
                                       k > 0);
            wgmma_commit_group();
            wgmma_wait_group<0>(); /* this tile's sum is complete: release, then promote */
            wgmma_fence_operands(part);
            if (threadIdx.x % 32 == 0) mbarrier_arrive(smem_addr(&empty[s]));
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] += part[i];
        }
        const float scale = __ldg(scale_a) * __ldg(scale_b);
#pragma unroll
        for (int i = 0; i < BN / 2; i++) sum[i] *= scale;
        store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, n0);
    }
}

extern "C" int STAGE(gemm07_promoted)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                           const float *scale_b, bf16_t *D, int M, int N, int K,
                                           cudaStream_t stream) {
    if (blocks_for(M, BM) > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3(blocks_for(N, BN), blocks_for(M, BM)), dim3(THREADS),
                            (size_t)GEMM07_SMEM_PROMOTED, 0, stream};
    return launch_kernel(promoted_kernel, cfg, maps->map_a, maps->map_b, D, M, N, K, scale_a,
                         scale_b);
}
