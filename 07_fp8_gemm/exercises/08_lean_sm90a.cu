/* Exercise 8 — a lean K loop: your stage 7, with nothing in the consumer's K loop that is the
 * same every K tile.
 *
 * The idea: the FP8 wgmma is short. A K tile is four m64n128k32 per consumer, and every other
 * instruction of the warp that issues them (its 64 promotion FFMAs included) sits between one
 * wgmma and the next. Count them (cuobjdump -sass: the innermost loop that holds the QGMMAs,
 * back-branch target to branch) and make them few.
 *
 * The contract:
 *  - Your K loop's SASS instructions a K tile, all but the promotion's 64 FFMAs (the 4 QGMMAs
 *    included): ours go from 103 (stage 7) to 48.5 (ptxas 13.0; make test prints both).
 *    cuBLASLt's loop executes about 52.
 *  - No R2UR in the loop: ptxas cannot tell that threadIdx.x / 128 is the same for a whole
 *    warp, so what derives from it (the wgmma descriptors) sits in per-thread registers and is
 *    copied before every wgmma. Make it see that (docs/hopper.md, "Uniform registers").
 *  - Nothing rebuilt a K tile that an add can step: the descriptors (gemm06_sm90a.cuh has
 *    desc_advance), the ring position (a division by 5 is not free), the barriers' and the
 *    scales' shared addresses, B's scale's global address.
 *  - B's scale of a unit's first K tile comes from DRAM after the bench's L2 flush: issue its
 *    load before the unit's first wait, not at its first promotion.
 *  - Everything else as stage 7: same barriers, same store, same shared memory
 *    (GEMM07_SMEM_LEAN); no LDL/STL; no serialized wgmmas.
 *
 * Check it:  make check-07 ARGS="--kernel ex_lean"
 * (and count your loop as sass_checks.sh counts ours: cuobjdump -sass
 * build/07_fp8_gemm/exercises/08_lean_sm90a.o). */
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

extern "C" int ex_gemm07_lean(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                              const float *scale_b, bf16_t *D, int M, int N, int K,
                              cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
