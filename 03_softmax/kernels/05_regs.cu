/* Stage 5 — the row held in registers: read once, write once, 128-bit accesses, and a launch
 * shape chosen by the width.
 *
 * Change from stage 4: a thread loads its share of the row into a register array v[E] (E
 * elements, a compile-time constant), then everything — the max, the exponentials, the sum,
 * the scaling — happens in registers, and the row is written from there. DRAM sees one read
 * and one write per element: exactly the floor, the same bytes as a copy. The exponentials are
 * computed once and kept in v (stage 4 computed them twice).
 *
 * The accesses are 16-byte packs of V elements (4 floats or 8 halves: LDG.E.128 / STG.E.128).
 * Pack p of thread t holds elements (p * row_threads + t) * V ..., so at every p the threads
 * of a row read consecutive 16-byte pieces: coalesced, and all E / V loads of a thread are
 * independent, so they are in flight together (chapter 01, stage 5). A 16-byte pack needs the
 * row start aligned to 16 bytes, i.e. cols % V == 0; other widths use V = 1, still correct.
 *
 * The launch shape follows the width, because the row must fit in the threads' registers:
 *   cols <= 1024:  one warp per row, E = 1, 4, 8, 16 or 32 by width (capacity 32 * E); the
 *                  reductions are warp_max / warp_sum, no barrier; a block holds several rows.
 *                  Rows of at most 32 elements that are a multiple of 16 bytes get a group of
 *                  L = 32 / V lanes instead (8 for fp32, 4 for fp16), one 16-byte pack each:
 *                  one warp then holds 32 / L rows, and every load moves 16 bytes instead of
 *                  4 or 2. The reductions stay within the group (xor offsets below L).
 *   wider:         one block per row of ceil(cols / E) threads (rounded up to whole warps),
 *                  E = 16 by default; block_max / block_sum.
 * Each (E, V) pair is its own template instance, so v[] is indexed by constants only and stays
 * in registers: make test checks the SASS for LDL/STL (local memory) and LDG.E.128.
 * Rows wider than 1024 * 32 elements (512 * 32 when cols is not a multiple of V: the scalar
 * path needs more registers per thread) do not fit one block's registers: that is stage 6.
 *
 * Tuning without recompiling: SOFTMAX_CONFIG=N picks one of the presets in CONFIGS below
 * (read once, at the first launch). */
#include <stdlib.h>

#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

#define MAX_THREADS 1024

/* The presets: up to which width a row gets a warp, E for block-per-row rows, and how many
 * warp-rows share a block. */
typedef struct {
    long warp_max_cols;
    int block_elems;
    int warps_per_block;
} regs_config;

static const regs_config CONFIGS[] = {
    {1024, 16, 4}, /* 0: default */
    {1024, 8, 4},  /* 1: more threads per wide row, fewer registers each */
    {1024, 32, 4}, /* 2: fewer, fatter threads per wide row */
    {512, 16, 4},  /* 3: block per row from 513 elements */
    {1024, 16, 8}, /* 4: 8 warp-rows per block */
    {1024, 16, 2}, /* 5: 2 warp-rows per block */
};

/* One access per element (V = 1) needs more registers for addresses: 512 threads at most,
 * so that ptxas may use up to 128 registers per thread without spilling. */
#define MAX_THREADS_V1 512

/* Max and sum over groups of L lanes (L a power of two <= 32): xor offsets below L never
 * leave the group. L = 32 is warp_max / warp_sum. */
template <int L> __device__ __forceinline__ float group_max(float v) {
#pragma unroll
    for (int offset = L / 2; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

template <int L> __device__ __forceinline__ float group_sum(float v) {
#pragma unroll
    for (int offset = L / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

/* WARP_ROW: a row per group of L lanes (L = 32: a warp per row); else a block per row. */
template <typename T, int E, int V, bool WARP_ROW, int L = 32>
static __global__ void __launch_bounds__(V == 1 ? MAX_THREADS_V1 : MAX_THREADS, 1)
    softmax_regs_kernel(const T *__restrict__ x, T *__restrict__ y, long rows, long cols) {
    static_assert(E % V == 0, "a thread holds whole packs");
    static_assert(L == 32 || WARP_ROW, "groups of lanes only for warp rows");
    constexpr int PACKS = E / V;
    __shared__ float scratch[32];
    long row;
    int t, row_threads;
    bool live = true; /* false: a group past the last row, kept only for the shuffles */
    if (WARP_ROW) {
        const long warp = blockIdx.x * (long)(blockDim.x >> 5) + (threadIdx.x >> 5);
        row = warp * (32 / L) + (threadIdx.x & 31) / L;
        if (warp * (32 / L) >= rows) return; /* whole warps leave: shuffles stay full-mask */
        live = row < rows;                    /* a partial last warp keeps all its lanes */
        t = threadIdx.x & (L - 1);
        row_threads = L;
    } else {
        row = blockIdx.x;
        t = threadIdx.x;
        row_threads = blockDim.x;
    }
    const T *in = x + row * cols;
    T *out = y + row * cols;

    /* Load every pack first, so all E / V loads are in flight before any is used. Offsets
     * within the row are 32-bit (cols <= 32768): less address arithmetic, fewer registers. */
    const int first = t * V, step = row_threads * V, n = live ? (int)cols : 0;
    float v[E];
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int j = first + p * step;
        if (j < n) {
            load_pack<T, V>(in + j, &v[p * V]);
        } else {
#pragma unroll
            for (int i = 0; i < V; i++) v[p * V + i] = -INFINITY; /* exp(-inf - m) = 0 */
        }
    }

    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < E; i++) m = fmaxf(m, v[i]);
    m = WARP_ROW ? group_max<L>(m) : block_max(m, scratch);

    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < E; i++) {
        v[i] = __expf(v[i] - m);
        sum += v[i];
    }
    float inv = 1.0f / (WARP_ROW ? group_sum<L>(sum) : block_sum(sum, scratch));

#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int j = first + p * step;
        if (j < n) {
#pragma unroll
            for (int i = 0; i < V; i++) v[p * V + i] *= inv;
            store_pack<T, V>(out + j, &v[p * V]);
        }
    }
}

