/* Exercise 8 — the final kernel: a tile per size, one-box staging, a balanced grid, fp16 as
 * well as bf16, any M and N. Start from your exercise 7 (README, stage 8).
 *
 * The ideas, and their contracts:
 *  - A tile per size. A persistent grid is as fast as its busiest SM: at 1024^3 there are 32
 *    tiles of 128x256 for 132 SMs. Make the kernel a template over the element type, the tile
 *    width and the number of 64-row consumers, build 128x256, 128x128 and 64x128, and pick one
 *    per launch by an estimate of its time: rounds of cluster pairs times the tile's time per
 *    round (its area over a rate you measure with the tile forced). Why 64x128 rather than
 *    128x64: count the shared-memory bytes each wgmma reads per clock of tensor work.
 *  - One box at a time (write store_in_boxes below; gemm06_sm90a.cuh leaves store_boxes out of
 *    this file: GEMM06_EXERCISE_BOX_STORE). Stage a consumer's fragment one 64x64 box at a time
 *    through two 8 KiB buffers taken in turn, by a count of boxes that runs on across tiles,
 *    each box stored by TMA as soon as it is staged. A buffer may be rewritten once the store
 *    that read it is done reading (tma.cuh: what the wait's argument counts). 32 KiB of staging
 *    instead of 64 buys a 4th slot at 128x256 (GEMM06_SMEM_FINAL); narrower tiles get more.
 *  - A balanced grid (write balanced_grid below; launch.cuh leaves launch_balanced_grid out of
 *    this file: LAUNCH_EXERCISE_BALANCED_GRID). Launching every cluster that fits buys nothing
 *    over the fewest clusters that keep the same number of rounds, and SMs left idle give their
 *    share of the power to the others (docs/hopper.md, "Clocks").
 *  - fp16 and any N. The tensor maps move 2-byte elements without looking at them; the wgmma
 *    and the rounding differ by type. Where no map of C can exist (N % 8 != 0, or C not 16-byte
 *    aligned), store from registers (store_fragment): a branch the whole launch takes alike.
 *  - A lean K loop: count its SASS instructions per K tile besides the 4 HGMMAs (ours: 39).
 *    Descriptors made once and advanced by an add, the ring position as a slot and a phase, and
 *    shared addresses that ptxas keeps rather than recomputes (docs/hopper.md, "Uniform
 *    registers").
 *
 * Check it:  make check-06 ARGS="--kernel ex_final"   (and ex_final_f16)
 */
#define GEMM06_EXERCISE_BOX_STORE /* you write the box store: store_in_boxes below */
#define LAUNCH_EXERCISE_BALANCED_GRID /* and the grid: balanced_grid below */
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

/* TODO: one consumer's m64nBN fragment d, as T, to C at (row0, col0) by TMA stores of 64x64
 * boxes through the two 8 KiB buffers at `staging`; `boxes` counts the boxes staged so far
 * (buffer boxes % 2 is next) and runs on across tiles; `stores` is true on the one thread that
 * issues the stores (see the hints). */
template <int BN, typename T>
static __device__ __forceinline__ void store_in_boxes(const float (&d)[BN / 2],
                                                      const CUtensorMap *map, unsigned staging,
                                                      unsigned &boxes, int row0, int col0,
                                                      int barrier, bool stores) {
    /* TODO */
    (void)d, (void)map, (void)staging, (void)boxes, (void)row0, (void)col0, (void)barrier,
        (void)stores;
}

/* TODO: how many blocks (or clusters) to launch for `units` equal work units when `resident`
 * fit at once: the fewest that need as many rounds as `resident` would. */
[[maybe_unused]] static inline long balanced_grid(long units, long resident) {
    /* TODO */
    return units < resident ? units : resident;
}

extern "C" int ex_gemm06_final(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                               cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_gemm06_final_f16(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                   int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
