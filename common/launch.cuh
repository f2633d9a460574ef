/* Launching what <<<grid, block, smem, stream>>> cannot say: thread-block clusters, and more than
 * 48 KiB of dynamic shared memory per block.
 *
 *   launch_cfg cfg = {grid, block, smem_bytes, cluster_x, stream};
 *   return launch_kernel(my_kernel, cfg, arg0, arg1, ...);
 *
 * launch_kernel() returns LAUNCH_OK once the launch is enqueued (a launch error is read by the
 * caller with cudaGetLastError, as after <<<>>>), or LAUNCH_UNSUPPORTED, launching nothing, with
 * a reason the table prints, when this GPU cannot run the configuration: more shared memory
 * than a block may have here, or a cluster the GPU cannot place (too many blocks, too much shared
 * memory or too many threads per cluster). The first launch of each (kernel, smem, cluster)
 * raises the kernel's limits and asks the occupancy API whether one cluster fits; later launches
 * reuse the answer, so a timed launch pays for neither.
 *
 * Why the attributes: a kernel may use more than 48 KiB of dynamic shared memory only after
 * cudaFuncSetAttribute(MaxDynamicSharedMemorySize) raises its limit (sm_80: up to 163 KiB,
 * sm_89: 99 KiB, sm_90: 227 KiB); clusters of more than 8 blocks are "non-portable" and need
 * NonPortableClusterSizeAllowed (sm_90 places up to 16). Clusters exist from sm_90 on. */
#ifndef LAUNCH_CUH
#define LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdlib.h>

#include "harness.h"

typedef struct {
    dim3 grid, block;
    size_t smem;         /* dynamic shared memory per block, bytes */
    unsigned cluster;    /* blocks per cluster along x; 0 or 1: no cluster */
    cudaStream_t stream;
} launch_cfg;

/* How many clusters of `cluster` blocks of cfg can be resident at once
 * (cudaOccupancyMaxActiveClusters); 0, with the error cleared, if the runtime refuses. */
static inline int launch_max_clusters(const void *kernel, const launch_cfg *cfg, unsigned cluster) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t c = {};
    c.gridDim = cfg->grid;
    c.blockDim = cfg->block;
    c.dynamicSmemBytes = cfg->smem;
    c.attrs = &attr;
    c.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &c) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return clusters;
}

/* Raises the kernel's limits for cfg and checks that cfg can run here, once per (kernel, smem,
 * cluster) and translation unit. Returns LAUNCH_OK or launch_unsupported(reason). */
static inline int launch_prepare(const void *kernel, const launch_cfg *cfg) {
    typedef struct {
        const void *kernel;
        size_t smem;
        unsigned cluster, threads;
        int verdict;
    } prepared;
    static prepared seen[256];
    static int nseen;
    const unsigned cluster = cfg->cluster > 1 ? cfg->cluster : 1;
    const unsigned threads = cfg->block.x * cfg->block.y * cfg->block.z;
    for (int i = 0; i < nseen; i++)
        if (seen[i].kernel == kernel && seen[i].smem == cfg->smem &&
            seen[i].cluster == cluster && seen[i].threads == threads) {
            if (seen[i].verdict == LAUNCH_OK) return LAUNCH_OK;
            break; /* ask again, so that the reason is recorded for this launch too */
        }
    int device = 0, optin = 0, cc_major = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device);
    int verdict = LAUNCH_OK;
    if (cfg->smem > (size_t)optin) {
        verdict = launch_unsupported("needs %zu KiB of shared memory per block; this GPU allows "
                                     "%d KiB", cfg->smem / 1024, optin / 1024);
    } else if (cluster > 1 && cc_major < 9) {
        verdict = launch_unsupported("needs thread-block clusters (sm_90 and later)");
    } else if (cluster > 16) {
        verdict = launch_unsupported("a cluster of %u blocks: at most 16 exist", cluster);
    } else {
        if (cfg->smem > 48 * 1024 &&
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)cfg->smem) != cudaSuccess) {
            cudaGetLastError(); /* not sticky: clear it, the reason goes in the table */
            verdict = launch_unsupported("cannot raise the kernel's shared memory to %zu KiB",
                                         cfg->smem / 1024);
        }
        if (verdict == LAUNCH_OK && cluster > 8 &&
            cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
                cudaSuccess) {
            cudaGetLastError();
            verdict = launch_unsupported("this GPU refuses clusters of %u blocks", cluster);
        }
        if (verdict == LAUNCH_OK && cluster > 1 && launch_max_clusters(kernel, cfg, cluster) < 1)
            verdict = launch_unsupported("this GPU cannot place a cluster of %u blocks of %u "
                                         "threads with %zu KiB of shared memory each",
                                         cluster, threads, cfg->smem / 1024);
    }
    if (nseen < (int)(sizeof seen / sizeof seen[0]))
        seen[nseen++] = (prepared){kernel, cfg->smem, cluster, threads, verdict};
    return verdict;
}

