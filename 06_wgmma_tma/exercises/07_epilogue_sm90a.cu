/* Exercise 7 — the epilogue through shared memory: stmatrix, then a TMA store that runs while
 * the consumers start the next tile. Start from your stage 6.
 *
 * Hints:
 *  - Shared memory: 3 slots (not 4) and, after them, 32 KiB of staging per consumer warpgroup
 *    (GEMM06_SMEM_EPILOGUE). Staging starts 1024-aligned: ring + 3 * 48 KiB + c * 32 KiB.
 *  - The map of C: gemm06_store_map_for(C, M, N, ...) (boxes of 64 x 64, 128-byte swizzle);
 *    pass it to the kernel as a const __grid_constant__ CUtensorMap like A's and B's. It needs
 *    N % 8 == 0: return launch_unsupported(...) otherwise.
 *  - After a tile's last wgmma_wait_group<0>: thread 0 of the warpgroup calls
 *    tma_store_wait<0>() (its previous store has read the staging area), then
 *    named_barrier_sync(1 + c, 128); stage_fragment<256>(d, staging) (or write your own
 *    stmatrix_x4 loop: lane l addresses row l % 8 of matrix l / 8); fence_proxy_async_shared();
 *    named_barrier_sync(1 + c, 128) again; then thread 0 issues
 *    tma_store_2d(&map_c, staging + box * 8192, n0 + 64 * box, m0 + 64 * c) for box = 0..3 and
 *    tma_store_commit().
 *  - Before the final cluster barrier: thread 0 of each consumer, tma_store_wait<0>() (the
 *    block's shared memory must stay until the stores have read it).
 *  - __syncthreads() in the epilogue would deadlock: the producer never comes.
 *
 * Check it:  make check-06 ARGS="--kernel ex_epilogue"
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_epilogue(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                  int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
