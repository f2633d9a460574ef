/* mov: a register copy, used here for one thing only: a value the compiler cannot see through.
 *
 *   opaque_u32(x)   returns x. The compiler (NVVM, which writes the PTX) sees an inline asm
 *                   whose output it knows nothing about: it cannot fold what it knew of x (a
 *                   constant, its alignment, its low bits) into the arithmetic built on the
 *                   result, nor merge that arithmetic with the same arithmetic on x elsewhere.
 *
 * Operands: one 32-bit register, read and written ("+r"): the asm is mov.b32 %r, %r.
 * PTX ISA 9.0, 9.7.9.1 "Data Movement and Conversion Instructions: mov"; every architecture.
 * SASS: no instruction of its own (ptxas drops a move of a register to itself); what changes is
 * the code around it, as NVVM wrote it. Not volatile: an unused result compiles to nothing.
 *
 * Chapter 08, stage 6: the next item's Q address in the boundary turn (issue_s), so that Q's
 * descriptors there are built without what NVVM knows of the address. In the SASS (ptxas 13.0)
 * that is one ULOP3 mask per k-step of that S, 8 at D = 128 and 4 at D = 64: 0x3fff0, where
 * without it NVVM folds the address's 1024-byte alignment into 0x3fc00 + 32 kk; the instruction
 * count is the same. tests/ptx_wrappers_sm90a.cu shows the effect plainly: a division by 7
 * through opaque_u32 stays a division (I2F.U32.RP, MUFU.RCP), where NVVM turns x / 7 into a
 * multiply by a magic number. */
#ifndef PTX_MOV_CUH
#define PTX_MOV_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ unsigned opaque_u32(unsigned x) {
    asm("mov.b32 %0, %0;" : "+r"(x));
    return x;
}

#endif
