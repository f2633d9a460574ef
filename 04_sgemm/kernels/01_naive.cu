/* Stage 1 — naive: one thread per element of C, each computing a full K-long dot product from
 * global memory.
 *
 * Thread (x, y) of a 32x32 block computes C[row][col] with row from threadIdx.x: neighbouring
 * threads of a warp take neighbouring ROWS. So for each k a warp reads 32 elements of A that are
 * K floats apart (32 sectors for 128 useful bytes), one broadcast element of B, and stores 32
 * elements N floats apart. Every FFMA waits on a load; the caches absorb part of the waste.
 * This is the baseline: any M, N, K. SASS: LDG.E and FFMA in a loop, no shared memory. */
#include "sgemm.h"
#include "stage.h"

static __global__ void sgemm_naive_kernel(int M, int N, int K, float alpha, const float *A,
                                          const float *B, float beta, float *C) {
    const int row = blockIdx.x * 32 + threadIdx.x;
    const int col = blockIdx.y * 32 + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.f;
        for (int k = 0; k < K; k++) sum = fmaf(A[row * K + k], B[k * N + col], sum);
        C[row * N + col] = alpha * sum + beta * C[row * N + col];
    }
}

extern "C" int STAGE(sgemm_naive)(int m, int n, int k, float alpha, const float *a, const float *b,
                                  float beta, float *c, cudaStream_t stream) {
    dim3 block(32, 32), grid(blocks_for(m, 32), blocks_for(n, 32));
    sgemm_naive_kernel<<<grid, block, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
