/* Chapter 03: the launchers of every stage and exercise, shared by the driver (C) and the
 * kernel files (CUDA), and the few device helpers every stage uses to read and write an
 * element whatever its storage type.
 *
 * Every launcher computes y = softmax(x) row by row for a rows x cols row-major matrix
 * (row r starts at element r * cols), enqueues its kernel(s) on `stream` and returns
 * LAUNCH_OK, or LAUNCH_TODO from an unfinished exercise. x and y hold `dtype` elements; the
 * math is fp32 whatever the storage type. rows >= 1, cols >= 1; a stage that cannot compute
 * some widths says so in the driver's supports() and is never called with them. */
#ifndef SOFTMAX_H
#define SOFTMAX_H

#include <cuda_runtime_api.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SOFTMAX_F32 = 0, SOFTMAX_F16 = 1 } softmax_dtype;

#define SOFTMAX_LAUNCHERS(p)                                                                       \
    int p##softmax_naive(const void *x, void *y, long rows, long cols, softmax_dtype dtype,       \
                         cudaStream_t stream);                                                     \
    int p##softmax_block_smem(const void *x, void *y, long rows, long cols, softmax_dtype dtype,  \
                              cudaStream_t stream);                                                \
    int p##softmax_warp_shfl(const void *x, void *y, long rows, long cols, softmax_dtype dtype,   \
                             cudaStream_t stream);                                                 \
    int p##softmax_online(const void *x, void *y, long rows, long cols, softmax_dtype dtype,      \
                          cudaStream_t stream);                                                    \
    int p##softmax_regs(const void *x, void *y, long rows, long cols, softmax_dtype dtype,        \
                        cudaStream_t stream);                                                      \
    int p##softmax_cluster(const void *x, void *y, long rows, long cols, softmax_dtype dtype,     \
                           cudaStream_t stream);                                                   \
    int p##softmax_split(const void *x, void *y, long rows, long cols, softmax_dtype dtype,       \
                         cudaStream_t stream);

/* The reference stages, in kernels/, and your exercises (the same names with ex_), in exercises/. */
SOFTMAX_LAUNCHERS()
SOFTMAX_LAUNCHERS(ex_)

/* The widest rows stage 5 and stage 6 can hold, whatever the tuning presets say: stage 5 keeps
 * a row in one block's registers (1024 threads x 32 elements), stage 6 in one cluster's (8
 * blocks of that). Widths that are not a multiple of 16 bytes use one access per element,
 * which needs more registers for addresses: those kernels are limited to 512 threads, half
 * the width. The driver's supports() skips wider rows. */
#define SOFTMAX_REGS_MAX_COLS (1024L * 32)
#define SOFTMAX_REGS_MAX_COLS_UNALIGNED (512L * 32)
#define SOFTMAX_CLUSTER_MAX_COLS (8L * 1024 * 32)
#define SOFTMAX_CLUSTER_MAX_COLS_UNALIGNED (8L * 512 * 32)
#define SOFTMAX_ALIGNED(cols, dtype) ((cols) % ((dtype) == SOFTMAX_F16 ? 8 : 4) == 0)

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Read and write one element as fp32, whatever the storage type. */
__device__ __forceinline__ float load_float(const float *p) { return *p; }
__device__ __forceinline__ float load_float(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ void store_float(float *p, float v) { *p = v; }
__device__ __forceinline__ void store_float(__half *p, float v) { *p = __float2half_rn(v); }

/* V consecutive elements as one access of V * sizeof(T) bytes (16 bytes: LDG.E.128), converted
 * to or from fp32. p must be aligned to the access size. Used by stages 5 and 6. */
typedef union {
    uint4 u16;
    uint2 u8;
    unsigned int u4;
    unsigned short u2;
    float f[4];
    __half h[8];
} softmax_pack;

template <typename T, int V> __device__ __forceinline__ void load_pack(const T *p, float *v) {
    constexpr int BYTES = V * (int)sizeof(T);
    static_assert(BYTES == 2 || BYTES == 4 || BYTES == 8 || BYTES == 16, "1 to 16 bytes");
    softmax_pack r;
    if constexpr (BYTES == 16) r.u16 = *(const uint4 *)p;
    else if constexpr (BYTES == 8) r.u8 = *(const uint2 *)p;
    else if constexpr (BYTES == 4) r.u4 = *(const unsigned int *)p;
    else r.u2 = *(const unsigned short *)p;
#pragma unroll
    for (int i = 0; i < V; i++) {
        if constexpr (sizeof(T) == 4) v[i] = r.f[i];
        else v[i] = __half2float(r.h[i]);
    }
}

template <typename T, int V> __device__ __forceinline__ void store_pack(T *p, const float *v) {
    constexpr int BYTES = V * (int)sizeof(T);
    softmax_pack r;
#pragma unroll
    for (int i = 0; i < V; i++) {
        if constexpr (sizeof(T) == 4) r.f[i] = v[i];
        else r.h[i] = __float2half_rn(v[i]);
    }
    if constexpr (BYTES == 16) *(uint4 *)p = r.u16;
    else if constexpr (BYTES == 8) *(uint2 *)p = r.u8;
    else if constexpr (BYTES == 4) *(unsigned int *)p = r.u4;
    else *(unsigned short *)p = r.u2;
}
#endif

#endif
