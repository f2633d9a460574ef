/* Exercise 2 — TMA: each operand tile arrives by one copy instruction that signals an
 * mbarrier; a 128x128 tile of C per block, two warpgroups of 64 rows. Start from your
 * exercise 1 (README, stage 2).
 *
 * The idea. The copy engine computes every address, clips the box at the matrix edges (zero
 * fill) and writes the swizzled layout that your threads wrote by hand; the threads learn that
 * the bytes have landed from an mbarrier that counts them.
 *
 * The contract:
 *  - Same problem and shapes as exercise 1 (K % 8 == 0: TMA needs a row stride that is a
 *    multiple of 16 bytes). At most GEMM06_SMEM_TMA bytes; gridDim.y is limited to 65535.
 *  - A tensor map (tensor_map.h) describes one operand: its type, dims (innermost first),
 *    strides, box, swizzle and fill. The box must produce exactly exercise 1's tile layout.
 *    Encoding is a driver call: a timed launch must not pay for it (cache the maps per
 *    problem), and the kernel must receive each map as a const __grid_constant__ parameter.
 *  - The barrier (ptx/mbarrier.cuh explains phases, arrivals and the tx-count): its init must be
 *    visible before anyone uses it, the bytes it expects per phase are the full boxes (also at an
 *    edge), and a waiter names the phase by its parity. No thread may re-arm a phase before
 *    every thread has passed the wait of the one before.
 *  - Each warpgroup multiplies its own 64 rows of A by the whole B tile; nobody refills a tile
 *    that a warpgroup may still be reading.
 *  - SASS: UTMALDG.2D, SYNCS.ARRIVE.TRANS64, SYNCS.PHASECHK, HGMMA; no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_tma"
 */
#include "stage.h"
#include "gemm06.h"
#include "launch.cuh"
#include "tensor_map.h"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_tma(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N, int K,
                             cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
