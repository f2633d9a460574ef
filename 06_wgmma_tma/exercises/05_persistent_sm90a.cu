/* Exercise 5 — a persistent kernel: one block per SM loops over the output tiles, in an order
 * that keeps the operand panels in L2. Start from your exercise 4 (README, stage 5).
 *
 * The idea. The blocks stay resident, so a tile's prologue (filling the ring) and epilogue
 * overlap the neighbouring tiles', and the kernel, not the hardware, decides which tiles run
 * at the same time, hence what L2 must hold.
 *
 * The contract:
 *  - At most one block per SM (launch_sms() in launch.cuh); block b computes tiles b, b + G,
 *    b + 2G, ... of a sequence you define. The ring is never restarted between tiles: producer
 *    and consumers agree on one running count of K tiles. Every slot a consumer read is handed
 *    back, the last one of a tile too.
 *  - The order is this exercise's own piece: write tile_at below. It maps i in
 *    [0, tiles_m * tiles_n) to a tile (tm, tn), every tile exactly once. Make the tiles that run
 *    at the same time (about one per SM, consecutive i) share A panels (tile rows) and B panels
 *    (tile columns): walk a band of a few tile rows column by column, the last band possibly
 *    shorter. Which band height keeps 132 such tiles of 128x256 closest to a square in elements?
 *    (gemm06_tile_at is left out of gemm06_sm90a.cuh for this file: GEMM06_EXERCISE_TILE_ORDER.)
 *  - Compare with the reference: GEMM06_TILE_ORDER=rows|grouped|hilbert make run-06 ARGS=
 *    "--kernel persistent --m 4096 --n 14336 --k 4096".
 *
 * Check it:  make check-06 ARGS="--kernel ex_persistent"
 */
#define GEMM06_EXERCISE_TILE_ORDER /* you write the tile order: tile_at below */
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

/* TODO: the i-th tile of the sequence, as tile row tm and tile column tn (see the hints). */
[[maybe_unused]] static __device__ __forceinline__ void tile_at(const gemm06_tiles &g, int i,
                                                                int &tm, int &tn) {
    /* TODO */
    (void)g, (void)i;
    tm = 0, tn = 0;
}

extern "C" int ex_gemm06_persistent(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                    int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
