/* Stage 10 — one launch: per-block partials, finished by the last block to arrive.
 *
 * Change from stage 9: no second kernel. Each block reduces its share to one value and writes
 * it to partials[blockIdx.x]; thread 0 then makes that store visible to the whole GPU
 * (__threadfence) and takes a ticket from a counter in global memory (atomicAdd). The block
 * that draws the last ticket knows every other partial is already written, so it reads them
 * all, reduces them, writes the answer, and sets the counter back to 0 for the next launch.
 * No memset per launch, no host round trip, and no block ever waits for another (so any grid
 * size is safe, unlike a grid-wide barrier).
 *
 * Why it is faster: stage 9's second launch (a few microseconds of launch gap plus a one-block
 * kernel) is little beside a large read and much of a small one. Measured on the H100
 * (measured/h100.csv): at 2^28 elements, 1 GiB, stage 9 takes 346.5 us and this stage 344.2 us,
 * 0.7% less (CUB 349.6; on the H200, measured/h200.csv, this stage 235.0 us and CUB 238.1);
 * at 2^20 elements, 9.1 us against 7.5 us, 18% less. The main loop is stage 9's, tuned: the grid
 * is exactly the blocks that fit on the GPU at once (every block streams from the first
 * microsecond to the last), and each thread keeps 8 16-byte loads in flight. The loads are plain
 * __ldg: the cache hints ld.global.nc.L1::no_allocate.L2::256B (no L1 line for data read once,
 * 256-byte DRAM fetches; configs 2-11) measured the same on the H100 and 9% slower on the H200
 * at 2^28 (0.92x CUB against 1.01x; README, Tuning notes).
 *
 * The memory-ordering argument: thread 0 of each block writes its partial, then
 * __threadfence() (MEMBAR.GPU in the SASS) orders that write before its atomicAdd on the
 * counter. The last block sees the final count, so every partial store was ordered before it;
 * it fences again and reads the partials with __ldcg (from L2: L1 is not coherent across SMs).
 *
 * The same machinery computes a max: the operation is a template parameter, with its identity
 * (0 for +, -inf for max). Each operation has its own counter, so a sum and a max may follow
 * each other on a stream. Two launches of one operation must not run concurrently on
 * different streams: they would share the counter (CUB's two-kernel scheme has no such limit).
 *
 * Tuning: REDUCE_CONFIG=k (read once) picks one of the configurations in CONFIGS below. */
#include <stdint.h>
#include <stdlib.h>

#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "ptx/ld_global.cuh"

enum { OP_SUM = 0, OP_MAX = 1 };
enum { LOAD_LDG = 0, LOAD_NC_NOALLOC_L2_256 = 1 };
/* Which chunks a block takes: chunk c, c + gridDim.x, ... (interleaved, the blocks sweep the
 * array together), or one contiguous run of chunks per block (CUB's "even share"). */
enum { ORDER_INTERLEAVED = 0, ORDER_SEGMENTED = 1 };

template <int OP> __device__ __forceinline__ float combine(float a, float b) {
    return OP == OP_SUM ? a + b : fmaxf(a, b);
}
template <int OP> __device__ __forceinline__ float identity() {
    return OP == OP_SUM ? 0.0f : -INFINITY;
}
template <int OP> __device__ __forceinline__ float combine4(float a, float4 v) {
    return combine<OP>(a, combine<OP>(combine<OP>(v.x, v.y), combine<OP>(v.z, v.w)));
}
template <int OP> __device__ __forceinline__ float block_reduce(float v, float *scratch) {
    return OP == OP_SUM ? block_sum(v, scratch) : block_max(v, scratch);
}

template <int LOAD> __device__ __forceinline__ float4 load4(const float4 *p) {
    if (LOAD == LOAD_LDG) return __ldg(p);
    /* plain asm inside, not volatile: the compiler may schedule these loads like any other,
     * which is what lets it issue all UNROLL of them before the first add */
    return ld_global_nc_noalloc_l2_256(p);
}

