/* Exercise 6 — clusters of two blocks sharing the B tile through TMA multicast. Start from your
 * stage 5.
 *
 * Hints:
 *  - Launch with launch_cfg.cluster = 2: blocks 2c and 2c+1 form cluster c; cluster_ctarank()
 *    is 0 or 1. Rank r computes tile row 2p + r of pair p; the schedule (gemm06_tiles) is over
 *    pairs of tile rows: {ceil(tiles_m / 2), tiles_n, order}.
 *  - B's map gets boxes of 128 rows (gemm06_maps_for(..., 128, 128, ...)): rank r loads rows
 *    128r.. of the 256-row B tile with tma_load_2d_multicast(dst, &map_b, bar, k, row, 0b11)
 *    into the same slot offset of both blocks (dst = slot + A bytes + r * 16 KiB).
 *  - full[s]: count 1, arrive_expect_tx of the whole 48 KiB (A + both B halves land in it).
 *  - empty[s]: count 16; each consumer warp's lane 0 arrives on empty[s] of both blocks:
 *    mbarrier_arrive_remote(mapa_shared(smem_addr(&empty[s]), r)) for r = 0, 1 (not
 *    mbarrier_arrive_cluster: its cluster-scope release costs a MEMBAR.ALL.GPU each time).
 *  - After the inits: fence_mbarrier_init_cluster(), then cluster_arrive_relaxed(); cluster_wait()
 *    by every thread. At the end: the producer waits on every empty[s] once more (as if it
 *    were about to load DEPTH more tiles), which returns once the partner's last arrivals on
 *    our barriers have landed; then the same cluster barrier by every thread (producer's idle
 *    threads too), so no block exits while its partner may still write into it.
 *  - Grid: 2 x the clusters that fit at once (launch_resident_clusters in launch.cuh).
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
