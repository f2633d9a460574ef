/* Stage 6 — 128-bit loads, with A stored transposed in shared memory.
 *
 * Change from stage 5: global loads are float4 (LDG.E.128): each thread fetches its share of a
 * tile in one instruction instead of four. And the A tile is stored transposed, As[k][m], so the
 * 8 values of A a thread needs for step k are 8 consecutive floats, like its 8 values of B:
 * each is two LDS.128 instead of eight LDS. Per k step a thread now issues 4 shared loads for
 * 64 FFMAs (stage 5: 16). The transposing store is four scalar STS per float4 of A.
 * What is still wrong: a thread's 8 columns are contiguous, so the 8 threads that share memory
 * wavefront in an LDS.128 read addresses 32 bytes apart and collide on the same banks, and the
 * transposing stores collide 2-way. Stage 7 fixes both.
 * Shapes: M and N multiples of 128, K a multiple of 8. */
#include "sgemm.h"
#include "stage.h"

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS 256

static __global__ void __launch_bounds__(THREADS)
    sgemm_vec4_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                      float beta, float *C) {
    (void)M;
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4; /* one float4 of A per thread */
    const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4; /* one float4 of B per thread */
    float acc[TM][TN] = {{0.f}};
    float a[TM], b[TN];
    A += m0 * K;
    B += n0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 va = *(const float4 *)&A[a_m * K + k0 + a_k];
        As[a_k + 0][a_m] = va.x;
        As[a_k + 1][a_m] = va.y;
        As[a_k + 2][a_m] = va.z;
        As[a_k + 3][a_m] = va.w;
        *(float4 *)&Bs[b_k][b_n] = *(const float4 *)&B[(k0 + b_k) * N + b_n];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            *(float4 *)&a[0] = *(const float4 *)&As[k][tr * TM];
            *(float4 *)&a[4] = *(const float4 *)&As[k][tr * TM + 4];
            *(float4 *)&b[0] = *(const float4 *)&Bs[k][tc * TN];
            *(float4 *)&b[4] = *(const float4 *)&Bs[k][tc * TN + 4];
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
        for (int j = 0; j < TN; j += 4) {
            float4 *p = (float4 *)&C[(m0 + tr * TM + i) * N + n0 + tc * TN + j];
            float4 c = *p;
            c.x = alpha * acc[i][j] + beta * c.x;
            c.y = alpha * acc[i][j + 1] + beta * c.y;
            c.z = alpha * acc[i][j + 2] + beta * c.z;
            c.w = alpha * acc[i][j + 3] + beta * c.w;
            *p = c;
        }
}

extern "C" int STAGE(sgemm_vec4)(int m, int n, int k, float alpha, const float *a, const float *b,
                                 float beta, float *c, cudaStream_t stream) {
    dim3 grid(blocks_for(n, BN), blocks_for(m, BM));
    sgemm_vec4_kernel<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
