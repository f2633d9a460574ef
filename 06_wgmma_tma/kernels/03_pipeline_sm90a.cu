/* Stage 3 — a pipeline: a ring of K tiles in shared memory, with a "full" and an "empty"
 * mbarrier per slot, so that the copies of the next tiles run while the tensor cores multiply
 * this one.
 *
 * What changes from stage 2. There, each K tile went load -> wait -> multiply -> wait ->
 * barrier -> load: the tensor cores idled during every copy (about a microsecond of latency
 * from global memory), and the copy engine idled during every multiply. Here the block owns
 * DEPTH slots of 32 KiB (one A tile and one B tile each). Thread 0 fills them all at the start;
 * from then on, as soon as both warpgroups are done with a slot, it refills the slot with the
 * tile DEPTH further on. A multiply finds its tile already there unless the copies fall more
 * than DEPTH - 1 tiles behind.
 *
 * Two barriers per slot, because two things must be waited for:
 *  - full[s]: "the tile in slot s has landed". Thread 0 arms it with arrive_expect_tx(32 KiB)
 *    and the TMA engine completes it (stage 2's barrier, one per slot now);
 *  - empty[s]: "everybody is done reading slot s". One arrival from each warp (count 8), after
 *    its wait_group says the wgmmas on the slot have finished; thread 0 waits on it before
 *    overwriting. (One arrival per warpgroup is what CUTLASS does, trusting that the four
 *    warps of a warpgroup finish a wgmma together; one per warp needs no such trust and costs
 *    three more arrivals per tile.)
 * Each barrier completes once per use of its slot, so the parity to wait for is the use
 * number's lowest bit: tile t sits in slot t % DEPTH, for use t / DEPTH.
 *
 * The wgmmas stay asynchronous across iterations. After issuing tile t's four wgmmas a
 * warpgroup waits with wgmma_wait_group<1>: all groups but the newest are done, i.e. tile t - 1
 * is finished and its slot can be released, while tile t still runs. So the tensor core always
 * has the next group queued when one finishes; stage 2's wait_group<0> drained it every tile.
 *
 * Which depth wins. Set GEMM06_PIPELINE_DEPTH=2..6 to force one (make run-06 ARGS="--kernel
 * pipeline"); 06_wgmma_tma/sweep.sh measures them all (README, "Which depth"). Depth 2 is
 * double buffering: the copy of tile t+1 has only the time of one multiply (128x128x64: a few
 * hundred nanoseconds) to arrive, less than a trip to DRAM under load: 0.57x cuBLAS at 4096^3
 * on an H100. Depth 3 wins (0.69x), and not because three slots hide more latency than four:
 * 3 x 32 KiB + 1 KiB = 97 KiB lets two blocks share an SM (228 KiB), and the second block's
 * wgmmas fill the gaps of the first (its prologue, its epilogue, a late tile). From 4 on a
 * block holds more than half the SM's shared memory, one block per SM, and the rate drops
 * (0.68x at 4, 0.64x at 5), sharply when B is too large for L2 (4096x14336x4096: 0.65x at 3,
 * 0.48x at 4). Depth is a trade against occupancy, and the ring is only one of the things that
 * hide latency.
 *
 * What is still wrong. Thread 0 is both the producer and a consumer: when it waits on an empty
 * barrier, its warp stops issuing wgmmas, and the whole warpgroup waits for it at the next
 * wgmma (the instruction is warpgroup-wide). And every thread holds the registers of the
 * producer's addresses too. Stage 4 gives the copies a warpgroup of their own.
 *
 * What to look for. SASS: UTMALDG.2D, SYNCS.ARRIVE.TRANS64 (expect_tx), SYNCS.ARRIVE.TRANS64.A1T0
 * (the plain arrivals on empty), SYNCS.PHASECHK (both waits), HGMMA.64x128x16.F32.BF16 with
 * WARPGROUP.DEPBAR.LE gsb0, 0x1 (the wait_group<1>). Profile: the tensor pipe's active cycles
 * go up, the stalls on the full barrier go down with depth.
 *
 * Shapes: any M and N; K % 8 == 0 (TMA's 16-byte row stride). */
#include <stdlib.h>

#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

#define BM 128      /* rows of C per block: two warpgroups of 64 */
#define BN 128      /* columns of C per block */
#define BK GEMM06_BK
#define THREADS 256 /* two warpgroups */
#define SLOT_BYTES ((BM + BN) * BK * 2) /* one A tile and one B tile: 32 KiB */

