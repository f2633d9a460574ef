/* Global loads with cache hints, for data that is read exactly once (a reduction's input).
 *
 * ld.global.nc reads through the read-only (texture) path, like __ldg; L1::no_allocate keeps the
 * line out of L1, where it would only evict lines that are still useful; L2::256B asks the L2
 * to fetch 256 bytes from DRAM per miss instead of the default sector granularity, a prefetch
 * for a stream that will read the neighbours next. Measured in chapter 02 (stage 10's
 * configurations): no gain on an H100 and 9% slower on an H200 than a plain __ldg, so the
 * chapter's default does not use it; measure a hint on each GPU before keeping it.
 *
 * PTX ISA 9.0, 9.7.9.9 "Data Movement and Conversion Instructions: ld.global.nc" (with the
 * .level::eviction_priority and .level::prefetch_size qualifiers of 9.7.9.8 "ld").
 * L1::no_allocate from sm_70, L2::256B from sm_80. SASS: LDG.E.NA.LTC256B.128.CONSTANT on sm_90a;
 * for sm_80 ptxas 13.0 emits LDG.E.NA.LTC128B.128.CONSTANT (a 128-byte L2 prefetch there). */
#ifndef PTX_LD_GLOBAL_CUH
#define PTX_LD_GLOBAL_CUH

#include <cuda_runtime.h>

/* 16 bytes from p (16-byte aligned, and not written during the kernel: .nc). Plain asm, not
 * volatile: the compiler may schedule these loads like any other, which is what lets it issue
 * a whole unrolled batch of them before the first use. */
__device__ __forceinline__ float4 ld_global_nc_noalloc_l2_256(const float4 *p) {
    float4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p));
    return v;
}

#endif
