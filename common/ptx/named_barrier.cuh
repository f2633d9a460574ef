/* Named barriers: bar.sync with an id and a thread count, so that a subset of the block (one
 * warpgroup) can synchronize without stopping the others. __syncthreads() is barrier 0 over
 * the whole block; ids 1..15 are free for the kernel's own use, and every thread that waits on
 * an id must pass the same count (a multiple of 32).
 *
 * A warp-specialized kernel needs them where one consumer warpgroup must agree with itself
 * (its tile is staged in shared memory, now one thread may store it) while the producer and the
 * other consumer run on: __syncthreads() there would deadlock, since the producer never comes.
 *
 * PTX ISA 9.0, 9.7.13.1 "Parallel Synchronization and Communication Instructions: bar, barrier"
 * (bar.sync a, b = barrier.sync.aligned a, b), sm_30.
 *   named_barrier_sync   bar.sync id, threads   SASS: BAR.SYNC (BAR.SYNC.DEFER_BLOCKING)
 *   named_barrier_arrive bar.arrive id, threads SASS: BAR.ARV
 *
 * bar.arrive counts the calling warp towards the barrier's `threads` and goes on without waiting:
 * one side signals, the other waits. FlashAttention-3's ping-pong is built on that: warpgroup c
 * waits on its own id (bar.sync, 128 of its threads) until the other warpgroup has arrived on
 * it (bar.arrive, 128 more: threads = 256), i.e. until the other has issued its tensor-core work.
 * Arrivals of a phase must not outrun its waiters: a second bar.arrive on an id before the
 * waiters' bar.sync would complete the phase by itself and leave them for the next one. */
#ifndef PTX_NAMED_BARRIER_CUH
#define PTX_NAMED_BARRIER_CUH

#include <cuda_runtime.h>

/* Waits until `threads` threads (a multiple of 32, warps counted whole) have reached barrier id;
 * orders their shared-memory accesses like __syncthreads() does. */
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/* Counts this warp's threads towards barrier id and returns at once (the waiters are the threads
 * that bar.sync on id with the same count). The writes before it are visible to those waiters
 * once their bar.sync returns. */
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

#endif
