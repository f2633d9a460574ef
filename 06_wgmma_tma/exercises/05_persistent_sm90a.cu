/* Exercise 5 — a persistent kernel: one block per SM loops over output tiles, in an order that
 * keeps A and B panels in L2. Start from your stage 4.
 *
 * Hints:
 *  - Grid: min(tiles, SMs) blocks (launch_sms()). Block b takes tiles b, b + gridDim.x, ...
 *  - The tile order: pass a gemm06_tiles {tiles_m, tiles_n, order} by value; fill it with
 *    gemm06_schedule(&sched, GEMM06_ORDER_GROUPED, stream) (a Hilbert order needs its table
 *    uploaded, which that call does), and in the kernel get (tm, tn) of the i-th tile with
 *    gemm06_tile_at(sched, i, tm, tn).
 *  - The ring does not restart per tile: keep one counter `it` of K tiles over all of a block's
 *    tiles, in the producer and in the consumers; slot it % 4, parity (it / 4) & 1.
 *  - Consumers: zero d at each tile; after its last K tile, wait_group<0>, release that last
 *    slot too (stage 4 never needed to), then store. The producer, meanwhile, is already
 *    loading the next tile.
 *  - Try GEMM06_TILE_ORDER=rows|grouped|hilbert on the reference stage: which wins, where?
 *
 * Check it:  make check-06 ARGS="--kernel ex_persistent"
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

extern "C" int ex_gemm06_persistent(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                    int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
