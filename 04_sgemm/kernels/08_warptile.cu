/* Stage 8 — warp tiling: block tile -> warp tile -> thread tile.
 *
 * Change from stage 7: the 256 threads are placed by warp. The 128x128 block tile is split into
 * 8 warp tiles of 64x32 (2 along M, 4 along N); inside a warp the 32 threads form an 8x4 grid,
 * and each thread's 8x8 tile is two float4 groups per dimension, spaced 32 rows and 16 columns
 * apart. What it buys:
 *  - Each LDS.128 of a warp reads only 8 (A) or 4 (B) distinct float4s, contiguous: one
 *    wavefront, broadcast to the other threads. Stage 7's warp read 2 x 16 float4s.
 *  - A warp's working set in shared memory is a 64x8 slice of A and 8x32 of B, the same shape
 *    the tensor-core chapters use for their fragments (this is how CUTLASS lays out SIMT GEMMs).
 *  - The epilogue writes 4 contiguous float4s per row segment per warp (64 bytes: 2 whole
 *    sectors).
 * The copy into shared memory is stage 7's (LDG.E.128, padded transposed A).
 * Shapes: M and N multiples of 128, K a multiple of 8. */
#include "sgemm.h"
#include "stage.h"

#define BM 128
#define BN 128
#define BK 8
#define WM 64 /* warp tile */
#define WN 32
#define TM 8 /* thread tile */
#define TN 8
#define TRM (WM / TM) /* 8 threads along M in a warp */
#define TRN (WN / TN) /* 4 along N */
#define THREADS ((BM / WM) * (BN / WN) * 32)
#define A_PAD 4

static __global__ void __launch_bounds__(THREADS)
    sgemm_warptile_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                          float beta, float *C) {
    (void)M;
    __shared__ __align__(16) float As[BK][BM + A_PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    const int tm = wm + (lane / TRN) * 4, tn = wn + (lane % TRN) * 4; /* first float4 */
    const int a_m = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
    const int b_k = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
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
#pragma unroll
            for (int g = 0; g < TM / 4; g++)
                *(float4 *)&a[4 * g] = *(const float4 *)&As[k][tm + g * TRM * 4];
#pragma unroll
            for (int g = 0; g < TN / 4; g++)
                *(float4 *)&b[4 * g] = *(const float4 *)&Bs[k][tn + g * TRN * 4];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = m0 + tm + (i / 4) * TRM * 4 + i % 4;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = n0 + tn + (j / 4) * TRN * 4;
            float4 *p = (float4 *)&C[row * N + col];
            float4 c = *p;
            c.x = alpha * acc[i][j] + beta * c.x;
            c.y = alpha * acc[i][j + 1] + beta * c.y;
            c.z = alpha * acc[i][j + 2] + beta * c.z;
            c.w = alpha * acc[i][j + 3] + beta * c.w;
            *p = c;
        }
    }
}

extern "C" int STAGE(sgemm_warptile)(int m, int n, int k, float alpha, const float *a,
                                     const float *b, float beta, float *c, cudaStream_t stream) {
    dim3 grid(blocks_for(n, BN), blocks_for(m, BM));
    sgemm_warptile_kernel<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
