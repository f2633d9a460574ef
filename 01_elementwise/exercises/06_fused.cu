/* Exercise 6 — y = relu(a + b): unfused (two passes) and fused (one pass).
 *
 * Hints:
 *  - Unfused: call add_f32_unroll (the reference stage 5, declared in elementwise.h) into c,
 *    then launch a kernel that applies max(c, 0) in place.
 *  - Fused: one kernel that adds and clamps in registers before its only store.
 *  - Before you time them, predict: bytes moved by each, and so the ratio of their times.
 *
 * Check it:  make check-01 */
#include "stage.h"
#include "elementwise.h"

extern "C" int ex_relu_add_unfused(const float *a, const float *b, float *c, long n,
                                   cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_relu_add_fused(const float *a, const float *b, float *c, long n,
                                 cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}
