/* Shared-memory addresses for inline PTX. A C pointer to a __shared__ object is a generic
 * address (64 bits: the shared window's base plus an offset); instructions that name the
 * .shared state space (cp.async, ldmatrix, stmatrix, mbarrier, TMA, mapa) take the 32-bit
 * offset inside this CTA's shared memory instead. smem_addr() converts once, so a kernel can do
 * the address arithmetic of a tile on 32-bit integers.
 *
 * PTX ISA 9.0, 9.7.9.20 "Data Movement and Conversion Instructions: cvta" (cvta.to.shared,
 * through the __cvta_generic_to_shared intrinsic; any architecture). SASS: nothing on sm_80 (a
 * shared address is the offset); on sm_90 the address also carries the CTA's rank in the
 * cluster in its top byte, so it costs an S2R/S2UR of SR_CgaCtaId and a LEA, once per kernel. */
#ifndef PTX_SMEM_CUH
#define PTX_SMEM_CUH

#include <cuda_runtime.h>

/* p must point into __shared__ memory; the result is only meaningful to .shared instructions
 * of this CTA (mapa_shared() turns it into another CTA's address in the cluster). */
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

/* ld.shared.f32 (PTX ISA 9.0, 9.7.9.8 "ld") from such an address: an LDS, where a C load
 * through a generic pointer makes the compiler rebuild the pointer from the shared window's base
 * wherever it runs (chapter 07's K loop: half a dozen instructions a K tile). Volatile, with a
 * memory clobber: it stays after the barrier wait that makes its data valid. */
__device__ __forceinline__ float ld_shared_f32(unsigned addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

#endif
