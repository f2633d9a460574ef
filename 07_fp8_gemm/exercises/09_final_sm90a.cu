/* Exercise 9 — a tile per size: your stage 8 with a second tile, 64 x 128, for the shapes whose
 * tiles leave SMs idle, and per-tensor scales beside the block scales.
 *
 * The idea: a persistent grid is as fast as its busiest cluster, and a tile is as fast as its
 * busiest consumer. At M = 64 and 128 (the inference shapes) C has a single row of 128 x 128
 * tiles: at M = 128 the second block of each pair, stacked along M, has no rows, and at M = 64
 * one consumer of the cluster's four computes. A 64 x 128 tile (one consumer warpgroup) puts
 * both blocks of a pair to work at M = 128, and its smaller slots make a deeper ring
 * (64 x 7168 x 16384 block-scaled: 1.076x cuBLASLt against 0.768x for 128 x 128; NOTES.md,
 * "Which tile"). Pick the tile per launch by its estimated time, as chapter 06's stage 8 does:
 * the rounds of tiles the clusters need (a round is one tile on every cluster) times the
 * tile's area over a rate you measure with it forced.
 *
 * The contract:
 *  - Two tiles: 128 x 128 (two consumers, stage 8's) and 64 x 128 (one consumer, 232
 *    registers still: its sums and two accumulators), from one kernel template over the number
 *    of consumers. The shared memory each needs sized from its own slots (the 64 x 128 slot is
 *    24 KiB, so more of them fit, at most GEMM07_SMEM_FINAL in all).
 *  - The pick: for each tile, ceil(tiles / clusters) x rows of the tile / rate; the smallest
 *    wins. Rates in TFLOPS at 8192^3 with the tile forced (an environment variable read once,
 *    so the tests can run every tile at every shape).
 *  - Both scalings: ex_final_block (stage 8's scales) and ex_final_tensor, one scale each for
 *    A and B (stage 3's: the promotion adds, the product of the two scales applied in the
 *    epilogue), from the same kernel with a flag.
 *  - Everything else as stage 8: its K loop's count (47.5 block-scaled) holds for the 128 x 128
 *    tile; no LDL/STL; no serialized wgmmas.
 *
 * Optional reading, in kernels/09_final_sm90a.cu beyond this exercise: the K split for few
 * tiles (final07_split, split_ways, merge_pieces: a tile's K tiles on several clusters and
 * the pieces' fp32 sums added by the last), blocks alone (clusters of one block where C has a
 * single tile row: cluster_for), the 128 x 144 tile (cuBLASLt's, wider_144; block-scaled,
 * two B scales a K tile, TWO_B), the narrow tiles for small M (64 x 64/32/16: narrow_tile), the
 * 256 x 128 tile (two 64-row bands per consumer, one accumulator, its cluster's blocks side by
 * side sharing A, waits with a suspend-time hint), what lies between two units (the next
 * unit's tile found once and carried; groups of 16 pair rows at K <= 512), and NOTES.md's
 * sections on the final kernel, each with what it measured.
 *
 * Check it:  make check-07 ARGS="--kernel ex_final_tensor --kernel ex_final_block" */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "ptx/cluster.cuh"
#include "ptx/named_barrier.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_final_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                      const float *scale_b, bf16_t *D, int M, int N, int K,
                                      cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_gemm07_final_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                     const float *scale_b, bf16_t *D, int M, int N, int K,
                                     cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
