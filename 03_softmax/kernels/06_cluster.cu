/* Stage 6 — very wide rows: a cluster of blocks shares one row (sm_90), or two kernels
 * elsewhere.
 *
 * Stage 5 holds a row in one block's registers, which stops at 1024 threads x 32 elements =
 * 32768 elements: a 65536-wide fp32 row is 256 KB, the whole register file of an SM. Giving
 * such a row to one block would also leave one row per SM in flight at a time. So the row is
 * cut into N slices, one block each, and the blocks must agree on the row's max and sum.
 *
 * On Hopper (sm_90) the N blocks form a thread-block cluster: they run at the same time on SMs
 * of one GPC, and each can read the others' shared memory (distributed shared memory, DSMEM).
 * Each block holds its slice in registers exactly as stage 5 does, reduces it to a partial
 * pair (m_b, d_b = sum over the slice of exp(x - m_b)), and publishes the pair in its own
 * shared memory. After one cluster barrier, lane l of every warp reads block l's pair through
 * cluster.map_shared_rank and the warp combines them as stage 4 combines threads' pairs:
 *     M = max_b m_b,   D = sum_b d_b * exp(m_b - M),   y = exp(x - m_b) * exp(m_b - M) / D.
 * The row is still read once and written once. A block must not exit while another may still
 * read its shared memory, so each block signals "done reading" (a relaxed barrier.cluster
 * arrive) right after the exchange, writes its outputs, and waits for the others
 * (cluster.barrier_wait) only at the end: the second barrier costs nothing in the middle.
 * In the SASS: UCGABAR_ARV / UCGABAR_WAIT are the cluster barrier; the remote reads are
 * generic loads (LD.E) of a mapped shared address.
 *
 * Elsewhere (sm_80, sm_89: no clusters) the fallback, softmax_split, is two kernels: the first
 * writes each slice's (m_b, d_b) to a small workspace in global memory, the second combines the
 * row's N pairs, reads its slice again and writes y. The second read costs a third transfer
 * (read, read, write): at best about 2/3 of the floor's throughput, which is what the cluster
 * saves. The row still checks against the same floor of one read and one write.
 *
 * Tuning without recompiling: SOFTMAX_CLUSTER_CONFIG=N picks a preset from PLANS below (the
 * slice each block aims for, elements per thread, and the most blocks per row); both launchers
 * read it once. */
#include <stdlib.h>

#include <cooperative_groups.h>

#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

namespace cg = cooperative_groups;

#define MAX_THREADS 1024
#define MAX_THREADS_V1 512 /* one access per element: more address registers (stage 5) */

typedef struct {
    long slice_target; /* elements per block the launcher aims for */
    int elems;         /* E: elements per thread (raised to 32 if a slice needs > 1024 threads) */
    int max_blocks;    /* the most blocks per row (a cluster of more than 8 is non-portable) */
} cluster_plan;

static const cluster_plan PLANS[] = {
    {8192, 32, 8},  /* 0: default: the best of this table at 16K and 64K columns (H100 sweep) */
    {4096, 16, 8},  /* 1: smaller slices, more blocks per row */
    {16384, 32, 8}, /* 2: bigger slices, fatter threads */
    {8192, 16, 8},  /* 3: thinner threads */
    {4096, 16, 16}, /* 4: up to 16 blocks per row (non-portable cluster size) */
    {2048, 16, 8},  /* 5 */
};

/* The slice a block holds, in registers, as stage 5 holds a row: pack p of thread t is
 * elements start + (p * blockDim + t) * V ...; packs at or past `end` are -inf. */
template <typename T, int E, int V>
__device__ __forceinline__ void load_slice(const T *in, long start, long end, float *v) {
    /* 32-bit offsets within the slice keep the address arithmetic small */
    const T *base = in + start;
    const int first = threadIdx.x * V, step = blockDim.x * V, n = (int)(end - start);
#pragma unroll
    for (int p = 0; p < E / V; p++) {
        int j = first + p * step;
        if (j < n) {
            load_pack<T, V>(base + j, &v[p * V]);
        } else {
#pragma unroll
            for (int i = 0; i < V; i++) v[p * V + i] = -INFINITY;
        }
    }
}

template <typename T, int E, int V>
__device__ __forceinline__ void store_slice(T *out, long start, long end, float *v, float scale) {
    T *base = out + start;
    const int first = threadIdx.x * V, step = blockDim.x * V, n = (int)(end - start);
#pragma unroll
    for (int p = 0; p < E / V; p++) {
        int j = first + p * step;
        if (j < n) {
#pragma unroll
            for (int i = 0; i < V; i++) v[p * V + i] *= scale;
            store_pack<T, V>(base + j, &v[p * V]);
        }
    }
}

/* The slice's partial pair: *m_out = its max, returns sum exp(v - max), and leaves
 * v[i] = exp(v[i] - max). An empty slice (the last block of a short row) gives (-inf, 0). */
