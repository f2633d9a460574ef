/* Exercise 7 — the store handed off: your stage 6, with each tile's sums leaving through shared
 * memory and TMA, stored by a thread the consumers never wait for.
 *
 * The idea: stage 6's consumer stores its sums from registers before its next tile, whose
 * slots are already full: the tensor core waits for the store, and both consumers of a block
 * store at the same moment. A consumer that only writes its sums into shared memory and says
 * so is back in its K loop at once; the producer warpgroup has idle threads to do the rest.
 *
 * The contract:
 *  - A consumer rounds its 64 x 128 sums to bf16 into two 64 x 64 boxes, in the 128-byte
 *    swizzle a TMA store of D reads (chapter 06's stage_box and gemm06_store_map_for), makes
 *    its writes visible to the async proxy, and signals that they are staged. It goes on to
 *    its next tile without waiting for any store.
 *  - One thread of the producer warpgroup that issues no loads (the loads' thread may be
 *    waiting on a slot) stores each consumer's boxes by TMA once they are staged (a band past M
 *    stores nothing), waits until the stores have read them, and signals back.
 *  - A consumer rewrites its boxes only after that signal: wait for it before staging the next
 *    tile, not after the store.
 *  - From registers (store_fragment) when no TMA map of D can exist: N % 8 != 0, or D not
 *    16-byte aligned; one path or the other for the whole launch.
 *  - Two 8 KiB boxes per consumer take a slot's room: 5 slots, GEMM07_SMEM_HANDOFF.
 *  - SASS: UTMASTG and STSM as well as stage 6's; no LDL/STL; no serialized wgmmas.
 *
 * Check it:  make check-07 ARGS="--kernel ex_handoff"
 * (the test shapes include N % 8 != 0, where the register path runs). */
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

extern "C" int ex_gemm07_handoff(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                 const float *scale_b, bf16_t *D, int M, int N, int K,
                                 cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
