/* The chapter's inputs (gemm07.h, quant07_make_input; README, "Correctness"): uniform values from
 * the harness's seeded fill, then each 1 x 128 slice multiplied by its own power of two, so that
 * the scales of a block-scaled operand differ from block to block. A power of two changes a
 * bf16 value exactly (the exponent moves, the 8 significant bits stay), so the data is still
 * drawn from (seed, index) alone. */
#include "gpu.h"
#include "gemm07.h"
#include "rng.h"

/* e in -7..4: e_block (-4..4) per 128 x 128 block, plus e_row (-3..0) per row and slice. With
 * 128 rows per block, at least one row of a block has e_row = 0 but with probability
 * (3/4)^128: the block's amax is set by e_block, its slices' by e_block + e_row. */
static __device__ __forceinline__ int slice_exponent(unsigned long long seed, long row, long kb) {
    const uint64_t b = rng_mix(seed ^ rng_mix(((uint64_t)(row / 128) << 32) ^ (uint64_t)kb));
    const uint64_t r = rng_mix(~seed ^ rng_mix(((uint64_t)row << 24) ^ (uint64_t)kb));
    return (int)(b % 9) - 4 - (int)(r % 4);
}

static __global__ void shape_kernel(bf16_t *x, long rows, long cols, unsigned long long seed,
                                    int zero_blocks) {
    const long n = rows * cols, stride = (long)gridDim.x * blockDim.x;
    const long zero_row = rows > 130 ? 130 : rows - 1;
    for (long idx = blockIdx.x * (long)blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const long i = idx / cols, j = idx % cols, kb = j / 128;
        const bool zero = zero_blocks && ((i < 128 && kb == 1) || (rows > 1 && i == zero_row && kb == 0));
        const float v = __bfloat162float(x[idx]);
        x[idx] = __float2bfloat16_rn(zero ? 0.0f : ldexpf(v, slice_exponent(seed, i, kb)));
    }
}

extern "C" void quant07_make_input(bf16_t *x, long rows, long cols, unsigned long long seed,
                                   int zero_blocks, cudaStream_t stream) {
    const long n = rows * cols;
    fill_uniform_bf16(x, n, seed, -1.0f, 1.0f, stream);
    const long blocks = (n + 255) / 256;
    shape_kernel<<<(unsigned int)(blocks < 8192 ? blocks : 8192), 256, 0, stream>>>(
        x, rows, cols, seed, zero_blocks);
    CUDA_CHECK(cudaGetLastError());
}
