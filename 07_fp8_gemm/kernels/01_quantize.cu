/* Stage 1 — quantize: bf16 to e4m3 with a scale per tensor, per 1 x 128 slice, per 128 x 128 block.
 *
 * What this stage does: it makes the GEMM's inputs. An e4m3 value has 3 mantissa bits and a
 * range of +-448 (smallest normal 2^-6), so a bf16 matrix is first divided by a scale that maps
 * its largest magnitude, amax, onto 448; the GEMM multiplies the scale back in (gemm07.h has the
 * convention, shared with the host check: scale = amax / 448, 1 for an all-zero group;
 * q = e4m3(x * (1 / scale)), rounded to nearest even and saturating).
 *
 * Why it is fast: it is a stream, 2 bytes read and 1 written per element, so the floor is the
 * DRAM time of those bytes and the measure is % of cudaMemcpy. Each thread handles 16
 * consecutive elements: two 16-byte loads (LDG.E.128), the conversion, one 16-byte store
 * (STG.E.128). The conversion is cheap next to the bytes: 8 x F2FP.SATFINITE.E4M3.F32.PACK_AB
 * (sm_89 and later; two fp32 values to two e4m3 bytes, round-to-nearest, saturating) and 16
 * FMULs for 16 elements; sm_80 has no FP8 conversion instruction and gets the toolkit's software
 * version of the same rounding (correct, slower; the lesson is measured on Hopper).
 *
 * Where the three scalings differ is where the amax comes from:
 *   1 x 128 (_1x128): the slice's 128 values sit in 8 threads (16 each, 256 bytes of a row),
 *     so its amax is 3 shuffles away (lanes_max<8>, common/reduce.cuh) and the slice is
 *     quantized from registers: one pass over the data. A block is 32 rows at one column
 *     block kb, so the 32 scales it writes, scale[kb * rows + i], are 128 contiguous bytes.
 *   128 x 128 (_128x128): a block of 256 threads holds its whole 128 x 128 tile in registers
 *     (8 x 16 bytes per thread), reduces the amax over the block (block_max), and quantizes from
 *     registers: still one pass, 128 bytes in flight per thread.
 *   per tensor (_tensor): every element depends on the amax of the whole matrix, which no block
 *     knows until every block has read its share. So two kernels: the amax (chapter 02's
 *     single-pass reduction: 16-byte loads, a grid of resident blocks, the last block to
 *     arrive finishes; here each block folds its max into one word with atomicMax on the fp32
 *     bits, which order like the values since amax >= 0, and the last block turns it into the
 *     scale and resets it), then the quantize pass. The input is read twice: 5 bytes per element
 *     instead of 3, and the table counts all 5. The second pass walks the matrix backwards, so
 *     it starts on the end that the first pass read last, which may still be in L2 (an expected
 *     saving of up to the L2's size of the second read; not measured yet).
 *
 * What to look for: in the SASS, LDG.E.128 / STG.E.128 and F2FP...E4M3 (sass_checks.sh), no
 * local memory; in Nsight Compute, DRAM throughput near the memcpy row's. */
#include <stdint.h>

#include "stage.h"
#include "gemm07.h"
#include "reduce.cuh"

#define THREADS 256
#define UNROLL 4 /* amax pass: 16-byte loads in flight per thread per loop trip */

/* 16 consecutive bf16 (two 16-byte words) <-> 16 e4m3 (one 16-byte word). Word w of a uint4
 * holds elements 2w (low half) and 2w + 1 (high half); a bf16 is the top half of its fp32. */
static __device__ __forceinline__ float lo_of(uint32_t w) { return __uint_as_float(w << 16); }
static __device__ __forceinline__ float hi_of(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

static __device__ __forceinline__ float absmax8(uint4 v, float m) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; k++) m = fmaxf(m, fmaxf(fabsf(lo_of(w[k])), fabsf(hi_of(w[k]))));
    return m;
}

/* Two values to two e4m3 bytes, the first in the low byte (memory order). */
static __device__ __forceinline__ uint32_t e4m3x2(float a, float b) {
    return __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
}

/* One 16-byte word of 8 bf16 to 8 e4m3 bytes, in element order. */
static __device__ __forceinline__ uint2 quantize8(uint4 v, float inv) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint32_t p[4];
#pragma unroll
    for (int k = 0; k < 4; k++) p[k] = e4m3x2(lo_of(w[k]) * inv, hi_of(w[k]) * inv);
    return make_uint2(p[0] | (p[1] << 16), p[2] | (p[3] << 16));
}

