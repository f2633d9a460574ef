/* Exercise 2 — per-tensor FP8: your chapter 06 stage 4 (warp specialization) with the e4m3 wgmma.
 *
 * The idea: nothing changes in the pipeline's shape; what changes is how much k a slot carries.
 * A 128-byte swizzled row holds 128 e4m3 values, so one slot (A's 128 and B's 256 rows of 128
 * bytes, 48 KiB) is one K tile of 128, and the e4m3 wgmma steps k by 32 where bf16 stepped 16.
 *
 * The contract:
 *  - D = scale_a[0] * scale_b[0] * (A B^T), rounded to bf16 once; scale_a and scale_b are device
 *    pointers to one float each (stage 1 wrote them there: no host round trip).
 *  - A (M x K) and B (N x K) are e4m3, K-major; any M and N; K % 16 == 0. Rows past M or N and
 *    k past K read as zero (TMA fills them); nothing outside D is written.
 *  - 4 slots fit GEMM07_SMEM_TENSOR_SCALED. The maps are byte maps (TMAP_U8) with 128-byte box
 *    rows (gemm06_sm90a.cuh has the operand map cache and the swizzled-tile descriptor); the k32
 *    steps inside a slot start 32 bytes apart, as bf16's k16 steps did: the swizzle is about
 *    bytes, not elements. The wgmma wrapper for e4m3 is in ptx/wgmma.cuh.
 *  - SASS: QGMMA.64x256x32.F32.E4M3.E4M3, UTMALDG, SYNCS, USETMAXREG; no LDL/STL.
 *
 * Check it:  make check-07 ARGS="--kernel ex_tensor_scaled"
 * (held to stage 2's wider bound: this kernel does not promote). */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_tensor_scaled(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                       const float *scale_b, bf16_t *D, int M, int N, int K,
                                       cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
