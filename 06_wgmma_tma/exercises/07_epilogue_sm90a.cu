/* Exercise 7 — the epilogue through shared memory: the accumulators go to shared memory with
 * stmatrix and leave by a TMA store, which runs while the consumers start the next tile. Start
 * from your exercise 6 (README, stage 7).
 *
 * The idea. Stores from the accumulator registers are scattered (16 bytes in each of 8 rows
 * per warp instruction) and keep the tensor core idle until the last one has issued. Staged
 * in shared memory in the layout a TMA store reads, the tile leaves by a few copy instructions
 * that drain while the next tile's wgmmas run.
 *
 * The contract:
 *  - The staging is this exercise's own piece: write stage_accumulators below. It writes one
 *    consumer's m64nBN fp32 fragment, rounded to bf16, at `staging` (1024-aligned) as BN / 64
 *    boxes of 64 rows x 64 columns, 8 KiB each, box b holding columns 64b .. 64b + 63, each in
 *    the 128-byte swizzle (row r's 16-byte chunk j at r * 128 + (j ^ r % 8) * 16): the layout
 *    of a TMA store of {64, 64} boxes with TMAP_SWIZZLE_128B (gemm06_store_map_for makes that
 *    map of C). Which register holds which element is stage 1's fragment layout; what a lane
 *    of stmatrix.x4 provides is in ptx/stmatrix.cuh. Work out why the swizzle makes it
 *    conflict-free. (gemm06_sm90a.cuh leaves stage_box, stage_fragment and store_boxes out of
 *    this file: GEMM06_EXERCISE_STAGING.)
 *  - The copy engine reads shared memory through the async proxy: the threads' stmatrix writes
 *    must be made visible to it, and the staging area may be rewritten only after the previous
 *    store has read it. Only the consumer's own 128 threads take part (named_barrier.cuh):
 *    __syncthreads() would wait for the producer, who never comes.
 *  - The staging costs shared memory: 3 slots, not 4 (GEMM06_SMEM_EPILOGUE). N % 8 == 0 (a
 *    tensor map needs rows of C 16 bytes apart); refuse other N with launch_unsupported. The
 *    block's shared memory must outlive the reads of its last store.
 *  - SASS: STSM.16.M88.4, UTMASTG.2D, FENCE.VIEW.ASYNC.S; no STG of C.
 *
 * Check it:  make check-06 ARGS="--kernel ex_epilogue"
 */
#define GEMM06_EXERCISE_STAGING /* you write the staging: stage_accumulators below */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

/* TODO: the fragment d, as bf16, into the boxes at `staging` (see the hints). */
template <int BN>
static __device__ __forceinline__ void stage_accumulators(const float (&d)[BN / 2],
                                                          unsigned staging) {
    /* TODO */
    (void)d, (void)staging;
}

extern "C" int ex_gemm06_epilogue(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                  int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