/* Blocks finished so far in the current launch, one counter per operation. Zero when the
 * module loads; the last block of every launch puts it back to zero. */
static __device__ unsigned int g_blocks_done[2];

/* MIN_BLOCKS: blocks per SM the register allocation must allow (__launch_bounds__), i.e. at
 * most 65536 / (THREADS * MIN_BLOCKS) registers per thread. Too tight a budget and ptxas issues
 * the UNROLL loads in groups, each group waiting for the previous one's adds: fewer in flight. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
#define THREADS_PER_SM 1536 /* sm_86/87/89 hold 48 warps per SM */
#else
#define THREADS_PER_SM 2048 /* sm_80, sm_90 */
#endif
#define FITTING_BLOCKS(threads, blocks)                                                            \
    ((threads) * (blocks) <= THREADS_PER_SM ? (blocks) : THREADS_PER_SM / (threads))

template <int OP, int THREADS, int UNROLL, int LOAD, int MIN_BLOCKS, int ORDER>
static __global__ void __launch_bounds__(THREADS, FITTING_BLOCKS(THREADS, MIN_BLOCKS))
    single_pass_kernel(const float *__restrict__ in, long n, float *__restrict__ out,
                       float *partials) {
    __shared__ float scratch[32];
    __shared__ bool am_last;
    const float4 *in4 = (const float4 *)in;
    const long nvec = ((uintptr_t)in & 15) == 0 ? n / 4 : 0;
    const long chunk = (long)UNROLL * THREADS;
    const long nchunks = nvec / chunk;
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc[u] = identity<OP>();
    long c = blockIdx.x, c_end = nchunks, c_step = gridDim.x;
    if (ORDER == ORDER_SEGMENTED) {
        c = nchunks * blockIdx.x / gridDim.x;
        c_end = nchunks * (blockIdx.x + 1) / gridDim.x;
        c_step = 1;
    }
    for (; c < c_end; c += c_step) {
        const float4 *p = in4 + c * chunk + threadIdx.x;
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = load4<LOAD>(p + u * THREADS);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc[u] = combine4<OP>(acc[u], v[u]);
    }
    float a = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; u++) a = combine<OP>(a, acc[u]);
    /* The tail, fewer than one chunk of vectors, spread over the whole grid: a thread has at
     * most UNROLL of them (the grid has at least THREADS threads), so it issues all its loads
     * at once, predicated, as the main loop does. A plain loop here would wait for each load
     * before the next one, and at small n (one block, no whole chunk) the tail is everything. */
    const long tid = (long)blockIdx.x * THREADS + threadIdx.x, stride = (long)gridDim.x * THREADS;
    {
        const long first = nchunks * chunk + tid;
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const long i = first + u * stride;
            const float id = identity<OP>();
            v[u] = i < nvec ? load4<LOAD>(in4 + i) : make_float4(id, id, id, id);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) a = combine4<OP>(a, v[u]);
    }
    for (long i = 4 * nvec + tid; i < n; i += stride) a = combine<OP>(a, in[i]);
    a = block_reduce<OP>(a, scratch);

    if (gridDim.x == 1) { /* a small input: the only block is the last one */
        if (threadIdx.x == 0) *out = a;
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = a;
        __threadfence(); /* the partial is visible GPU-wide before the ticket is taken */
        unsigned int ticket = atomicAdd(&g_blocks_done[OP], 1u);
        am_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!am_last) return;
    __threadfence(); /* pairs with the writers' fences: read the partials after the ticket */
    float b = identity<OP>();
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += THREADS)
        b = combine<OP>(b, __ldcg(partials + i));
    b = block_reduce<OP>(b, scratch);
    if (threadIdx.x == 0) {
        *out = b;
        g_blocks_done[OP] = 0; /* ready for the next launch (kernel boundaries order this) */
    }
}

typedef void (*single_pass_fn)(const float *, long, float *, float *);

typedef struct {
    single_pass_fn sum, max;
    int threads, unroll;
} single_pass_config;

