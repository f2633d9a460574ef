/* Exercise 4 — fp16 and bf16 with eight elements per 128-bit access.
 *
 * Hints:
 *  - Load a uint4 (16 bytes = 8 halves) and view it as four __half2 (or __nv_bfloat162): a
 *    union of uint4 and __half2[4] does it without moving data.
 *  - Add pairs with __hadd2: one instruction adds two elements.
 *  - The tail is n % 8 elements: __hadd on single __half / __nv_bfloat16 values.
 *  - uint4 accesses need 16-byte aligned addresses, as float4 did in exercise 3. If any of a, b,
 *    c is not aligned (aligned16() in common/stage.h), take no packs at all and run every
 *    element through the scalar loop rather than giving a wrong answer; size the grid for n
 *    elements then, not n / 8 packs.
 *  - Expect the same GB/s as float4, hence half the time per element.
 *
 * Check it:  make check-01 */
#include "stage.h"
#include "elementwise.h"

extern "C" int ex_add_f16_pack8(const f16_t *a, const f16_t *b, f16_t *c, long n,
                                cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_add_bf16_pack8(const bf16_t *a, const bf16_t *b, bf16_t *c, long n,
                                 cudaStream_t stream) {
    /* TODO */
    (void)a, (void)b, (void)c, (void)n, (void)stream;
    return LAUNCH_TODO;
}
