/* Exercise 2 — FlashAttention's algorithm on CUDA cores: S never leaves the chip.
 *
 * One block per 64 queries of one (batch, head); loop over the keys in tiles of 64 through
 * shared memory, and keep, per query row, the running max m, the running sum l and an fp32
 * accumulator of D outputs:
 *     m_new = max(m, tile max);  alpha = exp(m - m_new);  p_j = exp(s_j - m_new)
 *     l = alpha * l + sum_j p_j;  acc = alpha * acc + sum_j p_j v_j
 * then O = acc / l and LSE = m + log(l).
 *
 * Hints:
 *  - Template the kernel on the element type and on D (64, 128), so that the accumulator is an
 *    array of compile-time size and stays in registers (make test checks for LDL/STL).
 *  - 256 threads, 4 per query row: each computes 16 of the row's 64 scores and owns D/4 output
 *    columns. lanes_max<4> and lanes_sum<4> (reduce.cuh) combine the 4 lanes of a row; the 4
 *    can keep separate parts of l, since they share m.
 *  - Masks: a key past n, or after the query when causal, scores -INFINITY. Load K and V rows
 *    past n as zeros; compute query rows past n but do not store them. Guard exp(m - m_new)
 *    against -inf - (-inf) for a row that has seen no key yet.
 *  - Scale the scores with a multiply and use expf (the exp2 trick is stage 4's).
 *  - More than 48 KiB of dynamic shared memory at D = 128 (attn.h, ATTN_TILED_SMEM): launch
 *    with launch_kernel (launch.cuh), which raises the limit.
 *  - Pad each shared row by a few elements so that the rows a warp reads together start in
 *    different banks.
 *
 * Check it:  make check-08 ARGS="--kernel ex_f16_tiled_online"
 * (the stage in kernels/02_tiled_online.cu is the reference; read it after you try). */
#include "stage.h"
#include "attn.h"
#include "launch.cuh"
#include "reduce.cuh"

extern "C" int ex_attn_tiled_online(const attn_args *a, cudaStream_t stream) {
    /* TODO */
    (void)a, (void)stream;
    return LAUNCH_TODO;
}
