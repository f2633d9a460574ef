/* ex2.approx.ftz.f32 (sm_20+): 2^x on the special-function unit, one instruction. PTX ISA
 * 9.7.4.x ("ex2"). SASS: MUFU.EX2 (nothing else: no range reduction, no denormal handling).
 *
 *   ex2_approx(x)   2^x, relative error about 2^-22; ex2(-inf) = +0, inputs below -126 give
 *                   +0 (ftz: denormal results flush to zero)
 *
 * Why not exp2f or expf: both add instructions around the same MUFU.EX2 (expf a range
 * reduction to keep its 2-ulp bound; exp2f the scaling that handles denormal results). A
 * softmax whose exponents are scores minus their row max, times log2(e), needs neither:
 * the largest argument is 0, and a term below 2^-126 adds nothing to a sum that holds a 1. */
#ifndef PTX_EX2_CUH
#define PTX_EX2_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#endif
