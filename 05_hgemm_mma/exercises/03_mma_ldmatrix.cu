/* Exercise 3 — mma.sync m16n8k16 and ldmatrix.
 *
 * Hints:
 *  - Same tiling as stage 2, but use mma_m16n8k16_f32 (ptx/mma.cuh) and ldmatrix_x4
 *    (ptx/ldmatrix.cuh). The fragment layouts are written at the top of ptx/mma.cuh.
 *  - A 16x16 A fragment: lane l passes the address of row (l % 16), column 8 * (l / 16).
 *  - Two 16x8 B fragments (n tiles j and j+1) from Bs[n][k]: lane l passes row
 *    n0 + (l % 8) + 8 * (l / 16), column 8 * ((l / 8) % 2); registers come out as
 *    b0, b1 of tile j, then b0, b1 of tile j+1.
 *  - Accumulator c0, c1 are (row g, cols p, p+1), c2, c3 row g+8 (g = lane / 4,
 *    p = 2 * (lane % 4)): store them as __half2 when N is even, one by one otherwise.
 *  - make test checks the reference's SASS for HMMA and LDSM.
 *
 * Check it:  make check-05 ARGS="--kernel ex_mma_ldmatrix"
 */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

extern "C" int ex_hgemm_mma_ldmatrix(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                     cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