/* How many clusters of cfg can be resident on the GPU at once (a persistent kernel with clusters
 * sizes its grid by it: SMs / cluster size can be more than fit, when a GPC has an odd number of
 * free SMs). 0 if cfg cannot run here (launch_prepare says why). Ask once and keep the answer. */
static inline int launch_resident_clusters(const void *kernel, const launch_cfg *cfg) {
    if (launch_prepare(kernel, cfg) != LAUNCH_OK) return 0;
    return launch_max_clusters(kernel, cfg, cfg->cluster > 1 ? cfg->cluster : 1);
}

/* SMs on this device, asked once: a persistent grid has one block (or a cluster's share) per
 * SM. */
static inline int launch_sms(void) {
    static int sms;
    if (!sms) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            sms < 1)
            sms = 1;
    }
    return sms;
}

/* A persistent grid for `units` equal work units when `resident` blocks (or clusters) fit at
 * once: the fewest that keep the round count of a grid of every resident one. A block does
 * ceil(units / grid) units at most, so launching every one that fits buys nothing over the
 * fewest that keep that count: 256 units on 66 clusters take 4 rounds, and so do 64 clusters
 * of 4 units each, where 66 would leave 8 of them a round short, idle at the end; SMs left
 * idle hand their share of the power budget to the others (chapter 06 stage 8: 64 clusters
 * instead of 66 ran 0.7% faster at 4096^3 and 1.2% at 8192^3 on an H100, in 06's sweeps;
 * chapter 08 stage 6: 128 blocks instead of 132 for 2048 units, 1% faster at 8 x 16 x 2048). */
static inline long launch_balanced_grid(long units, long resident) {
    if (units < 1) return 1;
    const long fit = units < resident ? units : resident;
    const long rounds = (units + fit - 1) / fit;
    return (units + rounds - 1) / rounds;
}

/* The workspaces launch_grow made, freed at exit (compute-sanitizer's leak check counts a buffer
 * kept to the end as leaked): `buf` recorded once (8 a file at most: enough for 03's one and
 * 07's two), or, with NULL, every recorded one freed. */
static inline void launch_free_kept(void);
static inline void launch_keep(void **buf) {
    static void **kept[8];
    static int n;
    if (!buf) {
        for (int i = 0; i < n; i++) cudaFree(*kept[i]), *kept[i] = NULL;
        return;
    }
    for (int i = 0; i < n; i++)
        if (kept[i] == buf) return;
    if (n == 0) atexit(launch_free_kept);
    if (n < 8) kept[n++] = buf;
}
static inline void launch_free_kept(void) { launch_keep(NULL); }

/* A device workspace that grows: *buf holds *have bytes; if fewer than `bytes`, the old buffer is
 * freed (cudaFree waits for the work queued on it) and a new one allocated, itself freed at exit
 * (launch_keep). Returns the CUDA error of the allocation (then *buf = NULL, *have = 0; the
 * caller decides whether it is sticky for its row or a reason to take another path). Chapter
 * 03's split softmax keeps its partial (max, sum) pairs in one, chapter 07's K split its
 * partial sums and counters. */
static inline cudaError_t launch_grow(void **buf, size_t *have, size_t bytes) {
    if (*buf && *have >= bytes) return cudaSuccess;
    cudaFree(*buf);
    *buf = NULL, *have = 0;
    const cudaError_t e = cudaMalloc(buf, bytes);
    if (e != cudaSuccess) *buf = NULL;
    else *have = bytes, launch_keep(buf);
    return e;
}

/* Enqueues kernel<<<cfg>>>(args...) with its cluster shape. The arguments are converted to the
 * kernel's parameter types as in a <<<>>> launch. */
template <typename... Params, typename... Args>
static inline int launch_kernel(void (*kernel)(Params...), const launch_cfg &cfg, Args... args) {
    int rc = launch_prepare((const void *)kernel, &cfg);
    if (rc != LAUNCH_OK) return rc;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cfg.cluster > 1 ? cfg.cluster : 1;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t c = {};
    c.gridDim = cfg.grid;
    c.blockDim = cfg.block;
    c.dynamicSmemBytes = cfg.smem;
    c.stream = cfg.stream;
    c.attrs = &attr;
    c.numAttrs = cfg.cluster > 1 ? 1 : 0;
    cudaLaunchKernelEx(&c, kernel, static_cast<Params>(args)...); /* errors: cudaGetLastError */
    return LAUNCH_OK;
}

#endif
