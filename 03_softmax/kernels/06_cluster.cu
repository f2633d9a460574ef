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
 * slice each block aims for, elements per thread, the most blocks per row, and whether the
 * cluster kernel keeps fp16 slices packed two halves per register); both launchers read it
 * once. */
#include <stdlib.h>

#include <cooperative_groups.h>

#include "stage.h"
#include "launch.cuh"
#include "softmax.h"
#include "reduce.cuh"
#include "ptx/cluster.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"

namespace cg = cooperative_groups;

#define MAX_THREADS 1024
#define MAX_THREADS_V1 512 /* one access per element: more address registers (stage 5) */

typedef struct {
    long slice_target; /* elements per block the launcher aims for */
    int elems;         /* E: elements per thread (raised to 32 if a slice needs > 1024 threads) */
    int max_blocks;    /* the most blocks per row (a cluster of more than 8 is non-portable) */
    bool pack;         /* fp16, cluster kernel, widths a multiple of 8: two halves a register */
    bool push;         /* cluster kernel, 16-byte packs: pairs pushed (st.async + mbarrier) */
} cluster_plan;

static const cluster_plan PLANS[] = {
    /* 0: default: the best of 0-12 at 16K and 64K columns in the H100 sweep (it was 11) */
    {8192, 32, 8, false, true},
    {4096, 16, 8, false, false},  /* 1: smaller slices, more blocks per row */
    {16384, 32, 8, false, false}, /* 2: bigger slices, fatter threads */
    {8192, 16, 8, false, false},  /* 3: thinner threads */
    {4096, 16, 16, false, false}, /* 4: up to 16 blocks per row (non-portable cluster size) */
    {2048, 16, 8, false, false},  /* 5 */
    /* Packed presets: for fp16 rows (cluster kernel, cols a multiple of 8) the slice and E
     * count 32-bit registers, each holding two halves as loaded, so the slice and E in halves
     * are twice the numbers here: the same threads and data registers per thread as the fp32
     * row of the same preset, twice the elements (the same bytes) per block. fp32 rows, odd
     * fp16 widths and the split fallback ignore `pack`: for them 6 is 11, 7 is 2, 9 is 3 (8 is
     * new: {4096, 32, 8}). Rows of 65536 halves, blocks per SM as the registers allow: */
    {8192, 32, 8, true, false},  /* 6: 4 blocks x 256 threads x 64 halves (4 of 32 KB an SM) */
    {16384, 32, 8, true, false}, /* 7: 2 blocks x 512 threads x 64 halves (2 of 64 KB) */
    {4096, 32, 8, true, false},  /* 8: 8 blocks x 128 threads x 64 halves (8 of 16 KB) */
    {8192, 16, 8, true, false},  /* 9: 4 blocks x 512 threads x 32 halves (2 of 32 KB) */
    /* Push presets: the exchange by st.async into every block's shared memory (see
     * push_exchange), for rows whose width is a multiple of 16 bytes; otherwise as without. */
    {8192, 32, 8, true, true},  /* 10: 6, pushed */
    {8192, 32, 8, false, false}, /* 11: 0 without the push: the pull exchange (fp32 too) */
    {4096, 32, 8, true, true},  /* 12: 8, pushed */
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

/* Packed fp16 (the `pack` presets): the slice stays in registers as loaded, two halves per
 * 32-bit register (half of the registers of fp32 values), so a block holds twice the elements
 * for the same registers: in fp16 a block's fixed costs (two block reductions, the cluster
 * barrier, the exchange) are then paid per 2 bytes x 2E instead of per 2 bytes x E. The price
 * is one more exp per element (the slice's exp(x - m_b) is computed for the sum and again at
 * the store, instead of being kept), cheap next to the memory time. w holds E halves: pack p
 * of thread t is elements (p * blockDim + t) * 8 ... + 7 in w[4p .. 4p + 3]. */
#define NEG_INF_H2 0xfc00fc00u /* two fp16 -inf */

template <int E>
__device__ __forceinline__ void load_slice_h2(const __half *in, long start, long end,
                                              unsigned int *w) {
    const __half *base = in + start;
    const int first = threadIdx.x * 8, step = blockDim.x * 8, n = (int)(end - start);
#pragma unroll
    for (int p = 0; p < E / 8; p++) {
        int j = first + p * step;
        if (j < n) {
            uint4 r = *(const uint4 *)(base + j);
            w[4 * p] = r.x, w[4 * p + 1] = r.y, w[4 * p + 2] = r.z, w[4 * p + 3] = r.w;
        } else {
            w[4 * p] = w[4 * p + 1] = w[4 * p + 2] = w[4 * p + 3] = NEG_INF_H2;
        }
    }
}

__device__ __forceinline__ __half2 as_h2(unsigned int u) {
    __half2 h;
    *(unsigned int *)&h = u;
    return h;
}

/* As slice_stats, w left as it is. The max is exact in fp16 (HMNMX2), the sum in fp32. */
template <int E>
__device__ __forceinline__ float slice_stats_h2(const unsigned int *w, float *scratch,
                                               float *m_out) {
    __half2 mh = as_h2(NEG_INF_H2);
#pragma unroll
    for (int i = 0; i < E / 2; i++) mh = __hmax2(mh, as_h2(w[i]));
    float2 mf = __half22float2(mh);
    float m = block_max(fmaxf(mf.x, mf.y), scratch);
    const float base = m == -INFINITY ? 0.0f : m;
    float d0 = 0.0f, d1 = 0.0f;
#pragma unroll
    for (int i = 0; i < E / 2; i++) {
        float2 f = __half22float2(as_h2(w[i]));
        d0 += __expf(f.x - base);
        d1 += __expf(f.y - base);
    }
    *m_out = m;
    return block_sum(d0 + d1, scratch);
}

/* y = exp(x - base) * scale for the in-range packs, 16 bytes a store. */
template <int E>
__device__ __forceinline__ void store_slice_h2(__half *out, long start, long end,
                                               const unsigned int *w, float base, float scale) {
    __half *o = out + start;
    const int first = threadIdx.x * 8, step = blockDim.x * 8, n = (int)(end - start);
#pragma unroll
    for (int p = 0; p < E / 8; p++) {
        int j = first + p * step;
        if (j < n) {
            unsigned int r[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float2 f = __half22float2(as_h2(w[4 * p + i]));
                __half2 h = __floats2half2_rn(__expf(f.x - base) * scale,
                                              __expf(f.y - base) * scale);
                r[i] = *(unsigned int *)&h;
            }
            *(uint4 *)(o + j) = make_uint4(r[0], r[1], r[2], r[3]);
        }
    }
}

/* The push exchange (the `push` presets), instead of cluster.sync + DSMEM reads: each block
 * sends its pair into slot `rank` of every block's `pairs` with st.async, whose completion
 * counts bytes on the receiver's mbarrier (expecting 8 bytes from each of the N blocks); a
 * block waits on its own mbarrier and reads the N pairs from its own shared memory.
 * Ordering, step by step:
 *  - the mbarrier must be initialized before any block sends to it: thread 0 inits it, makes
 *    the init visible to the cluster (fence.mbarrier_init.release.cluster), and every thread
 *    then arrives (relaxed: the fence already orders the init) at a cluster barrier at the
 *    kernel's start; a block waits on that barrier only before it sends, after its loads and
 *    block reductions, so by then it costs nothing;
 *  - the expected bytes: thread 0 arrives with expect_tx only after that wait, not next to
 *    the init. (Right after the init, compute-sanitizer's racecheck flagged init and arrive
 *    as a warp-level hazard; after the wait it reports nothing.)
 *  - the pairs: st.async's complete-tx releases at cluster scope, and the waiting threads'
 *    mbarrier.try_wait acquires at cluster scope, so the phase completing (all N x 8 bytes
 *    arrived) makes every pair visible to every thread of the receiving block;
 *  - exit: every write into a block lands before that block's wait ends; the exit barrier is
 *    kept anyway (arrive after the exchange, wait after the stores, as in the pull exchange),
 *    so that no block exits while one of its own st.async may still be on its way.
 * No release at the cluster barrier, so no MEMBAR.ALL.GPU; in the SASS: SYNCS.EXCH.64 (init),
 * SYNCS.ARRIVE.TRANS64 (expect), STAS.64 (st.async), SYNCS.PHASECHK.TRANS64.TRYWAIT.
 * The PTX itself is in common/ptx/: mbarrier.cuh, fence.cuh, cluster.cuh. */
__device__ __forceinline__ void push_init(unsigned int bar) {
    if (threadIdx.x == 0) {
        mbarrier_init(bar, 1);
        fence_mbarrier_init_cluster();
    }
    __syncthreads(); /* the init before any thread of this block touches the mbarrier */
    cluster_arrive_relaxed();
}

/* Thread r < N sends (m, d) into slot `rank` of block r; then every thread waits for its own
 * block's N pairs. */
__device__ __forceinline__ void push_exchange(unsigned int bar, float2 *pairs, int rank,
                                              int nblocks, float m, float d) {
    cluster_wait(); /* every mbarrier is ready */
    /* The one arrival, and the bytes still to come: the phase ends when all have come. Another
     * block's bytes may land before this (its wait may end first): the tx-count then goes
     * negative for a while, which the mbarrier allows, and the phase still cannot end before
     * this arrival. */
    if (threadIdx.x == 0) mbarrier_arrive_expect_tx(bar, nblocks * 8);
    if ((int)threadIdx.x < nblocks) {
        unsigned int to = threadIdx.x;
        unsigned int slot = mapa_shared(smem_addr(&pairs[rank]), to);
        unsigned int rbar = mapa_shared(bar, to);
        st_async_v2_f32(slot, m, d, rbar);
    }
    mbarrier_wait_parity_cluster(bar, 0);
}

/* PACK: the slice held as packed halves (T = __half, V = 8; E counts halves). PUSH: the push
 * exchange above instead of cluster.sync and DSMEM reads. */
template <typename T, int E, int V, bool PACK, bool PUSH>
static __global__ void __launch_bounds__(V == 1 ? MAX_THREADS_V1 : MAX_THREADS, 1)
    softmax_cluster_kernel(const T *__restrict__ x, T *__restrict__ y, long cols, long slice) {
    static_assert(!PACK || (sizeof(T) == 2 && V == 8), "packed: fp16 in 16-byte packs");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ float scratch[32];
    __shared__ float pair[2]; /* this block's (m_b, d_b), read by the whole cluster */
    __shared__ float2 pairs[16];             /* push: every block's pair, slot = its rank */
    __shared__ unsigned long long push_bar; /* push: the mbarrier counting their bytes */
    cg::cluster_group cluster = cg::this_cluster();
    const int nblocks = (int)cluster.num_blocks(), rank = (int)cluster.block_rank();
    /* A row that fits one block needs no exchange (and no mbarrier). */
    const bool alone = nblocks == 1;
    if constexpr (PUSH)
        if (!alone) push_init(smem_addr(&push_bar));
    const long row = blockIdx.x / nblocks; /* a cluster is nblocks consecutive blocks */
    const long start = rank * slice, end = start + slice < cols ? start + slice : cols;
    const T *in = x + row * cols;
    T *out = y + row * cols;

    float v[PACK ? 1 : E];          /* unpacked: the slice as fp32 */
    unsigned int w[PACK ? E / 2 : 1]; /* packed: two halves a register */
    float m_b, d_b;
    if constexpr (PACK) {
        load_slice_h2<E>((const __half *)in, start, end, w);
        d_b = slice_stats_h2<E>(w, scratch, &m_b);
    } else {
        load_slice<T, E, V>(in, start, end, v);
        d_b = slice_stats<E>(v, scratch, &m_b);
    }
    const int lane = threadIdx.x & 31;
    float m = -INFINITY, d = 0.0f;
    if constexpr (PUSH) {
        if (alone) {
            if (lane == 0) m = m_b, d = d_b;
        } else {
            push_exchange(smem_addr(&push_bar), pairs, rank, nblocks, m_b, d_b);
            if (lane < nblocks) m = pairs[lane].x, d = pairs[lane].y;
        }
    } else {
        if (threadIdx.x == 0) pair[0] = m_b, pair[1] = d_b;
        cluster.sync(); /* every block's pair is written and visible to the cluster */
        if (lane < nblocks) {
            const float *remote = cluster.map_shared_rank(pair, lane);
            m = remote[0];
            d = remote[1];
        }
    }
    float row_max;
    float row_sum = combine_pairs(m, d, &row_max);
    /* Done reading the other blocks' shared memory (pull: the reads completed, their values
     * were used above; push: every pair sent to this block has arrived). Relaxed: nothing
     * this block wrote needs to become visible. */
    cluster_arrive_relaxed();
    float scale = m_b == -INFINITY ? 0.0f : __expf(m_b - row_max) / row_sum;
    if constexpr (PACK)
        store_slice_h2<E>((__half *)out, start, end, w, m_b == -INFINITY ? 0.0f : m_b, scale);
    else store_slice<T, E, V>(out, start, end, v, scale);
    cluster.barrier_wait(); /* nobody exits while a block of the cluster may still use it */
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
    bool pack;   /* halves held two per register (slice and E in halves, E up to 64) */
    bool push;   /* the push exchange (only with vec) */
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

/* False if the row is too wide for the plan (supports() keeps such rows away). can_pack: the
 * launcher has a packed kernel (the cluster one). */
static bool cut_row(long cols, int elem_bytes, bool can_pack, row_cut *c) {
    const cluster_plan *p = plan();
    int vmax = 16 / elem_bytes;
    c->vec = cols % vmax == 0;
    c->pack = p->pack && can_pack && elem_bytes == 2 && c->vec;
    c->push = p->push && can_pack && c->vec;
    const int per_reg = c->pack ? 2 : 1; /* elements per 32-bit register */
    const long target = p->slice_target * per_reg;
    long v = c->vec ? vmax : 1;
    long n = (cols + target - 1) / target;
    c->nblocks = (int)(n < 1 ? 1 : n > p->max_blocks ? p->max_blocks : n);
    c->push = c->push && c->nblocks <= 16; /* the kernel's pairs[16] */
    c->slice = ((cols + c->nblocks - 1) / c->nblocks + v - 1) / v * v;
    c->elems = p->elems * per_reg;
    const long max_threads = c->vec ? MAX_THREADS : MAX_THREADS_V1;
    long threads;
    while ((threads = (c->slice + c->elems - 1) / c->elems) > max_threads &&
           c->elems < 32 * per_reg)
        c->elems *= 2;
    c->threads = (int)((threads + 31) / 32 * 32);
    return threads <= max_threads;
}

template <typename T, int E, int V, bool PACK = false, bool PUSH = false>
static int launch_cluster(const T *x, T *y, long rows, long cols, const row_cut *c,
                          cudaStream_t stream) {
    /* A cluster of nblocks consecutive blocks per row (more than 8 is non-portable: launch.cuh
     * allows it, and says so in the table if this GPU cannot place such a cluster). */
    launch_cfg cfg = {dim3((unsigned)(rows * c->nblocks)), dim3((unsigned)c->threads), 0,
                      (unsigned)c->nblocks, stream};
    return launch_kernel(softmax_cluster_kernel<T, E, V, PACK, PUSH>, cfg, x, y, cols, c->slice);
}

/* The cluster kernel at the plan's E: 16 or 32 elements (packed: 32 or 64 halves). */
template <typename T, int V, bool PACK, bool PUSH>
static int launch_cluster_e(const void *x, void *y, long rows, long cols, const row_cut *c,
                             cudaStream_t stream) {
    constexpr int E1 = PACK ? 32 : 16;
    if (c->elems == E1)
        return launch_cluster<T, E1, V, PACK, PUSH>((const T *)x, (T *)y, rows, cols, c, stream);
    return launch_cluster<T, 2 * E1, V, PACK, PUSH>((const T *)x, (T *)y, rows, cols, c, stream);
}

/* A workspace for the fallback's pairs, grown when needed and freed at exit (launch_grow). */
static float2 *g_pairs;
static size_t g_pairs_bytes;

template <typename T, int E, int V>
static void launch_split(const T *x, T *y, long rows, long cols, const row_cut *c,
                         cudaStream_t stream) {
    long need = rows * c->nblocks;
    if (launch_grow((void **)&g_pairs, &g_pairs_bytes, (size_t)need * sizeof(float2)) !=
        cudaSuccess)
        return; /* the error stays for cudaGetLastError */
    unsigned int blocks = (unsigned int)need;
    softmax_split_stats_kernel<T, E, V><<<blocks, c->threads, 0, stream>>>(x, g_pairs, cols,
                                                                           c->slice, c->nblocks);
    softmax_split_finish_kernel<T, E, V><<<blocks, c->threads, 0, stream>>>(
        x, g_pairs, y, cols, c->slice, c->nblocks);
}

/* Instantiate for (T, E, V) and call the cluster launcher or the split one. */
template <typename T, int E, int V>
static int launch_tev(bool cluster, const void *x, void *y, long rows, long cols,
                      const row_cut *c, cudaStream_t stream) {
    if (cluster) return launch_cluster<T, E, V>((const T *)x, (T *)y, rows, cols, c, stream);
    launch_split<T, E, V>((const T *)x, (T *)y, rows, cols, c, stream);
    return LAUNCH_OK;
}

template <typename T>
static int launch(bool cluster, const void *x, void *y, long rows, long cols,
                  cudaStream_t stream) {
    row_cut c;
    if (!cut_row(cols, (int)sizeof(T), cluster, &c))
        return launch_unsupported("%ld columns do not fit %s", cols,
                                  cluster ? "one cluster's registers" : "the fallback's blocks");
    constexpr int VMAX = 16 / sizeof(T);
    if constexpr (sizeof(T) == 2) {
        if (c.pack) { /* cluster, fp16, vec */
            if (c.push) return launch_cluster_e<T, 8, true, true>(x, y, rows, cols, &c, stream);
            return launch_cluster_e<T, 8, true, false>(x, y, rows, cols, &c, stream);
        }
    }
    if (c.push) /* cluster, vec */
        return launch_cluster_e<T, VMAX, false, true>(x, y, rows, cols, &c, stream);
    if (c.elems == 16) {
        if (c.vec) return launch_tev<T, 16, VMAX>(cluster, x, y, rows, cols, &c, stream);
        return launch_tev<T, 16, 1>(cluster, x, y, rows, cols, &c, stream);
    }
    if (c.vec) return launch_tev<T, 32, VMAX>(cluster, x, y, rows, cols, &c, stream);
    return launch_tev<T, 32, 1>(cluster, x, y, rows, cols, &c, stream);
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
