/* Exercise 1 — the first wgmma: one warpgroup computes a 64x128 tile of C with wgmma from
 * operand tiles its own threads copied into shared memory; synchronous (README, stage 1).
 *
 * The idea. The tensor core reads A and B from shared memory itself, through two 64-bit matrix
 * descriptors: there is no fragment to load. In exchange the tiles must be in the layout the
 * descriptor says, and the tensor core must see the threads' stores.
 *
 * The contract:
 *  - C = A * B^T as gemm06.h says; any M and N >= 1, K % 8 == 0; one block of one warpgroup per
 *    64x128 tile of C; at most GEMM06_SMEM_FIRST_WGMMA bytes of dynamic shared memory.
 *  - A K tile is 64 bf16 = 128 bytes a row, stored with the 128-byte swizzle (README, stage 1,
 *    and figures/swizzle_atom.svg); a tile starts on a 1024-byte boundary. Elements past M, N
 *    or K must be zeros (they add nothing).
 *  - The descriptor's fields for this layout, and how the k16 step moves it, are in the README
 *    and in ptx/wgmma.cuh (wgmma_desc); the same header says what wgmma needs before and after it
 *    (fence, commit, wait) and which register holds which element of the 64x128 accumulator.
 *  - Ordinary stores and the tensor core's reads go through different proxies: find in
 *    ptx/fence.cuh what makes your stores visible to the async proxy.
 *  - Do it on paper first: draw one 8-row atom and work out which bytes the descriptor of
 *    k-step 2 points at in row 5.
 *  - The SASS should show HGMMA.64x128x16.F32.BF16 and FENCE.VIEW.ASYNC.S, and no LDL/STL.
 *
 * Check it:  make check-06 ARGS="--kernel ex_first_wgmma"
 */
#include "stage.h"
#include "gemm06.h"
#include "ptx/fence.cuh"
#include "ptx/smem.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm06_first_wgmma(const bf16_t *A, const bf16_t *B, bf16_t *C, int M, int N,
                                     int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