template <int E>
__device__ __forceinline__ float slice_stats(float *v, float *scratch, float *m_out) {
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < E; i++) m = fmaxf(m, v[i]);
    m = block_max(m, scratch);
    const float base = m == -INFINITY ? 0.0f : m; /* keeps exp(-inf - -inf) = NaN away */
    float d = 0.0f;
#pragma unroll
    for (int i = 0; i < E; i++) {
        v[i] = __expf(v[i] - base);
        d += v[i];
    }
    *m_out = m;
    return block_sum(d, scratch);
}

/* Combine the row's n partial pairs, lane l holding pair l (lanes >= n: (-inf, 0)), into the
 * row's max M; returns the row's sum D. Every lane of the warp gets both. */
__device__ __forceinline__ float combine_pairs(float m, float d, float *row_max) {
    float big = warp_max(m);
    *row_max = big;
    return warp_sum(d == 0.0f ? 0.0f : d * __expf(m - big));
}

template <typename T, int E, int V>
static __global__ void __launch_bounds__(V == 1 ? MAX_THREADS_V1 : MAX_THREADS, 1)
    softmax_cluster_kernel(const T *__restrict__ x, T *__restrict__ y, long cols, long slice) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ float scratch[32];
    __shared__ float pair[2]; /* this block's (m_b, d_b), read by the whole cluster */
    cg::cluster_group cluster = cg::this_cluster();
    const int nblocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    const long row = blockIdx.x / nblocks; /* a cluster is nblocks consecutive blocks */
    const long start = rank * slice, end = start + slice < cols ? start + slice : cols;
    const T *in = x + row * cols;
    T *out = y + row * cols;

    float v[E];
    load_slice<T, E, V>(in, start, end, v);
    float m_b;
    float d_b = slice_stats<E>(v, scratch, &m_b);
    if (threadIdx.x == 0) pair[0] = m_b, pair[1] = d_b;
    cluster.sync(); /* every block's pair is written and visible to the cluster */

    const int lane = threadIdx.x & 31;
    float m = -INFINITY, d = 0.0f;
    if (lane < nblocks) {
        const float *remote = cluster.map_shared_rank(pair, lane);
        m = remote[0];
        d = remote[1];
    }
    float row_max;
    float row_sum = combine_pairs(m, d, &row_max);
    /* Done reading the other blocks' shared memory (the reads completed: their values were
     * used above). Relaxed: nothing this block wrote needs to become visible, so no fence. */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    float scale = m_b == -INFINITY ? 0.0f : __expf(m_b - row_max) / row_sum;
    store_slice<T, E, V>(out, start, end, v, scale);
    cluster.barrier_wait(); /* nobody exits while a block of the cluster may still read it */
#endif
}

/* The fallback's first kernel: each block's pair to the workspace, pairs[blockIdx.x]. */
template <typename T, int E, int V>
static __global__ void __launch_bounds__(V == 1 ? MAX_THREADS_V1 : MAX_THREADS, 1)
    softmax_split_stats_kernel(const T *__restrict__ x, float2 *__restrict__ pairs, long cols,
                               long slice, int nblocks) {
    __shared__ float scratch[32];
    const long row = blockIdx.x / nblocks;
    const long start = (blockIdx.x % nblocks) * slice;
    const long end = start + slice < cols ? start + slice : cols;
    float v[E];
    load_slice<T, E, V>(x + row * cols, start, end, v);
    float m_b;
    float d_b = slice_stats<E>(v, scratch, &m_b);
    if (threadIdx.x == 0) pairs[blockIdx.x] = make_float2(m_b, d_b);
}

/* The fallback's second kernel: combine the row's pairs, read the slice again, write y. */
template <typename T, int E, int V>
static __global__ void __launch_bounds__(V == 1 ? MAX_THREADS_V1 : MAX_THREADS, 1)
    softmax_split_finish_kernel(const T *__restrict__ x, const float2 *__restrict__ pairs,
                                T *__restrict__ y, long cols, long slice, int nblocks) {
    const long row = blockIdx.x / nblocks;
    const long start = (blockIdx.x % nblocks) * slice;
    const long end = start + slice < cols ? start + slice : cols;
    float v[E];
    load_slice<T, E, V>(x + row * cols, start, end, v); /* in flight while the pairs arrive */
    const int lane = threadIdx.x & 31;
    float m = -INFINITY, d = 0.0f;
    if (lane < nblocks) {
        float2 p = pairs[row * nblocks + lane];
        m = p.x, d = p.y;
    }
    float row_max;
    float inv = 1.0f / combine_pairs(m, d, &row_max);
#pragma unroll
    for (int i = 0; i < E; i++) v[i] = __expf(v[i] - row_max);
    store_slice<T, E, V>(y + row * cols, start, end, v, inv);
}

/* ---- host side: how a row is cut ----------------------------------------------------------- */
typedef struct {
    int nblocks; /* N: blocks per row */
    long slice;  /* elements per block (a multiple of V) */
    int threads; /* per block, whole warps */
    int elems;   /* E */
    bool vec;    /* 16-byte packs (cols a multiple of 16 / sizeof(T)) */
} row_cut;

