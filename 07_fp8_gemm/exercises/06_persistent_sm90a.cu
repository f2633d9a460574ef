/* Exercise 6 — persistent clusters: your stage 5 (block scales, two accumulators in turn) run
 * by a grid of resident 2-block clusters that walk the tiles, instead of a block a tile.
 *
 * The idea: a block a tile fills its ring before its first wgmma and stores from registers
 * after its last, and the tensor core idles through both, once a tile (a large share at short
 * K). A block that stays resident loads its next tile's K tiles while it still promotes this
 * one's. And two blocks on tiles stacked along M read the same B rows: each can load half and
 * multicast it into both.
 *
 * The contract:
 *  - A grid of as many 2-block clusters as fit at once, no more than keep the round count
 *    (launch.cuh: launch_resident_clusters, launch_balanced_grid); each cluster walks pairs of
 *    tiles (the two blocks' tiles, stacked along M) in chapter 06's grouped order
 *    (gemm06_tile_at, gemm06_sm90a.cuh), 8 pair rows a group.
 *  - The ring's slot and phase run on across tiles, in the producer and the consumers alike.
 *  - B's tile: each block loads half and multicasts it into both. So a slot is free only when
 *    the consumers of both blocks have released it (count the barrier's arrivals to match), and
 *    no block may exit while a multicast of its partner's can still land in its shared memory
 *    or an arrival on its barriers. Barriers initialized in one block are used by the other.
 *  - A band past M (the pair's second tile when C has an odd number of tile rows) still hands
 *    its slots back: its partner loaded half of them.
 *  - A's scales are per row: each block loads its own. B's scale: one float a K tile, issued a K
 *    tile before the promotion that takes it.
 *  - Still from registers: the epilogue (store_fragment). Still plain: the K loop (stage 8
 *    leans it).
 *  - 6 slots of 32 KiB and their scales: GEMM07_SMEM_PERSISTENT. M % 4 == 0, else report the
 *    shape unsupported; K % 16 == 0.
 *  - SASS: UTMALDG.2D.MULTICAST, UCGABAR_ARV (the cluster barrier); no LDL/STL; no ptxas
 *    warning that the wgmmas are serialized.
 *
 * Check it:  make check-07 ARGS="--kernel ex_persistent" */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "gemm07_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_persistent(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                    const float *scale_b, bf16_t *D, int M, int N, int K,
                                    cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
