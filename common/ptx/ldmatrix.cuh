/* ldmatrix (sm_75+): a warp loads 8x8 tiles of 16-bit elements from shared memory straight
 * into the register layout that mma.sync expects. SASS: LDSM.16.M88.{1,2,4}[.MT88 for .trans].
 *
 * Each 8x8 matrix is eight rows of 16 bytes; lane 8*j + r supplies the shared-memory address of
 * row r of matrix j (x1 uses lanes 0-7, x2 lanes 0-15, x4 all 32). After the load, lane t
 * holds, in register j, the two elements (row t/4, columns 2*(t%4) and 2*(t%4)+1) of matrix j:
 * the fragment layout of mma.m16n8k16's A (row-major) and B (column-major) operands.
 *
 * .trans transposes each 8x8 matrix on the way: lane t then holds (rows 2*(t%4), 2*(t%4)+1,
 * column t/4). That is how a B operand stored k-major (row-major KxN, the "NN" layout) becomes
 * the column-major fragment the mma wants, without a transpose in memory.
 *
 * Bank conflicts: the eight row addresses of one matrix are served together; they are free of
 * conflicts when the eight 16-byte rows fall in eight different 16-byte bank groups (padding or
 * an XOR swizzle of the shared-memory layout arranges that). */
#ifndef PTX_LDMATRIX_CUH
#define PTX_LDMATRIX_CUH

#include <cuda_runtime.h>

/* `addr` is a shared-state-space address (from __cvta_generic_to_shared), 16-byte aligned. */
__device__ __forceinline__ void ldmatrix_x1(unsigned &r0, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2(unsigned &r0, unsigned &r1, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3,
                                            unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x1_trans(unsigned &r0, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r0)
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned &r0, unsigned &r1, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned &r0, unsigned &r1, unsigned &r2,
                                                  unsigned &r3, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

#endif
