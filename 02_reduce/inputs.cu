/* The test input. fill_uniform_f32 (common/gpu.cu) draws x uniform in [-1, 1); this rounds
 * each value to an odd multiple of 2^-8, (floor(128 x) + 0.5) / 128, and plants a 1.0 at
 * index `peak`. Why (README, "Checking"): every value is then a multiple of 2^-8 of magnitude
 * at least 2^-8, so every partial sum whose magnitude stays below 2^16 is exact in fp32, and
 * the sum comes out the same, exactly, in any order of additions; a missed or doubled element
 * moves it by at least 2^-8. The planted 1.0 is the unique maximum (every other value is at
 * most 127.5/128), so a max that misses it fails too. */
#include "gpu.h"
#include "reduce.h"

static __global__ void quantize_kernel(float *x, long n, long peak) {
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = i == peak ? 1.0f : (floorf(x[i] * 128.0f) + 0.5f) * (1.0f / 128.0f);
}

extern "C" void reduce_make_input(float *x, long n, unsigned long long seed, long peak,
                                  cudaStream_t stream) {
    fill_uniform_f32(x, n, seed, -1.0f, 1.0f, stream);
    long blocks = (n + 255) / 256;
    quantize_kernel<<<(unsigned int)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(x, n, peak);
    CUDA_CHECK(cudaGetLastError());
}
