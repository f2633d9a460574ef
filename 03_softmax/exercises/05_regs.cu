/* Exercise 5 — the row in registers: read once, write once, 128-bit accesses.
 *
 * Hints:
 *  - Template the kernel on E (elements per thread) and V (elements per access: 16 / sizeof(T)
 *    when cols % V == 0, else 1). A thread keeps float v[E]; index it only with constants
 *    (#pragma unroll), or it goes to local memory (LDL/STL: make test forbids those).
 *  - Pack p of thread t is elements (p * row_threads + t) * V ... + V - 1: coalesced at every
 *    p. load_pack<T, V> / store_pack<T, V> in softmax.h move one pack as fp32. Packs past the
 *    end of the row: fill with -INFINITY (exp gives 0) and do not store them.
 *  - Issue every load before using any. Then max, v[i] = __expf(v[i] - m) and sum, scale,
 *    store: one exponential per element, one read and one write.
 *  - Shape by width: one warp per row for cols <= 1024 (E = 32 covers it), one block of
 *    ceil(cols / E) threads (whole warps) per row above, up to 1024 * 32 elements.
 *
 * Check it:  make check-03 ARGS="--kernel ex_f32_regs --kernel ex_f16_regs" */
#include "stage.h"
#include "softmax.h"
#include "reduce.cuh"

extern "C" int ex_softmax_regs(const void *x, void *y, long rows, long cols, softmax_dtype dtype,
                               cudaStream_t stream) {
    /* TODO */
    (void)x, (void)y, (void)rows, (void)cols, (void)dtype, (void)stream;
    return LAUNCH_TODO;
}
