/* mbarrier: a barrier object of 8 bytes in shared memory (an `unsigned long long`, 8-byte
 * aligned) that counts two things per phase: arrivals of threads, and, from sm_90 on, bytes
 * of asynchronous copies still to land (the tx-count). A phase completes when the expected
 * arrivals have all come and the tx-count is back to zero; the barrier then flips to the next
 * phase, and waiters tell phases apart by their parity (0, 1, 0, ...). That is how a TMA load
 * (or st.async) tells its consumers "the bytes are in shared memory": the producer arrives
 * with expect_tx(bytes), the copy completes the bytes, the consumers wait on the parity.
 *
 * PTX ISA 9.0, 9.7.13.15 "Parallel Synchronization and Communication Instructions: mbarrier"
 * (its subsections mbarrier.init, mbarrier.expect_tx, mbarrier.arrive, mbarrier.try_wait).
 *   wrapper                    PTX                          needs   SASS (ptxas 13.0, sm_90a)
 *   mbarrier_init              mbarrier.init                sm_80   SYNCS.EXCH.64
 *   mbarrier_arrive            mbarrier.arrive              sm_80   SYNCS.ARRIVE.TRANS64.A1T0
 *   mbarrier_arrive_if         @p mbarrier.arrive           sm_80   the same, predicated
 *   mbarrier_arrive_expect_tx  mbarrier.arrive.expect_tx    sm_90   SYNCS.ARRIVE.TRANS64
 *   mbarrier_expect_tx         mbarrier.expect_tx           sm_90   SYNCS.ARRIVE.TRANS64.RED.A0TR
 *   mbarrier_[try_]wait_parity mbarrier.try_wait.parity     sm_90   SYNCS.PHASECHK.TRANS64.TRYWAIT
 *   mbarrier_wait_parity_sleep the same with a suspend-time hint       the same
 *   mbarrier_[try_]wait_parity_cluster  .acquire.cluster    sm_90   the same, then CCTL.IVALL
 *                              (acquire at cluster scope invalidates this SM's L1)
 *   mbarrier_arrive_cluster    mbarrier.arrive.release.cluster.shared::cluster   sm_90
 *                              MEMBAR.ALL.CTA, MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR (the release),
 *                              then SYNCS.ARRIVE.TRANS64.RED.A1T0
 *   mbarrier_arrive_remote     mbarrier.arrive.shared::cluster (.release.cta)     sm_90
 *                              SYNCS.ARRIVE.TRANS64.RED.A1T0, no MEMBAR
 * On sm_80, init and arrive are STS.64 and ATOMS.ARRIVE.64. tests/ptx_wrappers_sm90a.cu checks
 * the sm_90a names. ptxas fuses an expect_tx followed by an arrive.expect_tx of the same thread
 * on the same barrier into one SYNCS.ARRIVE.TRANS64, and in some kernels puts a
 * FENCE.VIEW.ASYNC.S of its own before the init. `bar` is always smem_addr() of the barrier
 * (smem.cuh).
 *
 * Memory ordering: an arrive releases and a successful try_wait acquires, at CTA scope unless
 * the name says cluster. So a thread's shared-memory writes before its arrive are visible to a
 * thread whose wait on that phase succeeded. The bytes a TMA load writes into this CTA's shared
 * memory (from another CTA's multicast copy too) are counted by complete_tx on this CTA's own
 * barrier, and the CTA-scope wait suffices to read them. A remote arrival that only hands back
 * a slot whose reads are already complete (wgmma_wait_group) needs no cluster-scope release or
 * acquire either (CUTLASS's ClusterBarrier does the same): chapter 06's stages 6-8 wait at CTA
 * scope on both. The _cluster forms are for a waiter that must see stores another CTA made:
 * ordinary stores before its arrive, or st.async bytes (03_softmax's push exchange). */
#ifndef PTX_MBARRIER_CUH
#define PTX_MBARRIER_CUH

#include <cuda_runtime.h>

/* One thread initializes; the phase completes after `count` arrivals. Other threads (and, in a
 * cluster, other CTAs) may use the barrier only after a barrier that orders the init before
 * them: __syncthreads() in the CTA, fence_mbarrier_init_cluster() + a cluster barrier across
 * CTAs. */
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* One arrival (.release.cta are the defaults). The state token that mbarrier.arrive returns is
 * for the state-based waits, which these wrappers do not use: it goes to a scratch register. */
__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(bar)
                 : "memory");
}

/* One arrival, and `bytes` more to be completed by asynchronous copies in this phase. Issue it
 * before or after the copies: the tx-count may go negative for a while, and the phase cannot
 * complete before this arrival. */
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
                 ::"r"(bar), "r"(bytes) : "memory");
}

