/* Stage 4 — block scales: stage 3's promotion, where each K tile's partial sum is now multiplied
 * by its own scales on the way into the fp32 registers (DeepSeek-V3's recipe).
 *
 * The scheme. A has one scale per 1 x 128 slice of a row, B one per 128 x 128 block (gemm07.h
 * gives the layouts). Within one K tile kb of 128, every product of row i of A and row j of B
 * carries the same factor sa(i, kb) * sb(j / 128, kb), so the tensor core can still sum the
 * tile's products without looking at scales, and the factor is applied once per tile and entry:
 *     sum[i][j] += part[i][j] * sa(i, kb) * sb(j / 128, kb).
 * That is exactly where stage 3 already adds a tile's partial sum into fp32 registers: the
 * promotion is what makes fine-grained scaling cheap. The epilogue has nothing left to scale.
 *
 * Where the scales come from.
 *  - A's: the 128 scales of the tile's rows at kb are 128 contiguous floats (scale_a[kb * M + i],
 *    M-major, as DeepGEMM and cuBLASLt's VEC128_32F lay them out). So the producer loads them
 *    with the operands, one more TMA copy of a 128 x 1 box (512 bytes) into the same slot, on
 *    the same full barrier: the consumers find the scales where they find the data. A thread
 *    of the fragment holds two rows (16w + l/4 and 8 below), so it reads two of them.
 *    The map's row stride is M * 4 bytes, which TMA wants in 16s: M % 4 == 0 (cuBLASLt's block
 *    scales have the same rule).
 *  - B's: a 128-column tile lies in one 128 x 128 block, so one scale per K tile for the whole
 *    block; every consumer thread reads the same float (scale_b[nb * L4 + kb]), an L1 broadcast,
 *    issued before the wait for the tile so that its latency hides behind the wait.
 *
 * What it costs over stage 3: a 512-byte copy per slot and, per K tile and thread, two shared
 * loads, one global load and two FMULs (the factors); the 64 FADDs become FFMAs.
 *
 * What to look for. SASS: QGMMA.64x128x32, FFMA in the promotion, UTMALDG (three per slot);
 * the rel err column against cuBLASLt's block-scaled product.
 *
 * Shapes: any N; M % 4 == 0; K % 16 == 0. */
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
#define BN 128      /* columns of D per block: m64n128k32, two accumulator sets */
#define BK 128      /* k per slot: 128 e4m3 = 128 bytes, the swizzle span */
#define DEPTH 6     /* slots in the ring */
#define CONSUMERS 2 /* consumer warpgroups */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK)
#define SLOT_BYTES ((BM + BN) * BK) /* 32 KiB of operands */
#define SCALE_BYTES (BM * 4)        /* A's scales of the slot's K tile */
static_assert(DEPTH * (SLOT_BYTES + SCALE_BYTES) + 1024 == GEMM07_SMEM_BLOCK_SCALED,
              "gemm07.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    block_scaled_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_sa, bf16_t *__restrict__ D,
                         int M, int N, int K, const float *__restrict__ scale_b) {
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
        float sum[BN / 2], part[BN / 2]; /* the long fp32 sum; one K tile's partial sum */
#pragma unroll
        for (int i = 0; i < BN / 2; i++) sum[i] = 0.0f, part[i] = 0.0f;
        wgmma_fence_operands(part);
        const int t128 = threadIdx.x % 128;
        const int row = 64 * c + 16 * (t128 / 32) + (t128 % 32) / 4; /* and row + 8 */
        const float *sb = scale_b + (long)(n0 / 128) * ((tiles + 3) / 4 * 4);

        for (int t = 0; t < tiles; t++) {
            const int s = t % DEPTH;
            const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128, b = ring + s * SLOT_BYTES + A_BYTES;
            const float b_scale = __ldg(sb + t); /* in flight during the wait */
            mbarrier_wait_parity(smem_addr(&full[s]), (t / DEPTH) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 32; k++) /* scale_d = 0 on the first step: part = A B */
                wgmma_e4m3_e4m3_ss<BN>(part, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k),
                                       k > 0);
            wgmma_commit_group();
            const float f0 = scale_rows[s * BM + row] * b_scale; /* the full barrier covers them */
            const float f1 = scale_rows[s * BM + row + 8] * b_scale;
            wgmma_wait_group<0>(); /* this tile's sum is complete: release, then promote */
            wgmma_fence_operands(part);
            if (threadIdx.x % 32 == 0) mbarrier_arrive(smem_addr(&empty[s]));
#pragma unroll
            for (int i = 0; i < BN / 2; i++) sum[i] += part[i] * ((i / 2) % 2 ? f1 : f0);
        }
        store_fragment<BN, bf16_t>(sum, D, M, N, m0 + 64 * c, n0);
    }
}

extern "C" int STAGE(gemm07_block_scaled)(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
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
                            (size_t)GEMM07_SMEM_BLOCK_SCALED, 0, stream};
    return launch_kernel(block_scaled_kernel, cfg, maps->map_a, maps->map_b, *map_sa, D, M, N, K,
                         scale_b);
}
