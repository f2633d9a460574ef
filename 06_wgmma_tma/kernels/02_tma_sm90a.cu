/* Stage 2 — TMA: each operand tile arrives with one instruction, on an mbarrier; a 128x128 tile
 * of C per block, two warpgroups of 64 rows each.
 *
 * What changes from stage 1. There, per K tile, 128 threads computed the addresses, bounds
 * and swizzled offsets of 1536 16-byte chunks and issued 12 loads and 12 stores each. Here one
 * thread issues two cp.async.bulk.tensor (SASS UTMALDG): the Tensor Memory Accelerator reads a
 * 128-row by 64-k box of A and one of B, clips it at the matrix edges (elements past M, N or
 * K arrive as zeros), and writes it in the 128-byte swizzled layout that wgmma reads: the same
 * bytes stage 1 wrote by hand.
 * The box, the strides, the swizzle and the edge handling live in a tensor map (CUtensorMap,
 * 128 bytes) that the launcher encodes on the host and the kernel receives as a
 * `const __grid_constant__` parameter.
 *
 * How the threads learn that the bytes are there: an mbarrier in shared memory. Thread 0 arms
 * it with mbarrier_arrive_expect_tx(bytes of both boxes) and issues the copies; the TMA engine
 * counts the bytes down as they land; when the arrival and all the bytes are in, the barrier's
 * phase completes, and every thread waiting on that phase's parity (0, 1, 0, ... one per K
 * tile) proceeds. Bytes written by TMA are already in the async proxy that wgmma reads, so no
 * proxy fence is needed (stage 1 needed one after its ordinary stores).
 *
 * Why 128x128 and two warpgroups. A block now loads 128 + 128 rows for 128 x 128 outputs: 64
 * flops per byte of operand instead of 43 for stage 1's 64x128, and the second warpgroup
 * shares the B tile. Each warpgroup issues the same m64n128k16 wgmma as stage 1 on its own 64
 * rows of A (at 8 KiB into the A tile, a 1024-byte boundary).
 *
 * Still single-buffered: load, wait, multiply, wait, barrier, load again. While a block waits
 * for TMA its tensor core is idle; only the other blocks resident on the SM (33 KiB of shared
 * memory each) fill the gap. Stage 3 keeps a ring of K tiles in flight.
 *
 * What to look for. SASS: UTMALDG.2D (two per K tile, one thread), SYNCS.ARRIVE.TRANS64 (the
 * expect_tx) and SYNCS.PHASECHK.TRANS64.TRYWAIT (the wait), HGMMA.64x128x16.F32.BF16; no LDG
 * and STS for the operands any more. Profile: the long-scoreboard stalls of stage 1 become
 * waits on the barrier; the issue slots the copies took are free.
 *
 * Shapes: any M and N; K % 8 == 0, because TMA needs the row stride (K * 2 bytes) to be a
 * multiple of 16. The K tail and the M, N edges come from TMA's zero fill. */
/* A/B switches (06_wgmma_tma/ab.list; not part of the lesson's kernel):
 *   GEMM06_AB_TMA_64X128  stage 1's tile (64x128, one warpgroup, 25 KiB) with TMA and the
 *                         mbarrier kept: stage 1 -> it is the copy engine and the mbarrier,
 *                         it -> stage 2 the tile twice as big. */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "tensor_map.h"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128      /* rows of C per block: two warpgroups of 64 */
#define BN 128      /* columns of C per block: the wgmma's N */
#define BK GEMM06_BK /* k per tile: 64 bf16 = 128 bytes, the 128-byte swizzle span */
#define THREADS 256 /* two warpgroups */
#define TILE_BYTES ((BM + BN) * BK * 2) /* what one K tile brings: 32 KiB */
#if defined(GEMM06_AB_TMA_64X128) /* A/B, README stage 2 "A tile twice as big": stage 1's tile */
#undef BM
#define BM 64
#undef THREADS
#define THREADS 128
#undef GEMM06_SMEM_TMA
#define GEMM06_SMEM_TMA GEMM06_SMEM_FIRST_WGMMA /* A 64 rows, B 128 rows: 25 KiB */
#endif

static __global__ void __launch_bounds__(THREADS)
    tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               bf16_t *__restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full; /* "this K tile has landed" */
    unsigned char *a_tile = align1024(smem);   /* 128 rows x 128 bytes = 16 KiB */
    unsigned char *b_tile = a_tile + BM * 128; /* 128 rows x 128 bytes = 16 KiB */
    const unsigned a_s = smem_addr(a_tile), b_s = smem_addr(b_tile), bar = smem_addr(&full);
    const int wg = threadIdx.x / 128;          /* which 64 rows of the block this warpgroup owns */
    const unsigned a_wg = a_s + wg * 64 * 128; /* its A rows: 8 KiB in, still 1024-aligned */
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a); /* fetch the two maps while the barrier is set up */
        tma_prefetch_map(&map_b);
        mbarrier_init(bar, 1);      /* one arrival per phase: thread 0's arrive_expect_tx */
        fence_proxy_async_shared(); /* the init, visible to the TMA engine that completes bytes */
    }
    __syncthreads(); /* the init, visible to every thread before anyone waits */

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;

    unsigned phase = 0;
    for (int k0 = 0; k0 < K; k0 += BK, phase ^= 1) {
        if (threadIdx.x == 0) {
            /* The full boxes count, zero-filled parts included. Coordinates: innermost (k)
             * first, then the row; they may run past the matrix. */
            mbarrier_arrive_expect_tx(bar, TILE_BYTES);
            tma_load_2d(a_s, &map_a, bar, k0, m0);
            tma_load_2d(b_s, &map_b, bar, k0, n0);
        }
        mbarrier_wait_parity(bar, phase);

        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; k++)
            wgmma_bf16_ss<BN>(d, desc_sw128(a_wg + 32 * k), desc_sw128(b_s + 32 * k), 1);
        wgmma_commit_group();
        wgmma_wait_group<0>();
        wgmma_fence_operands(d);
        __syncthreads(); /* both warpgroups are done reading before thread 0 refills the tiles */
    }

    /* Epilogue: the accumulator fragment as in stage 1, rows offset by this warpgroup's 64. */
    store_fragment<BN>(d, C, M, N, m0 + 64 * wg, n0);
}

/* ---- host ------------------------------------------------------------------------------
 * A tensor map holds the tensor's address and shape, so it must be encoded again for new
 * pointers or sizes, but not for every launch: cuTensorMapEncodeTiled is a driver call on the
 * host, and the timed launches of one shape would pay for it each time. gemm06_maps_for
 * (gemm06_sm90a.cuh) encodes A's and B's maps (dims {K, rows}, rows K * 2 bytes apart, boxes
 * of 64 k by BM or BN rows, 128-byte swizzle, zero fill) and keeps the last eight problems'. */
extern "C" int STAGE(gemm06_tma)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                 int K, cudaStream_t stream) {
    const unsigned m_tiles = blocks_for(M, BM);
    if (m_tiles > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    const launch_cfg cfg = {dim3(blocks_for(N, BN), m_tiles), dim3(THREADS),
                            (size_t)GEMM06_SMEM_TMA, 0, stream};
    return launch_kernel(tma_kernel, cfg, maps->map_a, maps->map_b, C, M, N, K);
}
