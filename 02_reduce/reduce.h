/* Chapter 02: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA). Each launcher reduces in[0..n) to one value written to *out (device
 * memory), enqueued on `stream`, and returns LAUNCH_OK (or LAUNCH_TODO from an unfinished
 * exercise). Any n >= 1. `scratch` is device memory of at least REDUCE_SCRATCH_FLOATS(n) floats
 * for per-block partial results; its contents on entry are garbage (the driver poisons it). */
#ifndef REDUCE_H
#define REDUCE_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for every level of partials of every stage: a pass of the smallest block (128 elements)
 * leaves n/128 partials, the next n/128^2, ...; 8192 covers a grid of resident blocks. */
#define REDUCE_SCRATCH_FLOATS(n) ((n) / 64 + 8192)

/* Stage 10's tuning: REDUCE_CONFIG=0..REDUCE_NCONFIGS-1 (README, "Tuning notes"). */
#define REDUCE_NCONFIGS 12

#define REDUCE_LAUNCHERS(p)                                                                        \
    int p##reduce_interleaved_divergent(const float *in, long n, float *out, float *scratch,      \
                                        cudaStream_t stream);                                      \
    int p##reduce_interleaved(const float *in, long n, float *out, float *scratch,                \
                              cudaStream_t stream);                                                \
    int p##reduce_sequential(const float *in, long n, float *out, float *scratch,                 \
                             cudaStream_t stream);                                                 \
    int p##reduce_first_add(const float *in, long n, float *out, float *scratch,                  \
                            cudaStream_t stream);                                                  \
    int p##reduce_unroll_warp(const float *in, long n, float *out, float *scratch,                \
                              cudaStream_t stream);                                                \
    int p##reduce_unroll_all(const float *in, long n, float *out, float *scratch,                 \
                             cudaStream_t stream);                                                 \
    int p##reduce_grid_stride(const float *in, long n, float *out, float *scratch,                \
                              cudaStream_t stream);                                                \
    int p##reduce_shuffle(const float *in, long n, float *out, float *scratch,                    \
                          cudaStream_t stream);                                                    \
    int p##reduce_float4(const float *in, long n, float *out, float *scratch,                     \
                         cudaStream_t stream);                                                     \
    int p##reduce_single_pass(const float *in, long n, float *out, float *scratch,                \
                              cudaStream_t stream);                                                \
    int p##reduce_max_single_pass(const float *in, long n, float *out, float *scratch,            \
                                  cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in exercises/. */
REDUCE_LAUNCHERS()
REDUCE_LAUNCHERS(ex_)

/* The library rows (cub_reduce.cu): CUB's DeviceReduce::Sum and ::Max. cub_reduce_setup sizes
 * and allocates CUB's temporary storage once per problem size, outside the timed region. */
int cub_reduce_setup(long n);
void cub_reduce_teardown(void);
int cub_sum(const float *in, long n, float *out, float *scratch, cudaStream_t stream);
int cub_max(const float *in, long n, float *out, float *scratch, cudaStream_t stream);

/* The test input (inputs.cu): uniform values rounded to odd multiples of 2^-8 in (-1, 1),
 * with one planted maximum of 1.0 at index `peak`. See the README for why. */
void reduce_make_input(float *x, long n, unsigned long long seed, long peak, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
