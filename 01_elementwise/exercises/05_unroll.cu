/* Exercise 5 — several independent 16-byte loads in flight per thread.
 *
 * Hints:
 *  - Cut the array into chunks of UNROLL * blockDim 16-byte packs. In each chunk, thread t
 *    loads packs t, t + blockDim, t + 2*blockDim, ... (coalesced), into register arrays
 *    x[UNROLL], y[UNROLL], all before the first add. Then add and store.
 *  - Index register arrays only with compile-time constants (#pragma unroll over u), or they
 *    go to local memory (LDL/STL in the SASS: make test forbids those in the stages).
 *  - Loop over chunks grid-stride; finish leftover packs one by one, then leftover elements.
 *  - One kernel can serve fp32, fp16 and bf16 if it moves raw uint4 packs and only the add
 *    knows the element type.
 *
 * Check it:  make check-01 */
#include "stage.h"
#include "elementwise.h"

extern "C" int ex_add_f32_unroll(const float *a, const float *b, float *c, long n,
                                 cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_add_f16_unroll(const f16_t *a, const f16_t *b, f16_t *c, long n,
                                 cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_add_bf16_unroll(const bf16_t *a, const bf16_t *b, bf16_t *c, long n,
                                  cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}
