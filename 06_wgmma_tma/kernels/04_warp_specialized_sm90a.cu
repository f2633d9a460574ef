/* Stage 4 — warp specialization: a producer warpgroup that only issues TMA copies, two consumer
 * warpgroups that only multiply, registers moved from the first to the others with setmaxnreg,
 * and a 128x256 tile.
 *
 * What changes from stage 3. There, thread 0 did both jobs: waiting on an empty barrier stopped
 * its warp, and with it its warpgroup's next wgmma. Here a third warpgroup (threads 0..127)
 * produces: one of its threads walks the K tiles, waits until a slot is empty, arms the slot's
 * full barrier and issues the two copies; the consumers (threads 128..383) never wait for
 * anything but data. The two roles are one if/else on the warpgroup index, so each role's code
 * is compiled for itself.
 *
 * Registers. A block of 384 threads with __launch_bounds__(384, 1) starts at 168 registers per
 * thread (65536 / 384, rounded down to a multiple of 8). The producer needs a few dozen, the
 * consumers 128 for the accumulators alone plus addresses. setmaxnreg_dec<40> in the producer
 * returns 128 x 128 registers to the SM's pool; setmaxnreg_inc<232> in each consumer takes
 * 128 x 64 of them: 128 x 40 + 256 x 232 = 64512 <= 65536.
 *
 * Why 128x256. Each consumer now issues m64n256k16 (its 128 accumulators fit even without
 * setmaxnreg with ptxas 13.0: 154 registers; README, stage 4): one
 * instruction does twice the work of stage 3's m64n128k16 for the same A operand read, and the
 * block loads 128 + 256 rows for 128 x 256 outputs: 85 flops per operand byte instead of 64.
 * The ring has 4 slots of 48 KiB (192 KiB); 5 would not fit in 227 KiB.
 *
 * The producer's first pass over the ring waits on parity 1 of fresh empty barriers: a fresh
 * barrier is in phase 0, and the phase before it counts as completed, so the wait returns at
 * once and no special case is needed for the first DEPTH tiles.
 *
 * What to look for. SASS: USETMAXREG (twice: DEALLOC and TRY_ALLOC), HGMMA.64x256x16.F32.BF16,
 * UTMALDG.2D, SYNCS. ptxas: no warning C7508 (it would mean setmaxnreg was ignored). Profile:
 * the tensor pipe busier, the consumers' stalls now mostly "waiting for wgmma".
 *
 * Still: each block computes one tile and exits, so the epilogue (stores straight from
 * registers) and the prologue (filling an empty ring) are not overlapped with any math, and
 * neighbouring blocks start in an order the hardware picks. Stage 5 keeps the blocks alive.
 *
 * Shapes: any M and N; K % 8 == 0 (TMA's 16-byte row stride). */
/* A/B switches (06_wgmma_tma/ab.list; not part of the lesson's kernel):
 *   GEMM06_AB_WS_128X128  stage 3's 128x128 tile (two consumers of m64n128k16, 4 slots of 32 KiB,
 *                         129 KiB: still one block per SM), the producer and setmaxnreg kept:
 *                         stage 3 at depth 4 -> it is the producer of its own, it -> stage 4
 *                         the 128x256 tile.
 *   GEMM06_AB_WS_NO_SETMAXNREG  stage 4 with its two setmaxnreg calls made no-ops: every thread
 *                         keeps the 168 registers of __launch_bounds__ (ptxas 13.0 fits the
 *                         m64n256 consumer in 154, no spills): what setmaxnreg is worth. */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#if defined(GEMM06_AB_WS_NO_SETMAXNREG) /* A/B, README stage 4 "Registers ...: setmaxnreg" */
template <int REGS> static __device__ __forceinline__ void setmaxnreg_kept() {}
#define setmaxnreg_dec setmaxnreg_kept
#define setmaxnreg_inc setmaxnreg_kept
#endif

#define BM 128          /* rows of C per block: two consumer warpgroups of 64 */
#define BN 256          /* columns of C per block: m64n256k16 */
#define BK GEMM06_BK
#define DEPTH 4         /* slots in the ring */
#define CONSUMERS 2     /* consumer warpgroups */
#define THREADS (128 * (1 + CONSUMERS))
#define A_BYTES (BM * BK * 2)
#define SLOT_BYTES ((BM + BN) * BK * 2) /* 48 KiB */
#if defined(GEMM06_AB_WS_128X128) /* A/B, README stage 4 "A 128x256 tile": stage 3's tile */
#undef BN
#define BN 128
#undef GEMM06_SMEM_WARP_SPECIALIZED
#define GEMM06_SMEM_WARP_SPECIALIZED (4 * (128 + 128) * 128 + 1024)
#endif
static_assert(DEPTH * SLOT_BYTES + 1024 == GEMM06_SMEM_WARP_SPECIALIZED, "gemm06.h agrees");

static __global__ void __launch_bounds__(THREADS, 1)
    warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, bf16_t *__restrict__ C,
                            int M, int N, int K) {
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
        wgmma_fence_operands(d); /* the zeros stay before the wgmmas (else C7515, below) */

        for (int t = 0; t < tiles; t++) {
            const int s = t % DEPTH;
            const unsigned a = ring + s * SLOT_BYTES + c * 64 * 128, b = ring + s * SLOT_BYTES + A_BYTES;
            mbarrier_wait_parity(smem_addr(&full[s]), (t / DEPTH) & 1);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / 16; k++)
                wgmma_bf16_ss<BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k), 1);
            wgmma_commit_group();
            wgmma_wait_group<1>(); /* tile t - 1 is done: release its slot */
            if (t > 0 && threadIdx.x % 32 == 0) mbarrier_arrive(smem_addr(&empty[(t - 1) % DEPTH]));
        }
        wgmma_wait_group<0>();
        wgmma_fence_operands(d);
        store_fragment<BN>(d, C, M, N, m0 + 64 * c, n0);
    }
}

extern "C" int STAGE(gemm06_warp_specialized)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M,
                                              int N, int K, cudaStream_t stream) {
    if (blocks_for(M, BM) > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3(blocks_for(N, BN), blocks_for(M, BM)), dim3(THREADS),
                            (size_t)GEMM06_SMEM_WARP_SPECIALIZED, 0, stream};
    return launch_kernel(warp_specialized_kernel, cfg, maps->map_a, maps->map_b, C, M, N, K);
}