template <typename T, int E, int V, bool WARP_ROW, int L = 32>
static void launch_one(const T *x, T *y, long rows, long cols, unsigned int blocks, int threads,
                       cudaStream_t stream) {
    softmax_regs_kernel<T, E, V, WARP_ROW, L><<<blocks, threads, 0, stream>>>(x, y, rows, cols);
}

/* 16-byte packs when every row start is 16-byte aligned, else one element at a time. */
template <typename T, int E, bool WARP_ROW>
static void launch_e(const T *x, T *y, long rows, long cols, unsigned int blocks, int threads,
                     cudaStream_t stream) {
    constexpr int VMAX = 16 / sizeof(T);
    constexpr int V = E < VMAX ? E : VMAX;
    if (cols % V == 0) launch_one<T, E, V, WARP_ROW>(x, y, rows, cols, blocks, threads, stream);
    else launch_one<T, E, 1, WARP_ROW>(x, y, rows, cols, blocks, threads, stream);
}

static const regs_config *config(void) {
    static int chosen = -1;
    if (chosen < 0) {
        const char *env = getenv("SOFTMAX_CONFIG");
        int c = env ? atoi(env) : 0;
        int n = (int)(sizeof CONFIGS / sizeof CONFIGS[0]);
        chosen = c >= 0 && c < n ? c : 0;
    }
    return &CONFIGS[chosen];
}

template <typename T>
static int launch(const void *xv, void *yv, long rows, long cols, cudaStream_t stream) {
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    const regs_config *c = config();
    if (cols <= c->warp_max_cols) {
        int threads = 32 * c->warps_per_block;
        unsigned int blocks = blocks_for(rows, c->warps_per_block);
        constexpr int VMAX = 16 / sizeof(T), L = 32 / VMAX;
        if (cols <= 32 && cols % VMAX == 0) { /* a group of L lanes per row, a pack each */
            blocks = blocks_for(rows, (long)c->warps_per_block * (32 / L));
            launch_one<T, VMAX, VMAX, true, L>(x, y, rows, cols, blocks, threads, stream);
        } else if (cols <= 32) launch_e<T, 1, true>(x, y, rows, cols, blocks, threads, stream);
        else if (cols <= 128) launch_e<T, 4, true>(x, y, rows, cols, blocks, threads, stream);
        else if (cols <= 256) launch_e<T, 8, true>(x, y, rows, cols, blocks, threads, stream);
        else if (cols <= 512) launch_e<T, 16, true>(x, y, rows, cols, blocks, threads, stream);
        else launch_e<T, 32, true>(x, y, rows, cols, blocks, threads, stream);
        return LAUNCH_OK;
    }
    /* Block per row: the preset's E, or a larger one if the row needs too many threads. */
    const long max_threads = cols % (16 / sizeof(T)) == 0 ? MAX_THREADS : MAX_THREADS_V1;
    int e = c->block_elems;
    while (e < 32 && (cols + e - 1) / e > max_threads) e *= 2;
    if ((cols + e - 1) / e > max_threads)
        return launch_unsupported("%ld columns need more than %ld threads at %d per thread", cols,
                                  max_threads, e);
    int threads = (int)(((cols + e - 1) / e + 31) / 32 * 32);
    unsigned int blocks = (unsigned int)rows;
    if (e == 8) launch_e<T, 8, false>(x, y, rows, cols, blocks, threads, stream);
    else if (e == 16) launch_e<T, 16, false>(x, y, rows, cols, blocks, threads, stream);
    else launch_e<T, 32, false>(x, y, rows, cols, blocks, threads, stream);
    return LAUNCH_OK;
}

extern "C" int STAGE(softmax_regs)(const void *x, void *y, long rows, long cols,
                                   softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16) return launch<__half>(x, y, rows, cols, stream);
    return launch<float>(x, y, rows, cols, stream);
}
