/* stmatrix (sm_90): the inverse of ldmatrix. A warp stores 8x8 tiles of 16-bit elements from the
 * mma/wgmma register layout to shared memory: lane t gives, in register j, the two elements
 * (row t/4, columns 2*(t%4), 2*(t%4)+1) of matrix j, and lane 8*j + r gives the shared-memory
 * address of row r of matrix j (16 bytes, 16-byte aligned; x1 uses lanes 0-7, x2 lanes 0-15, x4
 * all 32). With _trans each 8x8 matrix is transposed on the way: register j of lane t lands in
 * column t/4, rows 2*(t%4) and 2*(t%4)+1. That is how an epilogue writes a converted fp16/bf16
 * accumulator tile to shared memory (then to global with a TMA store) 16 bytes per row at a time
 * instead of 4 bytes per thread.
 *
 * PTX ISA 9.0, 9.7.14.5.16 "Warp-level matrix store instruction: stmatrix"
 * (stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16), sm_90.
 * SASS: STSM.16.M88, STSM.16.M88.2, STSM.16.M88.4 (x1 has no suffix); STSM.16.MT88[.2|.4] for
 * .trans. Bank conflicts follow the same rule as
 * ldmatrix's: the eight 16-byte rows of one matrix should fall in eight different bank groups. */
#ifndef PTX_STMATRIX_CUH
#define PTX_STMATRIX_CUH

#include <cuda_runtime.h>

/* `addr` is this lane's row address from smem_addr() (smem.cuh). The "memory" clobber keeps
 * the compiler from moving shared-memory reads of the tile above the store. */
__device__ __forceinline__ void stmatrix_x1(unsigned addr, unsigned r0) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(addr), "r"(r0)
                 : "memory");
}

__device__ __forceinline__ void stmatrix_x2(unsigned addr, unsigned r0, unsigned r1) {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0),
                 "r"(r1)
                 : "memory");
}

__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2,
                                            unsigned r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

__device__ __forceinline__ void stmatrix_x1_trans(unsigned addr, unsigned r0) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(addr), "r"(r0)
                 : "memory");
}

__device__ __forceinline__ void stmatrix_x2_trans(unsigned addr, unsigned r0, unsigned r1) {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(addr),
                 "r"(r0), "r"(r1)
                 : "memory");
}

__device__ __forceinline__ void stmatrix_x4_trans(unsigned addr, unsigned r0, unsigned r1,
                                                  unsigned r2, unsigned r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

#endif
