/* Thread-block clusters (sm_90): up to 8 CTAs (16 with a non-portable size) that run at the same
 * time on the SMs of one GPC, can wait for each other at a cluster barrier, and can read and
 * write each other's shared memory (distributed shared memory, DSMEM).
 *
 * PTX ISA 9.0:
 *   cluster_ctarank, cluster_nctarank: mov of %cluster_ctarank / %cluster_nctarank, 10.16 and
 *       10.17 "Special Registers", sm_90. SASS: S2R SR_CgaCtaId (the rank), and a constant-bank
 *       load (LDC) for the size, which is a launch parameter.
 *   mapa_shared: mapa.shared::cluster, 9.7.9.23 "Data Movement and Conversion Instructions:
 *       mapa", sm_90. SASS: no instruction of its own; a shared-memory address on sm_90 carries
 *       the CTA's rank in its top byte (that is what smem_addr() computes from SR_CgaCtaId), and
 *       mapa replaces that byte: one PRMT.
 *   cluster_arrive[_relaxed], cluster_wait, cluster_sync: barrier.cluster.{arrive,wait}.aligned,
 *       9.7.13.3 "Parallel Synchronization and Communication Instructions: barrier.cluster",
 *       sm_90. SASS: UCGABAR_ARV (the releasing arrive preceded by MEMBAR.ALL.CTA,
 *       MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR; the relaxed one alone), UCGABAR_WAIT then CCTL.IVALL.
 *   st_async_v2_f32: st.async, 9.7.9.12 "Data Movement and Conversion Instructions: st.async",
 *       sm_90. SASS: STAS.64.
 * Addresses are 32-bit shared::cluster addresses: mapa_shared(smem_addr(p), rank) is where the
 * object p of this CTA lives in CTA `rank`. */
#ifndef PTX_CLUSTER_CUH
#define PTX_CLUSTER_CUH

#include <cuda_runtime.h>

/* This CTA's rank in its cluster, 0 .. cluster_nctarank() - 1. Plain asm: a constant for the
 * CTA's lifetime, so the compiler may read it once. */
__device__ __forceinline__ unsigned cluster_ctarank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned cluster_nctarank() {
    unsigned n;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}

/* The address of this CTA's shared object `addr` (smem_addr) in the shared memory of CTA
 * `rank` of the cluster, for st.async, remote mbarrier arrives and ld/st.shared::cluster.
 * Plain asm: a pure function of its operands, which the compiler may reuse or move. */
__device__ __forceinline__ unsigned mapa_shared(unsigned addr, unsigned rank) {
    unsigned remote;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    return remote;
}

/* The cluster barrier, split in two like bar.arrive / bar.sync: a CTA's threads arrive, may do
 * other work, and wait until every thread of every CTA of the cluster has arrived. .aligned:
 * every thread of a warp executes the same arrive (or wait) together, as with __syncthreads().
 *
 * cluster_arrive releases (writes before it are visible to the cluster after the wait; it costs
 * a MEMBAR.ALL.GPU in the SASS); cluster_arrive_relaxed does not: for "I am done reading your shared
 * memory" or when a fence already released what matters. cluster_wait acquires. */
__device__ __forceinline__ void cluster_arrive() {
    asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_arrive_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

/* Arrive and wait: every CTA of the cluster has reached this point (and is running, so its
 * shared memory may be accessed), and the writes before it are visible cluster-wide. */
__device__ __forceinline__ void cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

/* Store the pair (a, b) at remote_addr in another CTA's shared memory, asynchronously: the
 * store counts its 8 bytes as complete-tx on that CTA's mbarrier remote_bar (both addresses
 * from mapa_shared, in the same CTA). The receiver arms the barrier with expect_tx and waits
 * with mbarrier_wait_parity_cluster: the complete-tx releases at cluster scope, so the data is
 * visible once the phase completes. remote_addr is 8-byte aligned. */
__device__ __forceinline__ void st_async_v2_f32(unsigned remote_addr, float a, float b,
                                                unsigned remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, "
                 "[%3];" ::"r"(remote_addr), "f"(a), "f"(b), "r"(remote_bar)
                 : "memory");
}

#endif