static __device__ __forceinline__ uint4 quantize16(uint4 a, uint4 b, float inv) {
    const uint2 lo = quantize8(a, inv), hi = quantize8(b, inv);
    return make_uint4(lo.x, lo.y, hi.x, hi.y);
}

/* ---- per tensor ------------------------------------------------------------------------------ */

/* The running amax of the launch as fp32 bits, and the blocks finished so far. Zero when the
 * module loads; the last block of each launch puts both back. Two launches must not overlap on
 * different streams (they would share these words; chapter 02's stage 10 has the same rule). */
static __device__ unsigned int g_amax_bits;
static __device__ unsigned int g_blocks_done;

static __global__ void __launch_bounds__(THREADS)
    quant07_tensor_amax_kernel(const uint4 *__restrict__ x, long nvec, float *scale) {
    __shared__ float scratch[32];
    const long chunk = (long)UNROLL * THREADS;
    float m = 0.0f;
    for (long c = blockIdx.x; c < nvec / chunk; c += gridDim.x) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = __ldg(x + c * chunk + u * THREADS + threadIdx.x);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) m = absmax8(v[u], m);
    }
    const long stride = (long)gridDim.x * THREADS;
    for (long i = nvec / chunk * chunk + blockIdx.x * (long)THREADS + threadIdx.x; i < nvec; i += stride)
        m = absmax8(__ldg(x + i), m);
    m = block_max(m, scratch);
    if (threadIdx.x == 0) {
        atomicMax(&g_amax_bits, __float_as_uint(m)); /* m >= 0: its bits order like its value */
        __threadfence(); /* this block's max is in before its ticket is taken */
        if (atomicAdd(&g_blocks_done, 1u) == gridDim.x - 1) {
            /* the last block: every other block's atomicMax came before its ticket */
            __threadfence(); /* pairs with the writers' fences: read the max after the ticket */
            *scale = quant07_scale(__uint_as_float(atomicExch(&g_amax_bits, 0u)));
            g_blocks_done = 0; /* ready for the next launch (kernel boundaries order this) */
        }
    }
}

/* Unit u is elements 16u .. 16u + 15; the units are taken from the last one down. */
static __global__ void __launch_bounds__(THREADS)
    quant07_tensor_apply_kernel(const uint4 *__restrict__ x, long units,
                                const float *__restrict__ scale, uint4 *__restrict__ q) {
    const float inv = quant07_inverse(*scale);
    const long stride = (long)gridDim.x * THREADS;
    for (long i = blockIdx.x * (long)THREADS + threadIdx.x; i < units; i += stride) {
        const long u = units - 1 - i;
        q[u] = quantize16(__ldg(x + 2 * u), __ldg(x + 2 * u + 1), inv);
    }
}

/* ---- 1 x 128 slices -------------------------------------------------------------------------- */

/* A block: 32 rows (one per 8 threads) at column block kb; blocks run kb fastest. */
static __global__ void __launch_bounds__(THREADS)
    quant07_1x128_kernel(const bf16_t *__restrict__ x, int rows, int cols, int L,
                         e4m3_t *__restrict__ q, float *__restrict__ scale) {
    const int kb = (int)(blockIdx.x % (unsigned)L);
    const long i = (long)(blockIdx.x / (unsigned)L) * 32 + threadIdx.x / 8;
    const int col = kb * 128 + (threadIdx.x % 8) * 16;
    const bool mine = i < rows && col < cols; /* cols % 16 == 0: all 16 columns or none */
    uint4 a = make_uint4(0, 0, 0, 0), b = a;
    if (mine) {
        const uint4 *p = (const uint4 *)(x + i * cols + col);
        a = __ldg(p), b = __ldg(p + 1);
    }
    const float amax = lanes_max<8>(absmax8(b, absmax8(a, 0.0f))); /* every lane: shuffles */
    const float s = quant07_scale(amax);
    if (mine) *(uint4 *)(q + i * cols + col) = quantize16(a, b, quant07_inverse(s));
    if (threadIdx.x % 8 == 0 && i < rows) scale[(long)kb * rows + i] = s;
}

/* ---- 128 x 128 blocks ------------------------------------------------------------------------ */

/* A block of threads per 128 x 128 block (rb, kb), kb fastest: thread t covers columns
 * kb*128 + (t % 8)*16 .. +15 of rows rb*128 + t/8 + 32p, p = 0..3. */
