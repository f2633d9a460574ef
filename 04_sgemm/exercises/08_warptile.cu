/* Exercise 8 — warp tiling.
 *
 * Hints:
 *  - 8 warps as 2 (M) x 4 (N) warp tiles of 64x32; in a warp, lanes as 8 (M) x 4 (N).
 *  - Thread rows: wm + (lane / 4) * 4 + g * 32 + i; columns: wn + (lane % 4) * 4 + g * 16 + j
 *     (g = 0, 1 selects the float4 group, i, j = 0..3).
 *  - Check that every element of the 128x128 tile is owned by exactly one thread.
 *
 * Check it:  make check-04 ARGS="--kernel ex_warptile"   (or make check-04) */
#include "sgemm.h"
#include "stage.h"

extern "C" int ex_sgemm_warptile(int m, int n, int k, float alpha, const float *a, const float *b,
                                 float beta, float *c, cudaStream_t stream) {
    /* TODO */
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)beta, (void)c, (void)stream;
    return LAUNCH_TODO;
}
