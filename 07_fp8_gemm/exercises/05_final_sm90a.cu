/* Exercise 5 — the final FP8 kernels (the stage itself is work in progress): your stages 3 and
 * 4 with chapter 06's stage 8 machinery: persistent clusters of two blocks sharing B by TMA
 * multicast, the grouped tile order, the stmatrix + TMA-store epilogue, 128 x 128 or 64 x 128
 * tiles. Two launchers: per tensor (scale the promoted sums once at the end) and block-scaled
 * (stage 4's per-tile factors).
 *
 * Check it:  make check-07 ARGS="--kernel ex_final_tensor --kernel ex_final_block"
 */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "ptx/cluster.cuh"
#include "ptx/named_barrier.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_final_tensor(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                      const float *scale_b, bf16_t *D, int M, int N, int K,
                                      cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_gemm07_final_block(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                     const float *scale_b, bf16_t *D, int M, int N, int K,
                                     cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