/* `bytes` more expected in this phase, without an arrival: for a barrier whose arrivals come
 * from elsewhere (several producers each announcing their own copies). */
__device__ __forceinline__ void mbarrier_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* True once the phase of parity `parity` has completed (acquire.cta, the default). try_wait,
 * unlike test_wait, may suspend the thread for a while in hardware before answering false, so
 * a spin loop on it does not hammer the barrier. */
__device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile("{ .reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbarrier_wait_parity(unsigned bar, unsigned parity) {
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}

/* mbarrier_wait_parity with the spin loop inside the asm: the compiler sees no branch. That
 * matters where wgmma groups are in flight across the wait (a consumer waiting for K tile t + 1
 * while tile t multiplies): ptxas treats the C loop's branch on a per-thread predicate as a
 * divergent path, and makes wgmma wait there (warning C7518, "wgmma.mma_async instructions are
 * serialized"), which undoes the overlap. CUTLASS's ClusterBarrier::wait is written this way. */
__device__ __forceinline__ void mbarrier_wait_parity_in_asm(unsigned bar, unsigned parity) {
    asm volatile("{ .reg .pred p;\n\t"
                 "WAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra WAIT_%=; }" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* mbarrier_wait_parity_in_asm with a suspend-time hint (try_wait's suspendTimeHint, in ns; the
 * value CUTLASS's ClusterBarrier::wait passes): a try_wait that finds the phase incomplete may
 * keep the warp suspended in hardware until the phase completes, up to that long, instead of
 * failing at once and being issued again, so a waiting warp leaves its scheduler's issue slots
 * to the warps that work. */
__device__ __forceinline__ void mbarrier_wait_parity_sleep(unsigned bar, unsigned parity) {
    asm volatile("{ .reg .pred p;\n\t"
                 "WAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, %2;\n\t"
                 "@!p bra WAIT_%=; }" ::"r"(bar),
                 "r"(parity), "n"(10000000)
                 : "memory");
}

/* The same with acquire at cluster scope: what other CTAs released into this barrier (the
 * bytes of their st.async, their ordinary writes before a cluster-scope remote arrive) is
 * visible to this thread once the wait succeeds. Not needed for the bytes of a TMA load,
 * multicast or not, into this CTA's shared memory (see "Memory ordering" above). */
__device__ __forceinline__ bool mbarrier_try_wait_parity_cluster(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile("{ .reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbarrier_wait_parity_cluster(unsigned bar, unsigned parity) {
    while (!mbarrier_try_wait_parity_cluster(bar, parity)) {
    }
}

/* mbarrier_arrive by the threads for which `pred` holds, the predicate inside the asm: no branch
 * for ptxas to see while wgmma groups are in flight (a consumer handing K's slot back while its
 * P V product still runs; see mbarrier_wait_parity_in_asm). */
__device__ __forceinline__ void mbarrier_arrive_if(unsigned bar, bool pred) {
    asm volatile("{ .reg .pred p; .reg .b64 st;\n\t"
                 "setp.ne.u32 p, %1, 0;\n\t"
                 "@p mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(bar),
                 "r"((unsigned)pred)
                 : "memory");
}

/* One arrival on another CTA's barrier: remote_bar = mapa_shared(bar, rank) (cluster.cuh).
 * Release at cluster scope: this thread's reads and writes of that CTA's data are done before
 * the arrival counts (the consumer freeing a producer's slot in a multicast pipeline). A
 * .shared::cluster arrive returns no state: the destination is the sink `_`. */
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned remote_bar) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
                 : "memory");
}

/* The same arrival with the default semantics, release at CTA scope (what CUTLASS's
 * ClusterBarrier::arrive(cta_id) issues). Enough to hand a multicast slot back when this
 * thread's reads of it were wgmmas completed by wgmma_wait_group: those reads are finished, not
 * merely ordered. The .release.cluster form above costs a MEMBAR.ALL.GPU per arrival, which in
 * a K loop (two arrivals per warp per K tile) cut chapter 06's stage 6 to 0.37x of cuBLAS. */
__device__ __forceinline__ void mbarrier_arrive_remote(unsigned remote_bar) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory");
}

/* The same, by the threads for which `pred` holds, as a predicate inside the asm rather than an
 * `if`: no branch for ptxas to see while wgmma groups are in flight (see
 * mbarrier_wait_parity_in_asm). */
__device__ __forceinline__ void mbarrier_arrive_remote_if(unsigned remote_bar, bool pred) {
    asm volatile("{ .reg .pred p;\n\t"
                 "setp.ne.u32 p, %1, 0;\n\t"
                 "@p mbarrier.arrive.shared::cluster.b64 _, [%0]; }" ::"r"(remote_bar),
                 "r"((unsigned)pred)
                 : "memory");
}

#endif
