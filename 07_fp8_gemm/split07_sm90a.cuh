/* Stage 9's K split, shared by stages 9-13 (kernels/ only: exercise 9 asks for it): where a
 * piece ends (split_end, host and device), how many pieces (split_ways) and the workspace of
 * their fp32 sums (reserve_split). Each stage's file has its own copy of these statics: one
 * workspace a file, as before. */
#ifndef SPLIT07_SM90A_CUH
#define SPLIT07_SM90A_CUH

#include <stdlib.h>

#include "launch.cuh"

/* Unit `piece` of a tile cut in `ways` ends before K tile split_end(piece) (piece -1: 0). */
static __host__ __device__ __forceinline__ int split_end(int k_tiles, int ways, int piece) {
    return piece < 0 ? 0 : (piece + 1) * k_tiles / ways; /* 32-bit: the producer has 40 regs */
}

/* The K split: with at most a quarter of the SMs' worth of tiles (cluster blocks), each tile's K
 * tiles are cut into `ways` units, as many as the resident clusters allow (at most 8, and at
 * least 16 K tiles a unit): at 64 x 2112 x 7168, 17 tiles on 66 clusters, each tile's 56 K
 * tiles went to one SM pair and the rest idled. Measured (H100, A/B twice, block-scaled x
 * cuBLASLt): 64 x 2112 x 7168 0.883 -> 1.146 (3 ways), 128 x 2112 x 7168 0.929 -> 1.152,
 * 128 x 4096 x 7168 0.997 -> 1.016 (2 ways), 64 x 4096 x 7168 0.940 -> 0.974; but 64 x 7168 x
 * 2048 cut in 2 (8 K tiles a unit) fell from 1.03 to 0.81: the sums' round trip through L2 then
 * costs more than the K loop it halves, hence 16. The quarter holds for clusters of one block
 * too (M <= 64): 64 x 7168 x 16384, 56 tiles alone on 132 SMs, cut in 2 measured 4% slower
 * (block-scaled 1.105x -> 1.06x; its B, 117 MB, streams from DRAM as fast either way). Only the
 * 64 x 128 tile, alone or in pairs, has the split's code (the tile of those shapes): a kernel
 * with it, even unused, measured 1-3% slower at 4096^3 and 8192^3. GEMM07_FINAL_SPLIT=n forces
 * n ways there (1: none; read once; at most one a K tile), for the tests. */
static int split_ways(long tiles, int resident, int cluster, int k_tiles) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("GEMM07_FINAL_SPLIT");
        forced = e && *e ? atoi(e) : 0;
        if (forced < 0) forced = 0;
    }
    long ways = forced ? forced : tiles * 4 <= (long)resident * cluster ? resident / tiles : 1;
    if (!forced && ways > k_tiles / 16) ways = k_tiles / 16;
    if (ways > 8 && !forced) ways = 8;
    if (ways > k_tiles) ways = k_tiles;
    return ways < 1 ? 1 : (int)ways;
}

/* The split's workspace (every unit's fp32 sums) and counters (zeroed once; the last piece of
 * each tile sets its own back to 0): one per file, grown to the largest launch, kept. Growing
 * frees the old buffers, which waits for the work queued on them. Split launches on two streams
 * at once would share it (the harness runs one stream). false: none to be had (the launch then
 * does not split). */
static float4 *split_partials;
static int *split_counters;
static bool reserve_split(size_t float4s, size_t counters) {
    static size_t have_f, have_c; /* bytes */
    const size_t before = have_c; /* a new counter buffer (grown: a new size) starts at 0 */
    if (launch_grow((void **)&split_partials, &have_f, float4s * sizeof(float4)) != cudaSuccess ||
        launch_grow((void **)&split_counters, &have_c, counters * sizeof(int)) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: the launch runs unsplit */
        return false;
    }
    if (have_c != before && cudaMemset(split_counters, 0, have_c) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(split_counters);
        split_counters = NULL, have_c = 0;
        return false;
    }
    return true;
}

#endif
