/* Exercise 8 — warp tiling.
 *
 * Hints:
 *  - Start from exercise 7; the copies into shared memory stay as they are. What changes is
 *    which 8x8 outputs each thread owns, and so which float4s it reads from As and Bs.
 *  - The idea: place threads by warp. The 128x128 block tile is 8 warp tiles of 64x32
 *    (2 along M, 4 along N); inside its warp tile, a warp's 32 lanes form an 8 (M) x 4 (N)
 *    grid. A thread's 8 rows are two float4 groups and so are its 8 columns: the 8 lanes
 *    along M first cover 32 consecutive rows with one float4 each, then the second group
 *    covers the next 32; likewise 4 lanes x 4 columns, then the next 16. Write the row and
 *    column of acc[i][j] from warp, lane, i and j yourself.
 *  - Check the map on the host before the GPU: write it as a plain function of (thread, i, j),
 *    loop over 256 threads x 64 outputs and assert that each of the 128x128 elements comes up
 *    exactly once. Then, for one k and one float4 group, list the float4 of As each lane of
 *    warp 0 reads: 8 distinct float4s, contiguous (128 bytes: one wavefront, broadcast to the
 *    other lanes); of Bs, 4. README, "Stage 8's map", has the formulas to compare with.
 *  - The epilogue uses the same map: each float4 of C a thread writes is a row segment of 4
 *    outputs of one group.
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
