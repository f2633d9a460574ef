/* Exercise 8 — a tile per size: your exercise 7 as a template over the tile, and a launcher that
 * picks the tile for each launch. Start from your exercise 7 (README, stage 8, "A tile per size").
 *
 * The idea. A persistent grid is as fast as its busiest SM. The 128x256 tile is the cheapest per
 * flop, but at small sizes there are too few of them: at 1024^3, 32 tiles for 132 SMs. A
 * narrower tile fills the SMs there at a lower rate, so build several and take, per launch, the
 * one with the least estimated time.
 *
 * The contract:
 *  - One kernel, a template over the tile width BN and the number CONS of 64-row consumer
 *    warpgroups (each issuing m64nBNk16), built as 128x256 and 128x128 (two consumers) and
 *    64x128 (one): 128 (1 + CONS) threads, exercise 6's clusters of 2 along M sharing B,
 *    exercise 7's staging and TMA store. Each tile gets as many ring slots as fit beside its
 *    staging in GEMM06_SMEM_FINAL (what the driver's row allows): the narrow tiles get deeper
 *    rings, which a short K loop needs more than a long one.
 *  - The rule: estimated time = rounds x tile area / rate, rounds = ceil(pairs of tiles /
 *    (SMs / 2)) (a cluster computes a pair a round), rate = the tile's throughput with that tile
 *    forced at 8192^3 (the README's, or your own); ties go to the wider tile. Work out what it
 *    picks at 1024^3 and 2048^3 before you run it. Why 64x128 and not 128x64, of the same area:
 *    count the shared-memory bytes each wgmma reads per clock of tensor work.
 *  - Everything that depends on the tile is per tile: the operand maps' box heights, the
 *    resident clusters (the occupancy of each instantiation), the grid.
 *  - Shapes as exercise 7: bf16, K % 8 == 0, N % 8 == 0 (other N: launch_unsupported, a skip).
 *    Every tile must pass at every test shape, not only where the rule picks it: force each in
 *    turn (the reference reads GEMM06_FINAL_TILE) and check again.
 *
 * Optional: the rest of the reference, to read in kernels/08_final_sm90a.cu (README, stage 8)
 * and add if you like; none of it is checked here.
 *  - One box at a time: two 8 KiB staging buffers per consumer instead of a 64 x BN half-tile,
 *    which buys a 4th slot at 128x256 (store_boxes in gemm06_sm90a.cuh).
 *  - A balanced grid: the fewest clusters that keep the round count (launch.cuh,
 *    launch_balanced_grid).
 *  - fp16 (ex_gemm06_final_f16 below) and any N (store_fragment where no map of C can exist).
 *  - A lean K loop: descriptors made once and advanced by an add, the ring position as a slot
 *    and a phase, addresses ptxas keeps (docs/hopper.md, "Uniform registers").
 *
 * Check it:  make check-06 ARGS="--kernel ex_final"   (and ex_final_f16 if you write it)
 */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_final(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                               cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}

/* Optional (fp16): the same kernel with f16_t; TODO until you write it. */
extern "C" int ex_gemm06_final_f16(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                   int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
