/* Stage 7 — bank-conflict-free shared memory: padding and a strided thread layout.
 *
 * Shared memory has 32 banks of 4 bytes; an LDS.128 is served 8 threads (128 bytes) per
 * wavefront, and two different addresses in one bank within a wavefront serialize.
 * Two changes from stage 6:
 *  - Reads: a thread's 8 rows (and 8 columns) are now two groups of 4, 64 apart: rows
 *    tr*4..tr*4+3 and 64+tr*4..64+tr*4+3. The 16 threads of a warp that differ in tc read 16
 *    consecutive float4s of Bs (256 contiguous bytes: the 2 wavefronts any 256 bytes need),
 *    instead of 16 float4s 32 bytes apart (4 wavefronts in stage 6).
 *  - Writes: each row of the transposed A tile gets 4 floats of padding (As[BK][BM + 4]). A warp
 *    stores As[a_k + j][a_m] for 16 values of a_m and two of a_k; with rows 132 floats long, the
 *    two a_k values land 16 banks apart, so the 32 stores hit 32 different banks (stage 6: 2-way
 *    conflict). The padding keeps rows 16-byte aligned, so the LDS.128 reads still work.
 * Nsight Compute's "shared bank conflicts" counters go to about zero.
 * Shapes: M and N multiples of 128, K a multiple of 8. */
#include "sgemm.h"
#include "stage.h"

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS 256
#define A_PAD 4

static __global__ void __launch_bounds__(THREADS)
    sgemm_noconflict_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C) {
    (void)M;
    __shared__ __align__(16) float As[BK][BM + A_PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tr = tid / 16, tc = tid % 16; /* rows tr*4 + {0, 64}, columns tc*4 + {0, 64} */
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
            *(float4 *)&a[0] = *(const float4 *)&As[k][tr * 4];
            *(float4 *)&a[4] = *(const float4 *)&As[k][BM / 2 + tr * 4];
            *(float4 *)&b[0] = *(const float4 *)&Bs[k][tc * 4];
            *(float4 *)&b[4] = *(const float4 *)&Bs[k][BN / 2 + tc * 4];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = m0 + (i < 4 ? tr * 4 + i : BM / 2 + tr * 4 + i - 4);
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = n0 + (j < 4 ? tc * 4 : BN / 2 + tc * 4);
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

extern "C" int STAGE(sgemm_noconflict)(int m, int n, int k, float alpha, const float *a,
                                       const float *b, float beta, float *c, cudaStream_t stream) {
    dim3 grid(blocks_for(n, BN), blocks_for(m, BM));
    sgemm_noconflict_kernel<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