static __global__ void __launch_bounds__(THREADS)
    quant07_128x128_kernel(const bf16_t *__restrict__ x, int rows, int cols, int L, int L4,
                           e4m3_t *__restrict__ q, float *__restrict__ scale) {
    __shared__ float scratch[32];
    const int kb = (int)(blockIdx.x % (unsigned)L), rb = (int)(blockIdx.x / (unsigned)L);
    const int col = kb * 128 + (threadIdx.x % 8) * 16;
    const long i0 = (long)rb * 128 + threadIdx.x / 8;
    uint4 v[4][2];
    float amax = 0.0f;
#pragma unroll
    for (int p = 0; p < 4; p++) {
        const long i = i0 + 32 * p;
        v[p][0] = v[p][1] = make_uint4(0, 0, 0, 0);
        if (i < rows && col < cols) {
            const uint4 *src = (const uint4 *)(x + i * cols + col);
            v[p][0] = __ldg(src), v[p][1] = __ldg(src + 1);
        }
    }
#pragma unroll
    for (int p = 0; p < 4; p++) amax = absmax8(v[p][1], absmax8(v[p][0], amax));
    const float s = quant07_scale(block_max(amax, scratch));
    const float inv = quant07_inverse(s);
#pragma unroll
    for (int p = 0; p < 4; p++) {
        const long i = i0 + 32 * p;
        if (i < rows && col < cols) *(uint4 *)(q + i * cols + col) = quantize16(v[p][0], v[p][1], inv);
    }
    if (threadIdx.x == 0) {
        scale[(long)rb * L4 + kb] = s;
        if (kb == L - 1)
            for (int k = L; k < L4; k++) scale[(long)rb * L4 + k] = 0.0f; /* the padding */
    }
}

/* ---- launchers -------------------------------------------------------------------------------- */

static int unsupported_shape(const bf16_t *x, int rows, int cols, const e4m3_t *q) {
    if (rows < 1 || cols < 16 || cols % 16)
        return launch_unsupported("cols %% 16 != 0 (or an empty matrix): rows of whole 16 bytes of e4m3");
    if (!aligned16(x) || !aligned16(q))
        return launch_unsupported("x and q must be 16-byte aligned");
    return LAUNCH_OK;
}

extern "C" int STAGE(quant07_tensor)(const bf16_t *x, int rows, int cols, e4m3_t *q,
                                     float *scale, cudaStream_t stream) {
    if (unsupported_shape(x, rows, cols, q)) return LAUNCH_UNSUPPORTED;
    static unsigned int amax_grid, apply_grid; /* resident blocks, found once */
    if (!amax_grid) {
        amax_grid = resident_blocks((const void *)quant07_tensor_amax_kernel, THREADS, 0);
        apply_grid = resident_blocks((const void *)quant07_tensor_apply_kernel, THREADS, 0);
    }
    const long n = (long)rows * cols;
    unsigned int g1 = blocks_for(n / 8, (long)UNROLL * THREADS), g2 = blocks_for(n / 16, THREADS);
    if (g1 > amax_grid) g1 = amax_grid;
    if (g2 > apply_grid) g2 = apply_grid;
    quant07_tensor_amax_kernel<<<g1, THREADS, 0, stream>>>((const uint4 *)x, n / 8, scale);
    quant07_tensor_apply_kernel<<<g2, THREADS, 0, stream>>>((const uint4 *)x, n / 16, scale,
                                                             (uint4 *)q);
    return LAUNCH_OK;
}

extern "C" int STAGE(quant07_1x128)(const bf16_t *x, int rows, int cols, e4m3_t *q, float *scale,
                                    cudaStream_t stream) {
    if (unsupported_shape(x, rows, cols, q)) return LAUNCH_UNSUPPORTED;
    const int L = (cols + 127) / 128;
    const long blocks = (long)blocks_for(rows, 32) * L;
    if (blocks > INT32_MAX) return launch_unsupported("more than 2^31 - 1 blocks of 32 x 128");
    quant07_1x128_kernel<<<(unsigned int)blocks, THREADS, 0, stream>>>(x, rows, cols, L, q, scale);
    return LAUNCH_OK;
}

extern "C" int STAGE(quant07_128x128)(const bf16_t *x, int rows, int cols, e4m3_t *q,
                                      float *scale, cudaStream_t stream) {
    if (unsupported_shape(x, rows, cols, q)) return LAUNCH_UNSUPPORTED;
    const int L = (cols + 127) / 128, L4 = (L + 3) / 4 * 4;
    const long blocks = (long)blocks_for(rows, 128) * L;
    if (blocks > INT32_MAX) return launch_unsupported("more than 2^31 - 1 blocks of 128 x 128");
    quant07_128x128_kernel<<<(unsigned int)blocks, THREADS, 0, stream>>>(x, rows, cols, L, L4, q,
                                                                         scale);
    return LAUNCH_OK;
}
