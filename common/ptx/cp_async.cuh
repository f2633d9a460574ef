/* cp.async (sm_80+): copies global -> shared without passing through registers, so a thread
 * can issue the loads of the next tile and go on computing. SASS: LDGSTS.
 *
 *   cp_async_16(smem, gmem)        one 16-byte copy (both addresses 16-byte aligned)
 *   cp_async_16_zfill(smem, gmem, bytes)  copies `bytes` (0..16) and fills the rest with zeros:
 *                                  how tiles at the matrix edge load without reading past it
 *   cp_async_4(smem, gmem), cp_async_4_zfill(smem, gmem, bytes)   the same for 4 bytes
 *   cp_async_commit()              closes the group of copies issued so far
 *   cp_async_wait<N>()             waits until at most N groups are still in flight
 * A __syncthreads() after the wait makes the other threads' copies visible. */
#ifndef PTX_CP_ASYNC_CUH
#define PTX_CP_ASYNC_CUH

#include <cuda_runtime.h>

#include "smem.cuh"

__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
}

__device__ __forceinline__ void cp_async_16_zfill(void *smem, const void *gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(bytes));
}

/* 4-byte variant (.ca: the only cache mode allowed below 16 bytes), for fp32 tiles whose rows
 * are not 16-byte aligned. */
__device__ __forceinline__ void cp_async_4(void *smem, const void *gmem) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(smem)), "l"(gmem));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/* 4-byte copy of `bytes` (0 or 4), zero-filling the rest: fp32 tiles at the matrix edge. */
__device__ __forceinline__ void cp_async_4_zfill(void *smem, const void *gmem, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(bytes));
}

template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

#endif
