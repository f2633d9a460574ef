/* Stage 1 — WMMA (nvcuda::wmma, 16x16x16) straight from global memory.
 *
 * The first tensor-core kernel: one warp computes one 16x16 tile of C. For each 16-wide step
 * of k it loads a 16x16 fragment of A (row-major, ld = K) and of B (column-major: B's column n
 * is row n of the N x K storage, ld = K) with wmma::load_matrix_sync, and multiply-adds them
 * into an fp32 accumulator fragment with wmma::mma_sync (SASS: HMMA). The fragment's register
 * layout is opaque: to round it to fp16 the warp stores it to a small shared-memory scratch,
 * then each lane converts and writes 8 elements.
 *
 * Why it is slow: every warp reads its A rows and B columns from global memory (the L2, at
 * best) with no reuse through shared memory. Per 16-wide k step a warp loads a 16x16 fp16 tile
 * of A and one of B, 2 * 16 * 16 * 2 = 1024 bytes, for 2 * 16 * 16 * 16 = 8192 flops: 8 flops
 * per byte requested. (The block's 2 x 2 warps load the same A rows in pairs and the same B
 * columns in pairs; if the L1 catches every repeat, the L2 sees the ratio of the 32x32 block
 * tile, 16 flops per byte.) Either is far below the ~100 flops per byte of L2 traffic that the
 * tensor cores would need to run at full rate (several TB/s of L2 bandwidth against ~644
 * TFLOPS). The next stages are about reuse.
 *
 * Shapes: no edge handling, so M, N and K must be multiples of 16 (the driver skips others). */
#include <mma.h>

#include "stage.h"
#include "hgemm.h"

using namespace nvcuda;

#define WARPS_PER_BLOCK 4 /* 2 x 2 warps: a 32x32 block of C */

static __global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
    wmma_global_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B,
                       f16_t *__restrict__ C, int M, int N, int K) {
    __shared__ float scratch[WARPS_PER_BLOCK][16 * 16];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = blockIdx.y * 32 + (warp / 2) * 16, col0 = blockIdx.x * 32 + (warp % 2) * 16;
    if (row0 >= M || col0 >= N) return; /* whole warp leaves together */

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (size_t)row0 * K + k, K);
        wmma::load_matrix_sync(b, B + (size_t)col0 * K + k, K);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(scratch[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    /* lane l writes row l / 2, columns 8 * (l % 2) .. +7 */
    const int r = lane / 2, c = 8 * (lane % 2);
    f16_t *dst = C + (size_t)(row0 + r) * N + col0 + c;
#pragma unroll
    for (int e = 0; e < 8; e += 2)
        *(__half2 *)&dst[e] =
            __floats2half2_rn(scratch[warp][r * 16 + c + e], scratch[warp][r * 16 + c + e + 1]);
}

extern "C" int STAGE(hgemm_wmma_global)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                        int K, cudaStream_t stream) {
    dim3 grid(blocks_for(N, 32), blocks_for(M, 32));
    wmma_global_kernel<<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
