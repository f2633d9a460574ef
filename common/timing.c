/* Event timing: one event pair around each launch, warm-up first, median taken by the caller. */
#include <string.h>

#include "gpu.h"

/* Kernels slower than SLOW_MS per launch get about SLOW_BUDGET_MS of timed launches, and at
 * least MIN_SLOW_ITERS; the table says how many each row got when it is fewer than --iters. */
#define SLOW_MS 50.0f
#define SLOW_BUDGET_MS 1500.0f
#define MIN_SLOW_ITERS 3

static cudaEvent_t ev_start[2], ev_stop[2];
static cudaStream_t stream;
static bool ready;

static void timing_init(void) {
    if (ready) return;
    for (int i = 0; i < 2; i++) {
        CUDA_CHECK(cudaEventCreate(&ev_start[i]));
        CUDA_CHECK(cudaEventCreate(&ev_stop[i]));
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int dev = 0, l2 = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    l2_flush_init((size_t)l2);
    ready = true;
}

/* After a launch: a launch error (bad configuration) or an error from running it. */
static int launch_error(char *err, size_t len, bool sync) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && sync) e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess) return 0;
    if (e == cudaErrorNoKernelImageForDevice) { /* a build without this GPU: say how to fix it */
        char why[512];
        if (gpu_image_check(why, sizeof why) != 0) fprintf(stderr, "%s\n", why);
        else fprintf(stderr, "a kernel of this build has no code for this GPU: rebuild with "
                             "`make clean && make` on this machine\n");
        exit(EXIT_NO_GPU);
    }
    snprintf(err, len, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

int run_once(launch_fn launch, void *ctx, char *err, size_t errlen) {
    timing_init();
    int r = launch(ctx, stream);
    if (r != LAUNCH_OK) return r; /* LAUNCH_TODO or LAUNCH_UNSUPPORTED: nothing was launched */
    return launch_error(err, errlen, true);
}

int time_launches(launch_fn launch, void *ctx, int warmup, int iters, bool flush_l2,
                  float *ms_out, int *count_out, char *err, size_t errlen) {
    timing_init();
    *count_out = 0;
    /* The first warm-up launch is timed too: a kernel slower than SLOW_MS per launch (a naive
     * GEMM at 8192^3) is timed fewer times, so that a sweep stays within minutes. */
    float first_ms = 0;
    for (int i = 0; i < warmup; i++) {
        if (i == 0) CUDA_CHECK(cudaEventRecord(ev_start[0], stream));
        int r = launch(ctx, stream);
        if (r != LAUNCH_OK) return r;
        if (i == 0) CUDA_CHECK(cudaEventRecord(ev_stop[0], stream));
        if (launch_error(err, errlen, false)) return -1;
    }
    if (launch_error(err, errlen, true)) return -1;
    if (warmup > 0) CUDA_CHECK(cudaEventElapsedTime(&first_ms, ev_start[0], ev_stop[0]));
    if (first_ms > SLOW_MS) {
        int fit = (int)(SLOW_BUDGET_MS / first_ms);
        if (fit < MIN_SLOW_ITERS) fit = MIN_SLOW_ITERS;
        if (fit < iters) iters = fit;
    }
    /* Two event pairs alternate so that the host reads pair i while pair i+1 is queued:
     * the GPU never waits for the host between launches. */
    for (int i = 0; i < iters; i++) {
        int p = i & 1;
        if (i >= 2) {
            CUDA_CHECK(cudaEventSynchronize(ev_stop[p]));
            CUDA_CHECK(cudaEventElapsedTime(&ms_out[i - 2], ev_start[p], ev_stop[p]));
        }
        if (flush_l2) l2_flush(stream);
        CUDA_CHECK(cudaEventRecord(ev_start[p], stream));
        int r = launch(ctx, stream);
        if (r != LAUNCH_OK) return r;
        CUDA_CHECK(cudaEventRecord(ev_stop[p], stream));
        if (launch_error(err, errlen, false)) return -1;
    }
    if (launch_error(err, errlen, true)) return -1;
    for (int i = iters - 2 < 0 ? 0 : iters - 2; i < iters; i++) {
        int p = i & 1;
        CUDA_CHECK(cudaEventElapsedTime(&ms_out[i], ev_start[p], ev_stop[p]));
    }
    *count_out = iters;
    return LAUNCH_OK;
}

void *gpu_alloc(size_t bytes) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        fprintf(stderr, "cudaMalloc of %zu bytes failed: %s\n", bytes, cudaGetErrorString(e));
        exit(EXIT_KERNEL_FAILED);
    }
    return p;
}
