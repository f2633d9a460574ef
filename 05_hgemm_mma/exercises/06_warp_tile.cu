/* Exercise 6 — 64x64 warp tiles and register double buffering.
 *
 * Hints:
 *  - 128x256 block tile, 8 warps as 2 x 4, each 64x64: acc[4][8][4] floats.
 *  - Keep two sets of fragments, fa[2][4][4] and fb[2][8][2]: load step kk+1 into one while
 *    the mmas of step kk use the other. At the last kk of a k-tile: mmas, then wait + barrier,
 *    then load the first fragments of the next k-tile.
 *  - __launch_bounds__(256, 1) and check -Xptxas -v: no spill stores. If it spills, keep fewer
 *    addresses live (compute cp.async sources from one pointer per operand).
 *  - 144 KiB of dynamic shared memory (HGEMM_SMEM_WARP_TILE).
 *
 * Check it:  make check-05 ARGS="--kernel ex_warp_tile"
 */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

extern "C" int ex_hgemm_warp_tile(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                  cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
