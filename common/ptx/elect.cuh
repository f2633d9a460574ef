/* elect.sync: one lane of the warp chosen by the hardware, the others told they were not.
 *
 *   elect_one_sync()   true in exactly one active lane of the (converged) warp, false in the rest.
 *
 * Why not `lane == 0`: ptxas can tell that the code under an elected lane runs on one lane of a
 * warp that was converged, so it may keep what that code computes from warp-uniform values in
 * uniform registers and issue a TMA copy's operands from them directly. Under `threadIdx.x == 0`
 * it cannot: each uniform operand (UTMALDG takes only uniform registers) is then copied over with
 * R2UR inside a loop over the active lanes (ELECT, R2UR, ..., BRA.U.ANY), a dozen instructions a
 * copy (chapter 07's producer, the narrow tiles' K loop).
 *
 * PTX ISA 9.0, 9.7.13.12 "Parallel Synchronization and Communication Instructions: elect.sync",
 * sm_90. SASS: ELECT. The whole warp must call it (membermask 0xffffffff). */
#ifndef PTX_ELECT_CUH
#define PTX_ELECT_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ bool elect_one_sync() {
    unsigned elected = 0;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "elect.sync _|p, 0xffffffff;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(elected));
    return elected != 0;
}

#endif
