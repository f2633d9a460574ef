/* Stage 2 — per-tensor FP8: chapter 06's warp-specialized pipeline (its stage 4) with the e4m3
 * wgmma.
 *
 * Builds on: 06_wgmma_tma/kernels/04_warp_specialized_sm90a.cu (make diff-07 STAGE=2)
 *
 * What changes from chapter 06's stage 4, and why FP8 is faster. The structure is the same: a
 * producer warpgroup whose one thread issues TMA copies into a ring of 4 slots, two consumer
 * warpgroups that multiply a 128 x 256 tile, setmaxnreg moving registers from the producer to
 * the consumers. Three things differ:
 *  - The instruction. wgmma.m64n256k32.f32.e4m3.e4m3 does 32 steps of k per instruction where
 *    the bf16 one did 16, in the same time: the tensor cores' FP8 rate is twice their bf16 rate
 *    (1979 against 989 dense TFLOPS on the H100 SXM datasheet). FP8 operands must be K-major in
 *    shared memory (no transpose for 1-byte types), which is our layout anyway.
 *  - The K tile. A 128-byte swizzled row now holds 128 elements of k, not 64: one slot is
 *    still 128 + 256 rows of 128 bytes (48 KiB), but it carries twice the k, so each barrier
 *    round trip and each TMA copy feeds twice the math. The descriptor is the same (128-byte
 *    rows, SBO 1024), and step j of the four k32 steps starts 32 bytes further, as the k16
 *    steps of bf16 did.
 *  - The scales. D = (A * scale_a)(B * scale_b)^T = scale_a * scale_b * (A B^T): with one scale
 *    per tensor, the product of the two scales multiplies the fp32 accumulators once, in the
 *    epilogue, before the rounding to bf16. The scales live in device memory (the quantize
 *    kernel that computed them wrote them there), so each consumer thread reads both once.
 *
 * What to look for. SASS: QGMMA.64x256x32.F32.E4M3.E4M3 (HGMMA in chapter 06), UTMALDG.2D,
 * SYNCS, USETMAXREG. The K loop runs half as many iterations as the bf16 one at the same K.
 *
 * Still: one tile per block (no persistence), no clusters, the epilogue from registers; and the
 * accumulation of each k32 step happens inside the tensor core with fewer bits than fp32
 * (stage 3 measures what that costs and fixes it).
 *
 * Shapes: any M and N; K % 16 == 0 (TMA's 16-byte row stride, 16 e4m3 elements). */
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
#define BN 256      /* columns of D per block: m64n256k32 */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define DEPTH 4     /* slots in the ring */
#define CONSUMERS 2 /* consumer warpgroups */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define SLOT_BYTES ((BM + BN) * BK) /* 48 KiB */
static_assert(DEPTH * SLOT_BYTES + 1024 == GEMM07_SMEM_TENSOR_SCALED, "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    tensor_scaled_kernel(const __grid_constant__ CUtensorMap map_a,
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
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
        wgmma_fence_operands(d);

        for (int t = 0; t < tiles; t++) {
            const int s = t % DEPTH;
            const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128, b = ring + s * SLOT_BYTES + A_BYTES;
            mbarrier_wait_parity(smem_addr(&full[s]), (t / DEPTH) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++)
                wgmma_e4m3_e4m3_ss<BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k), 1);
            wgmma_commit_group();
            wgmma_wait_group<1>(); /* tile t - 1 is done: release its slot */
            if (t > 0 && threadIdx.x % 32 == 0) mbarrier_arrive(smem_addr(&empty[(t - 1) % DEPTH]));
        }
        wgmma_wait_group<0>();
        wgmma_fence_operands(d);
        const float scale = __ldg(scale_a) * __ldg(scale_b);
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] *= scale;
        store_fragment<BN, bf16_t>(d, D, M, N, m0 + 64 * c, n0);
    }
}

extern "C" int STAGE(gemm07_tensor_scaled)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                           const float *scale_b, bf16_t *D, int M, int N, int K,
                                           cudaStream_t stream) {
    if (blocks_for(M, BM) > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    char err[256];
    const gemm06_maps *maps =
        gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3(blocks_for(N, BN), blocks_for(M, BM)), dim3(THREADS),
                            (size_t)GEMM07_SMEM_TENSOR_SCALED, 0, stream};
    return launch_kernel(tensor_scaled_kernel, cfg, maps->map_a, maps->map_b, D, M, N, K, scale_a,
                         scale_b);
}
