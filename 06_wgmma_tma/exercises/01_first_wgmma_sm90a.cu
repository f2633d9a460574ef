/* Exercise 1 — the first wgmma: one warpgroup, a 64x128 tile of C, operands copied by the
 * threads into the 128-byte swizzled layout, synchronous.
 *
 * Hints:
 *  - Block of 128 threads (one warpgroup), grid (ceil(N/128), ceil(M/64)). Dynamic shared
 *    memory: GEMM06_SMEM_FIRST_WGMMA bytes (gemm06.h): the A tile (64 rows x 128 bytes), the B
 *    tile (128 rows x 128 bytes), and 1024 bytes of slack to start the tiles on a 1024-byte
 *    boundary (round smem_addr(p) up; smem.cuh).
 *  - One K tile is 64 bf16 = 128 bytes per row. Copy 16-byte chunks: chunk c of tile row r
 *    (global row row0 + r, k = k0 + 8c) goes to byte r * 128 + ((c ^ (r % 8)) * 16). A chunk
 *    past the last row or past K is stored as zeros (K % 8 == 0: a chunk is never half in).
 *  - Before the tensor core reads what the threads stored: fence_proxy_async_shared() in every
 *    thread (fence.cuh), then __syncthreads().
 *  - Descriptors (wgmma.cuh): wgmma_desc(addr, WGMMA_SWIZZLE_128B, 16, 1024). The k16 step k
 *    (0..3) of a tile starts at tile + 32 * k bytes.
 *  - wgmma_fence(); four wgmma_bf16_ss<128>(d, desc_a, desc_b, 1); wgmma_commit_group();
 *    wgmma_wait_group<0>(); wgmma_fence_operands(d); then __syncthreads() before the next copy.
 *    float d[64] starts at zero.
 *  - Epilogue: register i of thread t (warp w, lane l) is row 16w + l/4 + 8*((i/2)%2), column
 *    8*(i/4) + 2*(l%4) + i%2 of the tile. Store pairs with __floats2bfloat162_rn when N is even,
 *    single elements otherwise, and only inside M x N.
 *  - Check the SASS: HGMMA.64x128x16.F32.BF16, FENCE.VIEW.ASYNC.S, no LDL/STL.
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
