/* Stage 9 — double buffering with cp.async (sm_80+): the copy of tile k+1 overlaps the math on
 * tile k.
 *
 * Change from stage 8: shared memory holds two stages of the A and B tiles. Before multiplying
 * tile k, each thread issues the copies of tile k+1 into the other stage with cp.async
 * (LDGSTS in SASS): global -> shared without passing through registers, so the thread does not
 * wait for them and needs no staging registers. cp.async.wait_group then a __syncthreads make
 * a landed tile visible to all threads; a second barrier after the math keeps the next copies
 * from overwriting a stage still being read. Stages 3-8 stalled every tile on a global load;
 * here the DRAM/L2 latency hides behind a whole tile of FFMAs. (Stage 10 needs one barrier per
 * tile by going three stages deep.)
 * The transposed A tile is copied 4 bytes at a time (cp.async cannot transpose a 16-byte
 * chunk); B is copied 16 bytes at a time.
 * Shapes: M and N multiples of 128, K a multiple of 8. */
#include "ptx/cp_async.cuh"
#include "sgemm.h"
#include "stage.h"

#define BM 128
#define BN 128
#define BK 8
#define WM 64
#define WN 32
#define TM 8
#define TN 8
#define TRM (WM / TM)
#define TRN (WN / TN)
#define THREADS ((BM / WM) * (BN / WN) * 32)
#define A_PAD 4

/* Issue the copies of the k-slice at k0 into one stage (no wait). */
__device__ __forceinline__ void issue_tile(float (*as)[BM + A_PAD], float (*bs)[BN],
                                           const float *A, const float *B, int N, int K, int k0,
                                           int tid) {
    /* A: 4 bytes per copy, consecutive threads along k: as[k][m] lands in 32 distinct banks. */
#pragma unroll
    for (int i = 0; i < BM * BK / THREADS; i++) {
        const int e = tid + i * THREADS, m = e / BK, k = e % BK;
        cp_async_4(&as[k][m], &A[m * K + k0 + k]);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; i++) {
        const int e = tid + i * THREADS, k = e / (BN / 4), n = (e % (BN / 4)) * 4;
        cp_async_16(&bs[k][n], &B[(k0 + k) * N + n]);
    }
    cp_async_commit();
}

static __global__ void __launch_bounds__(THREADS)
    sgemm_cp_async_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                          float beta, float *C) {
    (void)M;
    __shared__ __align__(16) float As[2][BK][BM + A_PAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    const int tm = wm + (lane / TRN) * 4, tn = wn + (lane % TRN) * 4;
    float acc[TM][TN] = {{0.f}};
    float a[TM], b[TN];
    A += m0 * K;
    B += n0;
    const int ktiles = K / BK;
    issue_tile(As[0], Bs[0], A, B, N, K, 0, tid);
    for (int kt = 0; kt < ktiles; kt++) {
        const int cur = kt % 2;
        if (kt + 1 < ktiles) {
            /* The other stage was last read in tile kt-1, before the barrier that ended it. */
            issue_tile(As[cur ^ 1], Bs[cur ^ 1], A, B, N, K, (kt + 1) * BK, tid);
            cp_async_wait<1>(); /* tile kt has landed; tile kt+1 may still be in flight */
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
#pragma unroll
            for (int g = 0; g < TM / 4; g++)
                *(float4 *)&a[4 * g] = *(const float4 *)&As[cur][k][tm + g * TRM * 4];
#pragma unroll
            for (int g = 0; g < TN / 4; g++)
                *(float4 *)&b[4 * g] = *(const float4 *)&Bs[cur][k][tn + g * TRN * 4];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads(); /* everyone is done with stage cur before tile kt+2 is copied into it */
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

extern "C" int STAGE(sgemm_cp_async)(int m, int n, int k, float alpha, const float *a,
                                     const float *b, float beta, float *c, cudaStream_t stream) {
    dim3 grid(blocks_for(n, BN), blocks_for(m, BM));
    sgemm_cp_async_kernel<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
    return LAUNCH_OK;
}
