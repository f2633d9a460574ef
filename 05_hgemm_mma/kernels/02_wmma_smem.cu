/* Stage 2 — WMMA with shared-memory tiles.
 *
 * Change from stage 1: a block of 8 warps computes a 128x128 tile of C. For each 32-wide
 * slice of k, the block copies a 128x32 tile of A and a 128x32 tile of B into shared memory
 * once (16-byte loads, coalesced), and each warp then computes a 64x32 piece (4 x 2 WMMA
 * tiles) from shared memory. Each element brought in is used by 32 (A) or 64 (B) multiply-adds
 * in its warp and by 4 or 2 warps: per k-slice 2 * 128 * 128 * 32 flops on (128 + 128) * 32 * 2
 * bytes, 64 flops per byte of global traffic, 8x stage 1's 8 per byte requested (4x its 16 if
 * the L1 had merged all the repeated loads of stage 1's 2 x 2 warps).
 *
 * Rows in shared memory are padded from 32 to 40 halves (80 bytes), so the rows that one
 * fragment load touches do not all start in the same bank. The accumulators are rounded to
 * fp16 through a shared-memory scratch (WMMA's layout is opaque), with bounds checks: copies
 * outside the matrix are zero-filled, so any M and N work (K a multiple of 8).
 *
 * What is still slow: the copies go global -> registers -> shared memory with a barrier on
 * each side, so each warp waits for DRAM latency every k-slice, and WMMA hides how the
 * fragments are loaded. Stage 3 takes control of the fragments. */
#include <mma.h>

#include "stage.h"
#include "hgemm.h"

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define LDS (BK + 8) /* padded row stride in halves; WMMA needs a multiple of 8 */
#define WARPS_M 2
#define WARPS_N 4
#define THREADS (WARPS_M * WARPS_N * 32)
#define WM (BM / WARPS_M) /* 64: 4 WMMA tiles */
#define WN (BN / WARPS_N) /* 32: 2 WMMA tiles */
#define CHUNKS_PER_ROW (BK / 8)

static __global__ void __launch_bounds__(THREADS)
    wmma_smem_kernel(const f16_t *__restrict__ A, const f16_t *__restrict__ B,
                     f16_t *__restrict__ C, int M, int N, int K) {
    __shared__ __align__(32) f16_t As[BM][LDS];
    __shared__ __align__(32) f16_t Bs[BN][LDS];
    const int block_m = blockIdx.y * BM, block_n = blockIdx.x * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = (warp / WARPS_N) * WM, warp_n = (warp % WARPS_N) * WN;

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[WM / 16];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[WN / 16];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[WM / 16][WN / 16];
#pragma unroll
    for (int i = 0; i < WM / 16; i++)
#pragma unroll
        for (int j = 0; j < WN / 16; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * CHUNKS_PER_ROW / THREADS; i++) {
            int id = threadIdx.x + i * THREADS, row = id / CHUNKS_PER_ROW;
            int k = (id % CHUNKS_PER_ROW) * 8;
            uint4 va = make_uint4(0, 0, 0, 0), vb = make_uint4(0, 0, 0, 0);
            if (block_m + row < M && k0 + k < K)
                va = *(const uint4 *)&A[(size_t)(block_m + row) * K + k0 + k];
            if (block_n + row < N && k0 + k < K)
                vb = *(const uint4 *)&B[(size_t)(block_n + row) * K + k0 + k];
            *(uint4 *)&As[row][k] = va;
            *(uint4 *)&Bs[row][k] = vb;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
#pragma unroll
            for (int i = 0; i < WM / 16; i++)
                wmma::load_matrix_sync(a[i], &As[warp_m + i * 16][kk], LDS);
#pragma unroll
            for (int j = 0; j < WN / 16; j++)
                wmma::load_matrix_sync(b[j], &Bs[warp_n + j * 16][kk], LDS);
#pragma unroll
            for (int i = 0; i < WM / 16; i++)
#pragma unroll
                for (int j = 0; j < WN / 16; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    /* Epilogue: each warp rounds its tiles to fp16 one at a time through a 16x16 fp32 scratch
     * carved from As (free after the last barrier: 8 warps x 1 KiB <= 10 KiB). */
    float *scratch = (float *)&As[0][0] + warp * 256;
    const int r = lane / 2, c = 8 * (lane % 2);
#pragma unroll
    for (int i = 0; i < WM / 16; i++)
#pragma unroll
        for (int j = 0; j < WN / 16; j++) {
            wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            int grow = block_m + warp_m + i * 16 + r, gcol = block_n + warp_n + j * 16 + c;
            if (grow < M)
                for (int e = 0; e < 8 && gcol + e < N; e++)
                    C[(size_t)grow * N + gcol + e] = __float2half_rn(scratch[r * 16 + c + e]);
            __syncwarp();
        }
}

extern "C" int STAGE(hgemm_wmma_smem)(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                      cudaStream_t stream) {
    dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    wmma_smem_kernel<<<grid, THREADS, 0, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
