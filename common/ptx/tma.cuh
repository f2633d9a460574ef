/* TMA, the Tensor Memory Accelerator (sm_90): one thread hands the copy of a whole tile between
 * global and shared memory to a copy engine. The tile is described by a tensor map
 * (CUtensorMap, 128 bytes, built on the host with cuTensorMapEncodeTiled: the global tensor's
 * base, sizes and strides, the box (tile) size and the shared-memory swizzle); the instruction
 * names only the map and the tile's coordinates. The engine computes every address, clips the
 * box at the tensor's edges (out-of-bounds elements load as zeros, and are not stored), and
 * writes shared memory swizzled as wgmma wants it.
 *
 * A load completes on an mbarrier: the issuing thread arms it with
 * mbarrier_arrive_expect_tx(bar, box bytes), and the consumers wait on its parity. A store
 * completes in bulk async-groups, like cp.async: commit, then wait.
 *
 * PTX ISA 9.0:
 *   tma_load_2d / _3d       cp.async.bulk.tensor.{2d,3d}.shared::cluster.global
 *                               .mbarrier::complete_tx::bytes      sm_90   UTMALDG.2D / .3D
 *   tma_load_2d_multicast   the same with .multicast::cluster     sm_90(a) UTMALDG.2D.MULTICAST
 *   tma_store_2d            cp.async.bulk.tensor.2d.global.shared::cta.bulk_group  sm_90 UTMASTG.2D
 *   tma_store_2d_if         the same under a predicate inside the asm                  UTMASTG.2D
 *   tma_store_3d            cp.async.bulk.tensor.3d.global.shared::cta.bulk_group  sm_90 UTMASTG.3D
 *       these four: 9.7.9.25.5.2 "Data Movement and Conversion Instructions: cp.async.bulk.tensor"
 *   tma_store_commit        cp.async.bulk.commit_group: 9.7.9.25.6.1   sm_90   UTMACMDFLUSH
 *   tma_store_wait<N>       cp.async.bulk.wait_group.read: 9.7.9.25.6.2  sm_90   DEPBAR.LE SB0, N
 *   tma_prefetch_map        prefetch.tensormap: 9.7.9.15 "Data Movement and Conversion
 *                           Instructions: prefetch, prefetchu"     sm_90   UTMACCTL.PF
 * (.multicast::cluster is valid on sm_90, but the PTX ISA advises it only for sm_90a: compiled
 * for plain sm_90 it may be much slower.)
 *
 * The map must be a kernel parameter declared `const __grid_constant__ CUtensorMap map` (or
 * live in constant or global memory); pass &map. Copying it into a local variable would give
 * the engine an address it cannot read. Coordinates are in elements, c0 the innermost
 * (contiguous) dimension, and may be negative or past the end (that part is zero-filled). */
#ifndef PTX_TMA_CUH
#define PTX_TMA_CUH

#include <cuda.h>
#include <cuda_runtime.h>

/* Load the box at (c0, c1) into shared memory at dst (smem_addr, 128-byte aligned; 1024 for the
 * 128-byte swizzle); its bytes complete on the mbarrier bar of this CTA. */
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap *map, unsigned bar,
                                            int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];"
                 ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1)
                 : "memory");
}

__device__ __forceinline__ void tma_load_3d(unsigned dst, const CUtensorMap *map, unsigned bar,
                                            int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];"
                 ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* One read of the box from global memory, written to the same shared-memory offset dst in every
 * CTA of the cluster whose bit is set in cta_mask (bit i = cluster rank i); each of those CTAs
 * receives the box's bytes as complete-tx on its own mbarrier at offset bar, so each arms its
 * own barrier with the full box size. Consumers in other CTAs than the issuer wait with
 * mbarrier_wait_parity_cluster. */
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const CUtensorMap *map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short cta_mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;"
                 ::"r"(dst), "l"(map), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1)
                 : "memory");
}

/* Store the box at (c0, c1) from shared memory at src. The threads' writes of the tile must be
 * fenced into the async proxy first: fence_proxy_async_shared() by each writer, a barrier, then
 * one thread stores. */
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, unsigned src, int c0,
                                             int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}

/* The same by the threads for which `pred` holds, as a predicate inside the asm rather than an
 * `if`: a warpgroup whose wgmmas are in flight may store without a branch for ptxas to see
 * (which would make it serialize the wgmmas). The other threads may run tma_store_commit and
 * tma_store_wait too: with nothing issued, their groups are empty. Used by store_boxes
 * (chapter 06) and by chapter 07's storer thread, whose predicate skips a band past C. */
__device__ __forceinline__ void tma_store_2d_if(const CUtensorMap *map, unsigned src, int c0,
                                                int c1, bool pred) {
    asm volatile("{ .reg .pred p;\n\t"
                 "setp.ne.u32 p, %4, 0;\n\t"
                 "@p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1]; }"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1), "r"((unsigned)pred)
                 : "memory");
}

/* Store the box at (c0, c1, c2) of a 3D map (chapter 08's O: {D, n, pairs}), as tma_store_2d. */
__device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, unsigned src, int c0, int c1,
                                             int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* Close the group of stores issued so far by this thread. */
__device__ __forceinline__ void tma_store_commit() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* Wait until at most N of this thread's committed store groups are still reading their shared
 * memory (.read): after tma_store_wait<0>() the source tiles may be overwritten. It does not
 * wait for the writes to reach global memory; a kernel's exit does that. */
template <int N> __device__ __forceinline__ void tma_store_wait() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/* Bring the tensor map into the engine's cache ahead of the first copy (one thread, early in
 * the kernel): the first load then does not wait for the map's 128 bytes. */
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

#endif