static const cluster_plan *plan(void) {
    static int chosen = -1;
    if (chosen < 0) {
        const char *env = getenv("SOFTMAX_CLUSTER_CONFIG");
        int c = env ? atoi(env) : 0;
        int n = (int)(sizeof PLANS / sizeof PLANS[0]);
        chosen = c >= 0 && c < n ? c : 0;
    }
    return &PLANS[chosen];
}

/* False if the row is too wide for the plan (supports() keeps such rows away). */
static bool cut_row(long cols, int elem_bytes, row_cut *c) {
    const cluster_plan *p = plan();
    int vmax = 16 / elem_bytes;
    c->vec = cols % vmax == 0;
    long v = c->vec ? vmax : 1;
    long n = (cols + p->slice_target - 1) / p->slice_target;
    c->nblocks = (int)(n < 1 ? 1 : n > p->max_blocks ? p->max_blocks : n);
    c->slice = ((cols + c->nblocks - 1) / c->nblocks + v - 1) / v * v;
    c->elems = p->elems;
    const long max_threads = c->vec ? MAX_THREADS : MAX_THREADS_V1;
    long threads;
    while ((threads = (c->slice + c->elems - 1) / c->elems) > max_threads && c->elems < 32)
        c->elems *= 2;
    c->threads = (int)((threads + 31) / 32 * 32);
    return threads <= max_threads;
}

template <typename T, int E, int V>
static void launch_cluster(const T *x, T *y, long rows, long cols, const row_cut *c,
                           cudaStream_t stream) {
    void (*kernel)(const T *, T *, long, long) = softmax_cluster_kernel<T, E, V>;
    if (c->nblocks > 8)
        cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeNonPortableClusterSizeAllowed,
                             1);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)c->nblocks;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(rows * c->nblocks));
    cfg.blockDim = dim3((unsigned)c->threads);
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, kernel, x, y, cols, c->slice); /* errors: cudaGetLastError */
}

/* A workspace for the fallback's pairs, grown when needed and freed at exit. */
static float2 *g_pairs;
static long g_pairs_len;
static void free_pairs(void) { cudaFree(g_pairs); }

template <typename T, int E, int V>
static void launch_split(const T *x, T *y, long rows, long cols, const row_cut *c,
                         cudaStream_t stream) {
    long need = rows * c->nblocks;
    if (need > g_pairs_len) {
        static bool registered;
        if (!registered) atexit(free_pairs), registered = true;
        cudaFree(g_pairs);
        if (cudaMalloc(&g_pairs, (size_t)need * sizeof(float2)) != cudaSuccess) {
            g_pairs = NULL, g_pairs_len = 0;
            return; /* the error stays for cudaGetLastError */
        }
        g_pairs_len = need;
    }
    unsigned int blocks = (unsigned int)need;
    softmax_split_stats_kernel<T, E, V><<<blocks, c->threads, 0, stream>>>(x, g_pairs, cols,
                                                                           c->slice, c->nblocks);
    softmax_split_finish_kernel<T, E, V><<<blocks, c->threads, 0, stream>>>(
        x, g_pairs, y, cols, c->slice, c->nblocks);
}

/* Instantiate for (T, E, V) and call the cluster launcher or the split one. */
template <typename T, int E, int V>
static void launch_tev(bool cluster, const void *x, void *y, long rows, long cols,
                       const row_cut *c, cudaStream_t stream) {
    if (cluster) launch_cluster<T, E, V>((const T *)x, (T *)y, rows, cols, c, stream);
    else launch_split<T, E, V>((const T *)x, (T *)y, rows, cols, c, stream);
}

template <typename T>
static int launch(bool cluster, const void *x, void *y, long rows, long cols,
                  cudaStream_t stream) {
    row_cut c;
    if (!cut_row(cols, (int)sizeof(T), &c)) return SOFTMAX_UNSUPPORTED;
    constexpr int VMAX = 16 / sizeof(T);
    if (c.elems == 16) {
        if (c.vec) launch_tev<T, 16, VMAX>(cluster, x, y, rows, cols, &c, stream);
        else launch_tev<T, 16, 1>(cluster, x, y, rows, cols, &c, stream);
    } else {
        if (c.vec) launch_tev<T, 32, VMAX>(cluster, x, y, rows, cols, &c, stream);
        else launch_tev<T, 32, 1>(cluster, x, y, rows, cols, &c, stream);
    }
    return LAUNCH_OK;
}

extern "C" int STAGE(softmax_cluster)(const void *x, void *y, long rows, long cols,
                                      softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16) return launch<__half>(true, x, y, rows, cols, stream);
    return launch<float>(true, x, y, rows, cols, stream);
}

extern "C" int STAGE(softmax_split)(const void *x, void *y, long rows, long cols,
                                    softmax_dtype dtype, cudaStream_t stream) {
    if (dtype == SOFTMAX_F16) return launch<__half>(false, x, y, rows, cols, stream);
    return launch<float>(false, x, y, rows, cols, stream);
}
