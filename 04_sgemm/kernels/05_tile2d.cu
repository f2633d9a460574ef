/* Stage 5 — 2-D block tiling: an outer-product register tile per thread.
 *
 * Change from stage 4: each thread computes an 8x8 tile of C. Per k it loads 8 values of A and
 * 8 of B from shared memory into registers and does their outer product: 64 FFMAs for 16 loads
 * (stage 4: 8 FFMAs for 9). The block tile grows to 128x128 with 256 threads, so each element
 * brought from global memory serves 128 FFMAs. The 64 accumulators live in registers: the SASS
 * must show no LDL/STL (local memory), or the gain is lost.
 * Still scalar loads (LDS, LDG.E), and the loads of A in shared memory (As[m][k], row-major) hit
 * the same banks: fixed in the next two stages.
 * Shapes: M and N multiples of 128, K a multiple of 8 (no edge handling). */
#include "sgemm.h"
#include "stage.h"

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    sgemm_tile2d_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                        float beta, float *C) {
    (void)M;
    __shared__ float As[BM][BK], Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN); /* 16 x 16 threads */
    float acc[TM][TN] = {{0.f}};
    float a[TM], b[TN];
    A += m0 * K;
    B += n0;
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / THREADS; i++) {
            const int e = tid + i * THREADS;
            As[e / BK][e % BK] = A[(e / BK) * K + k0 + e % BK];
            Bs[e / BN][e % BN] = B[(k0 + e / BN) * N + e % BN];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[tr * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[k][tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) {
            float *p = &C[(m0 + tr * TM + i) * N + n0 + tc * TN + j];
            *p = alpha * acc[i][j] + beta * *p;
        }
}

extern "C" int STAGE(sgemm_tile2d)(int m, int n, int k, float alpha, const float *a,
                                   const float *b, float beta, float *c, cudaStream_t stream) {
    dim3 grid(blocks_for(n, BN), blocks_for(m, BM));
    sgemm_tile2d_kernel<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
