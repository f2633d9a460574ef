/* Device helpers every chapter driver uses, callable from C11 (implemented in gpu.cu and timing.c):
 * error checks, seeded random fills, NaN poisoning, the L2 flush, and event timing. */
#ifndef GPU_H
#define GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "harness.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this build holds code for the GPU (SASS or PTX the driver can compile): a build for
 * other architectures fails every launch with "no kernel image". Returns 0, or -1 with a message
 * that names the GPU's architecture and the make line that builds for it. */
int gpu_image_check(char *err, size_t errlen);

/* A failed CUDA call leaves no trustworthy state behind: report it and stop with exit code 1. */
#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: CUDA error %s: %s\n  in %s\n", __FILE__, __LINE__,             \
                    cudaGetErrorName(err_), cudaGetErrorString(err_), #call);                      \
            exit(EXIT_KERNEL_FAILED);                                                              \
        }                                                                                          \
    } while (0)

#define CUBLAS_CHECK(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t st_ = (call);                                                               \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: cuBLAS error %d in %s\n", __FILE__, __LINE__, (int)st_,        \
                    #call);                                                                        \
            exit(EXIT_KERNEL_FAILED);                                                              \
        }                                                                                          \
    } while (0)

/* Random fills: element i gets a value drawn from (seed, i) alone, so a rerun with --seed
 * reproduces the data whatever the launch shape. Values are uniform in [lo, hi), rounded to
 * the storage type. */
void fill_uniform_f32(float *p, long n, uint64_t seed, float lo, float hi, cudaStream_t s);
void fill_uniform_f16(f16_t *p, long n, uint64_t seed, float lo, float hi, cudaStream_t s);
void fill_uniform_bf16(bf16_t *p, long n, uint64_t seed, float lo, float hi, cudaStream_t s);

/* All bytes 0xFF: NaN in fp32, fp16 and bf16, so an element a kernel forgot to write fails. */
void poison(void *p, size_t bytes, cudaStream_t s);

/* Evicts the L2 by reading a buffer twice its size (reads leave clean lines, so the timed
 * kernel pays no write-back of the flush's data). l2_flush_init is called by timing_init. */
void l2_flush_init(size_t l2_bytes);
void l2_flush(cudaStream_t s);
void l2_flush_free(void);

/* Event timing: `launch(ctx, stream)` is called warmup times, then up to iters times with one
 * event pair around each call (after an L2 flush if flush_l2). A launch slower than 50 ms is
 * timed fewer times (about 1.5 s worth, at least 3). The per-launch times in ms land in
 * ms_out[0 .. *count_out). Returns LAUNCH_OK, LAUNCH_TODO or LAUNCH_UNSUPPORTED (what the
 * launcher said instead of launching), or -1 with a message in err for a CUDA error during the launches. */
typedef int (*launch_fn)(void *ctx, cudaStream_t s);
int time_launches(launch_fn launch, void *ctx, int warmup, int iters, bool flush_l2,
                  float *ms_out, int *count_out, char *err, size_t errlen);

/* Runs launch once and waits. Returns LAUNCH_OK, LAUNCH_TODO or -1 with err set. */
int run_once(launch_fn launch, void *ctx, char *err, size_t errlen);

/* Device allocation with the size check done in the message: exits 1 on failure. */
void *gpu_alloc(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