#define CONFIG(T, U, L, B, O)                                                                      \
    {single_pass_kernel<OP_SUM, T, U, L, B, O>, single_pass_kernel<OP_MAX, T, U, L, B, O>, T, U}
#define NC LOAD_NC_NOALLOC_L2_256
#define ILV ORDER_INTERLEAVED
#define SEG ORDER_SEGMENTED

/* REDUCE_CONFIG=k selects CONFIGS[k]: threads, 16-byte loads in flight per thread, load flavour,
 * blocks per SM the registers must allow, chunk order. The grid is always every block that fits
 * at once. */
static const single_pass_config CONFIGS[] = {
    CONFIG(256, 8, LOAD_LDG, 4, ILV), /* 0: the default: 32 warps/SM x 8 plain loads */
    CONFIG(256, 4, LOAD_LDG, 8, ILV), /* 1: 64 warps/SM x 4 plain loads */
    CONFIG(256, 8, NC, 4, ILV),       /* 2: config 0 with the cache hints */
    CONFIG(512, 4, NC, 4, ILV),       /* 3: bigger blocks (hints) */
    CONFIG(1024, 4, NC, 2, ILV),      /* 4: biggest blocks (hints) */
    CONFIG(256, 2, NC, 8, ILV),       /* 5: 64 warps/SM x 2 loads (hints) */
    CONFIG(128, 8, NC, 8, ILV),       /* 6: ~36 warps/SM x 8 loads, small blocks (hints) */
    CONFIG(512, 8, NC, 2, ILV),       /* 7: 32 warps/SM x 8 loads, big blocks (hints) */
    CONFIG(256, 4, NC, 8, ILV),       /* 8: config 1 with the cache hints (the default before) */
    CONFIG(256, 16, NC, 2, ILV),      /* 9: 16 warps/SM x 16 loads (hints) */
    CONFIG(256, 4, NC, 8, SEG),       /* 10: config 8, a contiguous run of chunks per block */
    CONFIG(256, 8, NC, 4, SEG),       /* 11: config 2, a contiguous run of chunks per block */
};
static_assert(sizeof CONFIGS / sizeof CONFIGS[0] == REDUCE_NCONFIGS, "update REDUCE_NCONFIGS");

/* The configuration (REDUCE_CONFIG, checked by the driver) and its grid, found once. */
static const single_pass_config *chosen(unsigned int *grid) {
    static const single_pass_config *cfg;
    static unsigned int resident;
    if (!cfg) {
        const char *env = getenv("REDUCE_CONFIG");
        int k = env ? atoi(env) : 0;
        cfg = &CONFIGS[k >= 0 && k < REDUCE_NCONFIGS ? k : 0];
        int device = 0, sms = 0, per_sm = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)cfg->sum, cfg->threads,
                                                      0);
        resident = (unsigned int)(sms * (per_sm > 0 ? per_sm : 1));
    }
    *grid = resident;
    return cfg;
}

static int launch(int op, const float *in, long n, float *out, float *partials,
                  cudaStream_t stream) {
    unsigned int grid;
    const single_pass_config *cfg = chosen(&grid);
    /* no more blocks than there are chunks of 4 * unroll * threads elements to hand out */
    unsigned int needed = blocks_for(n, 4L * cfg->unroll * cfg->threads);
    if (needed < grid) grid = needed;
    single_pass_fn k = op == OP_SUM ? cfg->sum : cfg->max;
    k<<<grid, cfg->threads, 0, stream>>>(in, n, out, partials);
    return LAUNCH_OK;
}

extern "C" int STAGE(reduce_single_pass)(const float *in, long n, float *out, float *scratch,
                                         cudaStream_t stream) {
    return launch(OP_SUM, in, n, out, scratch, stream);
}

extern "C" int STAGE(reduce_max_single_pass)(const float *in, long n, float *out, float *scratch,
                                             cudaStream_t stream) {
    return launch(OP_MAX, in, n, out, scratch, stream);
}
