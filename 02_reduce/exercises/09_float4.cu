/* Exercise 9 — 128-bit loads, several in flight.
 *
 * Hints:
 *  - View the input as const float4 * (only if ((uintptr_t)in & 15) == 0; otherwise use the
 *    scalar path for everything). nvec = n / 4.
 *  - Chunks of UNROLL * THREADS float4s, grid-stride over chunks; in a chunk thread t loads
 *    float4s t, t + THREADS, ..., UNROLL of them into float4 v[UNROLL] before adding any.
 *  - Index v[] only with compile-time constants (#pragma unroll), or it goes to local memory.
 *  - Then the float4s after the last whole chunk, then the n % 4 last floats, then block_sum
 *    from common/reduce.cuh.
 *
 * Check it:  make check-02 ARGS="--kernel float4"
 * (the stage in kernels/09_float4.cu is the reference; read it after you try). */
#include "stage.h"
#include "reduce.h"
#include "reduce.cuh"
#include "multi_pass.cuh"

extern "C" int ex_reduce_float4(const float *in, long n, float *out, float *scratch,
        cudaStream_t stream) {
    /* TODO */
    (void)in, (void)n, (void)out, (void)scratch, (void)stream;
    return LAUNCH_TODO;
}
