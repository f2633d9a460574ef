/* Exercise 11 — narrow tiles at small M: your stage 10 with 64 x 64, 64 x 32 and 64 x 16 tiles,
 * so that every SM streams its own columns of B through the whole K loop.
 *
 * The idea: at M = 64 and 128 with N of a few thousand, stage 10 (stage 9's pick there) cuts
 * each 64 x 128 tile's K loop across clusters, and the pieces' sums meet again through L2.
 * Narrower tiles make enough units without cutting K: each SM reads its own slice of B once,
 * from DRAM, start to end.
 * Their K tiles are short (10-16 KiB), so the producer's own instructions may set the pace.
 *
 * The contract:
 *  - Three narrow tiles, 64 rows by 64, 32 or 16 columns: one consumer, blocks alone, no K
 *    split, as many slots as fit up to 12, C stored from registers.
 *  - The pick, before the rule of stage 10: where M <= 128 and C's 64 x 128 tiles would fill at
 *    most half the SMs, the widest narrow tile of which there are at least 0.8 x the SMs.
 *  - The producer: read its SASS. Are its TMA copies back to back, or each in a loop of its
 *    own? (docs/hopper.md on uniform registers; common/ptx/elect.cuh.)
 *  - GEMM07_FINAL_TILE=64x64, 64x32 or 64x16 forces one.
 *  - Everything else as stage 10; no LDL/STL; no serialized wgmmas.
 *
 * Check it:  make check-07 ARGS="--kernel ex_narrow" */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/elect.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_narrow(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                const float *scale_b, bf16_t *D, int M, int N, int K,
                                cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
