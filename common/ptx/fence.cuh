/* Fences between the proxies and scopes of the memory model that plain __syncthreads() and
 * __threadfence() do not cover.
 *
 * Hopper's TMA engine and wgmma read and write shared memory through the "async proxy", a path
 * separate from ordinary loads and stores (the "generic proxy"). A barrier orders threads, not
 * proxies: shared-memory data that threads stored must be fenced into the async proxy before a
 * TMA store (or a wgmma) reads it, or the engine may read stale bytes.
 *
 * PTX ISA 9.0, 9.7.13.4 "Parallel Synchronization and Communication Instructions: membar /
 * fence" (fence.proxy.async, fence.mbarrier_init), and 9.7.9.25.2 "Async Proxy".
 *   fence_proxy_async_shared     fence.proxy.async.shared::cta        sm_90
 *                                SASS: MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S
 *   fence_mbarrier_init_cluster  fence.mbarrier_init.release.cluster  sm_90
 *                                SASS: no instruction of its own (ptxas 13.0, sm_90a); it
 *                                constrains the compiler, and the cluster barrier that must
 *                                follow it does the ordering in hardware */
#ifndef PTX_FENCE_CUH
#define PTX_FENCE_CUH

#include <cuda_runtime.h>

/* After the threads' st.shared of a tile and before the TMA store (or wgmma) that reads it:
 * each writing thread fences, then the CTA synchronizes, then one thread issues the store. */
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* After mbarrier_init, before other CTAs of the cluster may arrive on (or send bytes to) the
 * barrier: releases the init at cluster scope. A cluster barrier (cluster_arrive[_relaxed] +
 * cluster_wait) must still come between it and the other CTAs' first use; its arrive can be the
 * relaxed one, since this fence already released the init. */
__device__ __forceinline__ void fence_mbarrier_init_cluster() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

#endif
