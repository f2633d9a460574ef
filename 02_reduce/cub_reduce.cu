/* The library rows: CUB's DeviceReduce::Sum and ::Max, what a CUDA programmer would call.
 *
 * CUB needs temporary storage whose size it reports when called with a null pointer. The size
 * depends on n, so cub_reduce_setup asks and allocates once per problem size, before anything
 * is timed; the timed call does only the reduction (CUB's two kernels: per-block partials over
 * an "even share" of tiles, then one block over the partials). */
#include <climits>

#include <cub/device/device_reduce.cuh>

#include "gpu.h"
#include "reduce.h"

/* n as an int when it fits: that is how most callers pass it, and CUB then uses 32-bit offsets
 * (with a long it instantiates its 64-bit-offset kernels). */
#define WITH_N(call_with_n) ((n) <= INT_MAX ? call_with_n((int)(n)) : call_with_n(n))

static void *g_temp;
static size_t g_temp_bytes;

extern "C" int cub_reduce_setup(long n) {
    size_t sum_bytes = 0, max_bytes = 0;
    const float *no_in = nullptr;
    float *no_out = nullptr;
#define SUM_SIZE(count) cub::DeviceReduce::Sum(nullptr, sum_bytes, no_in, no_out, count)
#define MAX_SIZE(count) cub::DeviceReduce::Max(nullptr, max_bytes, no_in, no_out, count)
    if (WITH_N(SUM_SIZE) != cudaSuccess || WITH_N(MAX_SIZE) != cudaSuccess) return 1;
    g_temp_bytes = sum_bytes > max_bytes ? sum_bytes : max_bytes;
    g_temp = gpu_alloc(g_temp_bytes ? g_temp_bytes : 1);
    return 0;
}

extern "C" void cub_reduce_teardown(void) {
    CUDA_CHECK(cudaFree(g_temp));
    g_temp = NULL;
    g_temp_bytes = 0;
}

extern "C" int cub_sum(const float *in, long n, float *out, float *scratch, cudaStream_t stream) {
    (void)scratch;
    size_t bytes = g_temp_bytes;
#define SUM(count) cub::DeviceReduce::Sum(g_temp, bytes, in, out, count, stream)
    CUDA_CHECK(WITH_N(SUM));
    return LAUNCH_OK;
}

extern "C" int cub_max(const float *in, long n, float *out, float *scratch, cudaStream_t stream) {
    (void)scratch;
    size_t bytes = g_temp_bytes;
#define MAX(count) cub::DeviceReduce::Max(g_temp, bytes, in, out, count, stream)
    CUDA_CHECK(WITH_N(MAX));
    return LAUNCH_OK;
}
