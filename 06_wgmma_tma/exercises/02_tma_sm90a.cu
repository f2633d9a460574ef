/* Exercise 2 — TMA: the operand tiles by cp.async.bulk.tensor into an mbarrier; a 128x128 tile
 * of C per block, two warpgroups of 64 rows each.
 *
 * Hints:
 *  - Host: two tensor maps (tensor_map.h), one per operand: type TMAP_BF16, rank 2,
 *    dims {K, rows} (innermost first), strides {K * 2}, box {64, 128}, TMAP_SWIZZLE_128B,
 *    TMAP_FILL_ZERO. Encode them once per (A, B, M, N, K) and keep them in a static cache:
 *    a timed launch must not call the driver's encoder. On failure return
 *    launch_unsupported("%s", err).
 *  - Kernel parameters: const __grid_constant__ CUtensorMap map_a, map_b (pass &map_a to the
 *    wrappers; a local copy would not work). Launch with launch_kernel (launch.cuh): 256
 *    threads, GEMM06_SMEM_TMA bytes of dynamic shared memory, grid (ceil(N/128), ceil(M/128)).
 *  - Shared memory: the A tile (128 rows x 128 bytes) then the B tile, from a 1024-byte
 *    boundary, and one mbarrier (__shared__ __align__(8) unsigned long long).
 *  - Thread 0: mbarrier_init(bar, 1), fence_proxy_async_shared(); then __syncthreads().
 *  - Each K tile: thread 0 calls mbarrier_arrive_expect_tx(bar, 32768) (both full boxes, even
 *    at an edge) and tma_load_2d(dst, &map, bar, k0, row0) for A and for B; everybody
 *    mbarrier_wait_parity(bar, phase), phase flipping 0, 1, 0, ... per tile.
 *  - Warpgroup g = threadIdx.x / 128 multiplies A rows 64g .. 64g + 63 (8 KiB into the A tile)
 *    by the whole B tile: the four wgmmas of stage 1. __syncthreads() before the next load.
 *  - Epilogue as in stage 1, rows offset by 64g.
 *  - Check the SASS: UTMALDG.2D, SYNCS.ARRIVE.TRANS64, SYNCS.PHASECHK, HGMMA, no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_tma"
 */
#include "stage.h"
#include "gemm06.h"
#include "launch.cuh"
#include "tensor_map.h"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_tma(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                             cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
