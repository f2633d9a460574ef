/* The exact GEMM reference (gemm_ref.h, "the exact reference"): every entry of the product as
 * an fp64 sum on the GPU, read from the very bytes the kernels read.
 *
 * Why fp64 is exact here. Each term a~ * b~ is a product of two values of at most 28
 * significant bits (an fp32 input has 24; an e4m3 byte times its fp32 scale 4 + 24), so it has
 * at most 56 bits: exact in fp64 for fp32, fp16 and bf16 inputs, and within 2^-53 of itself for
 * scaled e4m3. The fp64 sum of K such terms is within K 2^-53 sum|terms| of the true sum: at
 * K = 16384 that is 2^-39 of sum|terms|, some 2^15 times below the smallest bound a chapter
 * sets (fp32 accumulation, 2^-24 per step). So "exact" means exact to every digit a check can
 * see; tests/test_gemm_ref.c holds it to the CPU's fp64 product at odd shapes.
 *
 * Besides the value, each entry gets the square root of the sum of its terms' squares (the
 * beta * c0 term included), the size of the random walk that an accumulation's rounding errors
 * take (gemm_ref.h, gemm_bound).
 *
 * A plain tiled kernel: 256 threads own a 64 x 64 block of C, 4 x 4 entries each, and step
 * through K in chunks of 32 staged in shared memory as fp64 (converted and scaled on the way
 * in). Speed matters only so that a reference at 8192^3 takes a fraction of a second. */
#include "gemm_ref.h"

#define EXACT_TILE 64
#define EXACT_CHUNK 32
#define EXACT_THREADS 256

/* The value of one stored element, widened to fp64. */
__device__ __forceinline__ double widen(float v) { return v; }
__device__ __forceinline__ double widen(__half v) { return __half2float(v); }
__device__ __forceinline__ double widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ double widen(__nv_fp8_e4m3 v) { return (float)v; }

/* Operand element (row, t) of A (M x K row-major) or of B, dequantized. B is N x K row-major
 * (TN: element (j, t) at j * K + t) or K x N row-major (NN: at t * N + j). Zero outside the
 * matrix, so partial tiles add nothing. */
template <typename T, bool IS_B>
__device__ __forceinline__ double operand(const gemm_problem &p, const T *m, long row, long t) {
    const long rows = IS_B ? p.N : p.M;
    if (row >= rows || t >= p.K) return 0.0;
    const long at = IS_B && p.layout == GEMM_NN ? t * p.N + row : row * p.K + t;
    double v = widen(m[at]);
    if (p.scaling == GEMM_SCALE_TENSOR) {
        v *= (double)(IS_B ? p.scale_b[0] : p.scale_a[0]);
    } else if (p.scaling == GEMM_SCALE_BLOCK) {
        const long kb = t / 128;
        v *= (double)(IS_B ? p.scale_b[gemm_ref_scale_b_index(p.K, row / 128, kb)]
                           : p.scale_a[gemm_ref_scale_a_index(p.M, row, kb)]);
    }
    return v;
}

template <typename T>
__global__ void __launch_bounds__(EXACT_THREADS)
    exact_kernel(const gemm_problem p, double *value, float *spread) {
    __shared__ double as[EXACT_CHUNK][EXACT_TILE + 1]; /* [t][row]: a column of A per t */
    __shared__ double bs[EXACT_CHUNK][EXACT_TILE + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long i0 = (long)blockIdx.y * EXACT_TILE, j0 = (long)blockIdx.x * EXACT_TILE;
    const T *a = (const T *)p.a, *b = (const T *)p.b;
    double sum[4][4] = {}, squares[4][4] = {};
    for (long t0 = 0; t0 < p.K; t0 += EXACT_CHUNK) {
        for (int e = threadIdx.x; e < EXACT_TILE * EXACT_CHUNK; e += EXACT_THREADS) {
            /* t fastest: consecutive threads read consecutive bytes of a K-major row */
            const int r = e / EXACT_CHUNK, t = e % EXACT_CHUNK;
            as[t][r] = operand<T, false>(p, a, i0 + r, t0 + t);
            if (p.layout == GEMM_NN) { /* B row-major K x N: j fastest */
                const int tn = e / EXACT_TILE, jn = e % EXACT_TILE;
                bs[tn][jn] = operand<T, true>(p, b, j0 + jn, t0 + tn);
            } else {
                bs[t][r] = operand<T, true>(p, b, j0 + r, t0 + t);
            }
        }
        __syncthreads();
#pragma unroll 4
        for (int t = 0; t < EXACT_CHUNK; t++) {
            double av[4], bv[4];
#pragma unroll
            for (int r = 0; r < 4; r++) av[r] = as[t][ty + 16 * r], bv[r] = bs[t][tx + 16 * r];
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    const double term = av[r] * bv[c];
                    sum[r][c] += term;
                    squares[r][c] = fma(term, term, squares[r][c]);
                }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const long i = i0 + ty + 16 * r, j = j0 + tx + 16 * c;
            if (i >= p.M || j >= p.N) continue;
            double v = p.alpha * sum[r][c], sq = p.alpha * p.alpha * squares[r][c];
            if (p.c0) {
                const double c0 = p.beta * (double)p.c0[i * p.N + j];
                v += c0;
                sq += c0 * c0;
            }
            value[i * p.N + j] = v;
            spread[i * p.N + j] = (float)sqrt(sq);
        }
}

extern "C" void gemm_exact_launch(const gemm_problem *on_device, double *value, float *spread,
                                  cudaStream_t stream) {
    const gemm_problem p = *on_device;
    const dim3 grid((unsigned)((p.N + EXACT_TILE - 1) / EXACT_TILE),
                    (unsigned)((p.M + EXACT_TILE - 1) / EXACT_TILE));
    switch (p.type) {
    case GEMM_F32: exact_kernel<float><<<grid, EXACT_THREADS, 0, stream>>>(p, value, spread); break;
    case GEMM_F16: exact_kernel<__half><<<grid, EXACT_THREADS, 0, stream>>>(p, value, spread); break;
    case GEMM_BF16:
        exact_kernel<__nv_bfloat16><<<grid, EXACT_THREADS, 0, stream>>>(p, value, spread);
        break;
    case GEMM_E4M3:
        exact_kernel<__nv_fp8_e4m3><<<grid, EXACT_THREADS, 0, stream>>>(p, value, spread);
        break;
    default:
        fprintf(stderr, "gemm_exact: unsupported input type %d\n", (int)p.type);
        exit(EXIT_KERNEL_FAILED);
    }
    CUDA_CHECK(cudaGetLastError());
}
