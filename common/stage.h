/* Included first by every stage and exercise file.
 *
 * STAGE(name) names a stage's launcher. Normally it is just `name`. The test suite compiles
 * each stage file a second time with -DSTAGE_AS_EXERCISE, which turns STAGE(name) into
 * `ex_name`: that object replaces your exercise file, and proves that the exercise plumbing
 * (driver, checks, table) accepts a correct solution. Kernels are `static` so that both copies
 * can live in one program. */
#ifndef STAGE_H
#define STAGE_H

#include <cuda_runtime.h>

#include "harness.h"
#include "types.h"

#ifdef STAGE_AS_EXERCISE
#define STAGE(name) ex_##name
#else
#define STAGE(name) name
#endif

/* 128-bit accesses need 16-byte aligned addresses: cudaMalloc gives 256, a pointer into the
 * middle of an array may not. */
static inline bool aligned16(const void *p) { return ((unsigned long long)p & 15) == 0; }

/* Blocks needed to cover n items with `per_block` items per block. */
static inline unsigned int blocks_for(long n, long per_block) {
    return (unsigned int)((n + per_block - 1) / per_block);
}

/* Blocks for a grid-stride kernel: as many as can be resident at once on every SM.
 * The occupancy query costs microseconds, and a timed launch must not pay it each time, so
 * call it once and keep the answer:  static unsigned g; if (!g) g = resident_blocks(...); */
static inline unsigned int resident_blocks(const void *kernel, int threads, size_t smem) {
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    if (per_sm < 1) per_sm = 1;
    return (unsigned int)(sms * per_sm);
}

#endif
