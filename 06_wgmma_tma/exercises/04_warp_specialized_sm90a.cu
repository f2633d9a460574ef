/* Exercise 4 — warp specialization: one producer warpgroup issues the copies, two consumer
 * warpgroups multiply; setmaxnreg moves registers to the consumers; a 128x256 tile.
 *
 * Hints:
 *  - 384 threads, __launch_bounds__(384, 1) (the 1 matters: setmaxnreg is ignored without a
 *    fixed register budget, warning C7508). Grid (ceil(N/256), ceil(M/128)).
 *  - Maps: gemm06_maps_for(A, B, M, N, K, 128, 256, ...). A box is 128 x 64, B's 256 x 64.
 *  - Ring: 4 slots of (128 + 256) rows x 128 bytes = 48 KiB: GEMM06_SMEM_WARP_SPECIALIZED.
 *  - Roles, one if/else on threadIdx.x / 128 (warpgroup-uniform):
 *      producer (warpgroup 0): setmaxnreg_dec<40>(); thread 0 alone loops over the K tiles:
 *        wait empty[s] with parity ((t / 4) & 1) ^ 1 (a fresh barrier's "previous phase" counts
 *        as complete, so the first pass does not block), arrive_expect_tx(full[s], 48 KiB),
 *        two tma_load_2d;
 *      consumers (warpgroups 1, 2): setmaxnreg_inc<232>(); wait full[s]; four
 *        wgmma_bf16_ss<256> on A rows 64 (wg - 1) ..; commit; wgmma_wait_group<1>(); lane 0 of
 *        each warp arrives on empty[(t-1) % 4]; after the loop wait_group<0>, fence the
 *        operands, store_fragment<256>.
 *  - empty[] counts 8 arrivals (the consumer warps), full[] one.
 *  - SASS: USETMAXREG (DEALLOC and TRY_ALLOC), HGMMA.64x256x16; no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_warp_specialized"
 */
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

extern "C" int ex_gemm06_warp_specialized(const bf16_t *A, const bf16_t *B, bf16_t *C, int M,
                                          int N, int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