template <int DEPTH>
static __global__ void __launch_bounds__(THREADS)
    pipeline_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, bf16_t *__restrict__ C, int M,
                    int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    const unsigned ring = smem_addr(align1024(smem)); /* slot s: A at ring + s * SLOT_BYTES, B after */
    const int wg = threadIdx.x / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tiles = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        tma_prefetch_map(&map_a);
        tma_prefetch_map(&map_b);
        for (int s = 0; s < DEPTH; s++) {
            mbarrier_init(smem_addr(&full[s]), 1);  /* thread 0's arrive_expect_tx */
            mbarrier_init(smem_addr(&empty[s]), THREADS / 32); /* one arrival per warp */
        }
        fence_proxy_async_shared();
    }
    __syncthreads();

    /* Tile t into slot t % DEPTH; called by thread 0 only. */
    auto load = [&](int t) {
        const int s = t % DEPTH;
        const unsigned a = ring + s * SLOT_BYTES, b = a + BM * BK * 2;
        const unsigned bar = smem_addr(&full[s]);
        mbarrier_arrive_expect_tx(bar, SLOT_BYTES);
        tma_load_2d(a, &map_a, bar, t * BK, m0);
        tma_load_2d(b, &map_b, bar, t * BK, n0);
    };
    if (threadIdx.x == 0)
        for (int t = 0; t < DEPTH && t < tiles; t++) load(t);

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
    /* Pin the zeros here. Without this, ptxas may place some of them inside the loop, where
     * they would redefine d while a wgmma is in flight: it then serializes every wgmma
     * (info C7515, a WARPGROUP.DEPBAR after each HGMMA in SASS), costing a third of the speed. */
    wgmma_fence_operands(d);

    for (int t = 0; t < tiles; t++) {
        const int s = t % DEPTH;
        const unsigned a = ring + s * SLOT_BYTES + wg * 64 * 128, b = ring + s * SLOT_BYTES + BM * 128;
        mbarrier_wait_parity(smem_addr(&full[s]), (t / DEPTH) & 1);

        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; k++)
            wgmma_bf16_ss<BN>(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k), 1);
        wgmma_commit_group();
        /* Tile t - 1's wgmmas are done; tile t's may still run, writing d. So no
         * wgmma_fence_operands(d) here (stage 2 had one): an asm that "defines" d while a wgmma
         * owns it may make ptxas serialize the wgmmas (info C7515; NOTES.md, stage 3). */
        wgmma_wait_group<1>();

        if (t > 0) {
            const int prev = t - 1, ps = prev % DEPTH;
            /* This warp no longer reads slot ps: lane 0 says so for it. */
            if (threadIdx.x % 32 == 0) mbarrier_arrive(smem_addr(&empty[ps]));
            /* Refill it with tile prev + DEPTH once the other warpgroup has let go too. */
            if (threadIdx.x == 0 && prev + DEPTH < tiles) {
                mbarrier_wait_parity(smem_addr(&empty[ps]), (prev / DEPTH) & 1);
                load(prev + DEPTH);
            }
        }
    }
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);

    store_fragment<BN>(d, C, M, N, m0 + 64 * wg, n0);
}

/* Dynamic shared memory for a depth: the ring plus the 1024 bytes of alignment slack. */
static constexpr size_t ring_bytes(int depth) { return (size_t)depth * SLOT_BYTES + 1024; }
static_assert(ring_bytes(GEMM06_PIPELINE_DEPTH) == GEMM06_SMEM_PIPELINE, "gemm06.h agrees");

template <int DEPTH>
static int launch_depth(const gemm06_maps *maps, bf16_t *C, int M, int N, int K,
                        cudaStream_t stream) {
    const launch_cfg cfg = {dim3(blocks_for(N, BN), blocks_for(M, BM)), dim3(THREADS),
                            ring_bytes(DEPTH), 0, stream};
    return launch_kernel(pipeline_kernel<DEPTH>, cfg, maps->map_a, maps->map_b, C, M, N, K);
}

/* GEMM06_PIPELINE_DEPTH, read once: the depth sweep of the README. Anything but 2..6 is an
 * error, not a silent default. */
static int forced_depth(void) {
    static int depth = -1;
    if (depth < 0) {
        const char *e = getenv("GEMM06_PIPELINE_DEPTH");
        depth = 0;
        if (e && *e) {
            char *end;
            const long v = strtol(e, &end, 10);
            depth = (*end == 0 && v >= 2 && v <= 6) ? (int)v : 1; /* 1: invalid */
        }
    }
    return depth;
}

extern "C" int STAGE(gemm06_pipeline)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                      int K, cudaStream_t stream) {
    if (blocks_for(M, BM) > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    const int depth = forced_depth();
    if (depth == 1) return launch_unsupported("GEMM06_PIPELINE_DEPTH must be 2..6");
    char err[256];
    const gemm06_maps *maps = gemm06_maps_for(A, B, M, N, K, BM, BN, err, sizeof err);
    if (!maps) return launch_unsupported("%s", err);
    switch (depth ? depth : GEMM06_PIPELINE_DEPTH) {
    case 2: return launch_depth<2>(maps, C, M, N, K, stream);
    case 3: return launch_depth<3>(maps, C, M, N, K, stream);
    case 4: return launch_depth<4>(maps, C, M, N, K, stream);
    case 5: return launch_depth<5>(maps, C, M, N, K, stream);
    default: return launch_depth<6>(maps, C, M, N, K, stream);
    }
}
