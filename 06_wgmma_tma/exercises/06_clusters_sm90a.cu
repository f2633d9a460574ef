/* Exercise 6 — clusters of two blocks that share the B tile through TMA multicast. Start from
 * your exercise 5 (README, stage 6; docs/hopper.md, "Memory scopes").
 *
 * The idea. Two blocks on neighbouring SMs compute the two tiles stacked along M, which need
 * the same B rows. Each loads its own A tile and half of the B tile, and one multicast copy
 * writes that half into both blocks' shared memory: a third less operand traffic from L2.
 *
 * The contract:
 *  - Clusters of 2 (launch_cfg.cluster; cluster.cuh for the rank and the other block's shared
 *    addresses); the schedule runs over pairs of tile rows. An odd number of tile rows needs no
 *    special case: a tile wholly past M still loads and multicasts its half of B.
 *  - A slot is full when all of its bytes have landed, whoever sent them; it may be refilled
 *    only when the consumers of both blocks are done with it, since the partner writes into it.
 *    Set each barrier's count to match.
 *  - Barriers initialized in one block are used by the other: order the inits across the
 *    cluster before the first copy or arrival. No block may exit while its partner may still
 *    write into its shared memory or arrive on its barriers.
 *  - Choose the scope of each release: a cluster-scope release costs a MEMBAR.ALL.GPU per
 *    arrival (mbarrier.cuh says which wrapper releases at which scope, and why CTA scope is
 *    enough to hand back a slot whose wgmmas have completed). sass_checks.sh fails a stage 6
 *    kernel with a MEMBAR.ALL.GPU; check yours the same way.
 *  - Grid: as many clusters as fit at once (launch_resident_clusters), not one per pair.
 *
 * Check it:  make check-06 ARGS="--kernel ex_clusters"
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_clusters(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                  int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
