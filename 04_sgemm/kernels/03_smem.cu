/* Stage 3 — shared-memory cache blocking.
 *
 * Change from stage 2: a 32x32 block computes a 32x32 tile of C by walking K in 32-wide slices.
 * For each slice the block copies a 32x32 tile of A and of B into shared memory once (each
 * thread one element of each, coalesced), synchronizes, and every thread then reads its row of
 * the A tile and column of the B tile from shared memory. Each global element is loaded once per
 * block instead of once per thread: 32x fewer global loads. The limit moves to shared memory:
 * 2 LDS per FFMA. Edges: tiles past M, N or K are filled with zeros, so any shape works.
 * SASS: LDS, STS, BAR.SYNC around an FFMA loop. */
#include "sgemm.h"
#include "stage.h"

#define TILE 32

static __global__ void __launch_bounds__(TILE *TILE)
    sgemm_smem_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                      float beta, float *C) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++) sum = fmaf(As[ty][k], Bs[k][tx], sum);
        __syncthreads(); /* before the next slice overwrites the tiles */
    }
    if (row < M && col < N) C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

extern "C" int STAGE(sgemm_smem)(int m, int n, int k, float alpha, const float *a, const float *b,
                                 float beta, float *c, cudaStream_t stream) {
    dim3 block(TILE, TILE), grid(blocks_for(n, TILE), blocks_for(m, TILE));
    sgemm_smem_kernel<<<grid, block, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
