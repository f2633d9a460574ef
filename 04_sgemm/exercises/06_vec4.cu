/* Exercise 6 — float4 loads, A transposed in shared memory.
 *
 * Hints:
 *  - Each thread loads one float4 of the 128x8 A tile and one float4 of the 8x128 B tile.
 *  - Store the A float4 transposed: As[k + j][m] for j = 0..3, so that A's 8 values for step k
 *     are contiguous and can be read with two float4 loads, like B's.
 *  - Look for LDG.E.128 and LDS.128 in the SASS.
 *
 * Check it:  make check-04 ARGS="--kernel ex_vec4"   (or make check-04) */
#include "sgemm.h"
#include "stage.h"

extern "C" int ex_sgemm_vec4(int m, int n, int k, float alpha, const float *a, const float *b,
                             float beta, float *c, cudaStream_t stream) {
    /* TODO */
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)beta, (void)c, (void)stream;
    return LAUNCH_TODO;
}
