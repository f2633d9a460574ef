/* Exercise 10 — the NN layout: B row-major K x N, ldmatrix.trans.
 *
 * Hints:
 *  - The B pointer you get is K x N row-major (ldb = N). Copy 64 k-rows x 128 n-columns of it
 *    per stage: tile rows of 256 bytes (16 chunks), chunk c of k-row r at
 *    r * 256 + ((c ^ (r & 7)) << 4). The driver only runs this when N % 8 == 0.
 *  - ldmatrix_x4_trans: lane l passes k-row 16 * kk + (l % 8) + 8 * ((l / 8) % 2) at the
 *    n-chunk of column n0 + 8 * (l / 16); out come b0, b1 of n tile j, then of tile j+1.
 *  - A is loaded exactly as in stage 5.
 *
 * Check it:  make check-05 ARGS="--kernel ex_nn"
 */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

extern "C" int ex_hgemm_nn(const f16_t *A, const f16_t *Bkn, f16_t *C, int M, int N, int K,
                           cudaStream_t stream) {
    /* TODO */
    (void)A, (void)Bkn, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
