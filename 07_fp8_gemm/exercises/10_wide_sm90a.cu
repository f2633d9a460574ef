/* Exercise 10 — the wide tile sharing A: your stage 9 with a 256 x 128 tile whose cluster's two
 * blocks sit side by side along N, for the shapes with many tiles.
 *
 * The idea: a cluster of 128 x 128 blocks stacked along M asks L2 for 1.5 bytes an output and
 * K tile (two A tiles and a B tile for 256 x 128 outputs). Two 256 x 128 blocks side by side
 * along N share A's 256 rows: 1.0 byte an output and K tile. The tile needs two 64-row bands a
 * consumer, so only one accumulator fits beside the sums, and the tensor core then idles
 * whenever a consumer turns around from one K tile to the next unless the other consumer's
 * work covers it: make that turnaround short.
 *
 * The contract:
 *  - 256 x 128: two consumers of two 64-row bands each, 128 registers of sums and one
 *    64-register accumulator a consumer; each band issued, waited for and promoted in turn.
 *  - The cluster: each block loads half of A's K tile and multicasts it to both, and all of its
 *    own B tile; a consumer's two bands staged together and handed off at once.
 *  - The turnaround: nothing between a band's last wgmma and the next band's first that need
 *    not be there. Look at the SASS of your K loop (sass_checks.sh reads ours): where is the
 *    wait for the next slot, is the loop one basic block, how do the waiting warps wait?
 *  - The rule: the wide tile rated by its TFLOPS forced at 8192^3, beside stage 9's tiles, and
 *    not where a tile is only a few K tiles (its 3 slots fill and drain once a tile).
 *    GEMM07_FINAL_TILE=256x128a forces it.
 *  - Everything else as stage 9; no LDL/STL; no serialized wgmmas.
 *
 * Check it:  make check-07 ARGS="--kernel ex_wide" */
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

extern "C" int ex_gemm07_wide(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                              const float *scale_b, bf16_t *D, int M, int N, int K,
                              cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
