/* Exercise 9 — a tile per size: your stage 8 with a second tile, 64 x 128, for the shapes whose
 * tiles leave SMs idle, clusters of one block where C has one tile row, and a K split where the
 * tiles are few.
 *
 * The idea: a persistent grid is as fast as its busiest cluster. At M = 64 and 128 (the
 * inference shapes) C has a single row of 128 x 128 tiles: at M = 128 the second block of each
 * pair, stacked along M, has no rows, and at M = 64 one consumer of the cluster's four
 * computes. Make more units than there are SMs to run them: a smaller tile, a block alone where
 * a partner would have no rows, and K tiles cut across clusters where even the small tiles are
 * few (64 x 2112 x 7168: 17 tiles of 64 x 128 for 132 SMs).
 *
 * The contract:
 *  - Two tiles: 128 x 128 (two consumers, stage 8's) and 64 x 128 (one consumer, 232
 *    registers still: its sums and two accumulators), from one kernel template over the number
 *    of consumers, the ring's depth and the shared memory sized from each tile's own slots (the
 *    64 x 128 slot is 24 KiB, so more fit, at most GEMM07_SMEM_FINAL in all).
 *  - The pick: for each tile, ceil(units / clusters) x rows of the tile / rate; the smallest
 *    wins (a unit: what a cluster takes from the tile order, here a pair of tiles or a tile
 *    alone). Rates in TFLOPS at 8192^3 with the tile forced.
 *  - Clusters of one block where C has one row of the tile (M <= 64 for 64 x 128, M <= 128
 *    for 128 x 128): each block then loads all of B's tile itself.
 *  - The K split, for the 64 x 128 tile when its units (a pair of tiles, or one alone) number
 *    at most a quarter of the SMs: a tile's K tiles in `ways` pieces on separate clusters (at least 16 K tiles a piece), each
 *    piece's fp32 sums written to a workspace, the last piece to finish adding them all in a
 *    fixed order (so the bits do not depend on which came last) and storing the tile. Count
 *    the pieces with an atomic per tile and set it back for the next launch.
 *  - GEMM07_FINAL_TILE (128x128, 64x128), GEMM07_FINAL_CLUSTER (1, 2) and GEMM07_FINAL_SPLIT
 *    (a number of ways) force each choice, read once, so the tests can run every one at every
 *    shape.
 *  - Everything else as stage 8: its K loop's count (48.5) holds for the 128 x 128 tile in
 *    pairs; no LDL/STL; no serialized wgmmas.
 *
 * Check it:  make check-07 ARGS="--kernel ex_tiles" */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_tiles(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                               const float *scale_b, bf16_t *D, int M, int N, int K,
                               cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
