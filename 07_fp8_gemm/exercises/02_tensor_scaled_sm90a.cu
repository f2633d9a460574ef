/* Exercise 2 — per-tensor FP8: your chapter 06 stage 4 (warp specialization) with the e4m3 wgmma.
 *
 * Hints:
 *  - Maps: gemm06_maps_for_type(A, B, TMAP_U8, M, N, K, 128, 256, ...) (gemm06_sm90a.cuh): a
 *    box row is 128 bytes = 128 e4m3, so one slot carries 128 of k, twice bf16's 64.
 *  - Ring: 4 slots of (128 + 256) rows x 128 bytes = 48 KiB: GEMM07_SMEM_TENSOR_SCALED.
 *  - Per slot, four wgmma_e4m3_e4m3_ss<256> (k32 each), the descriptor of step j at
 *    desc_sw128(tile + 32 * j): the same 32-byte steps as bf16's k16.
 *  - Epilogue: multiply the fp32 accumulators by (*scale_a) * (*scale_b) (device pointers,
 *    one float each), then store_fragment<256, bf16_t>.
 *  - SASS: QGMMA.64x256x32.F32.E4M3.E4M3, UTMALDG, SYNCS, USETMAXREG; no LDL/STL.
 *
 * Check it:  make check-07 ARGS="--kernel ex_tensor_scaled"
 */
#include "stage.h"
#include "gemm07.h"
#include "gemm06_sm90a.cuh"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

extern "C" int ex_gemm07_tensor_scaled(const e4m3_t *A, const e4m3_t *B, const float *scale_a,
                                       const float *scale_b, bf16_t *D, int M, int N, int K,
                                       cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)scale_a, (void)scale_b, (void)D, (void)M, (void)N, (void)K,
        (void)stream;
    return LAUNCH_TODO;
}
