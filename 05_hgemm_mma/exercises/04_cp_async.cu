/* Exercise 4 — cp.async and a multi-stage pipeline.
 *
 * Hints:
 *  - Write one kernel templated on STAGES and three launchers. Dynamic shared memory of
 *    HGEMM_SMEM_CP_ASYNC(STAGES) bytes (hgemm.h); above 48 KiB call cudaFuncSetAttribute(...,
 *    cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) once.
 *  - cp_async_16_zfill(smem, gmem, ok ? 16 : 0) (ptx/cp_async.cuh) copies or zero-fills.
 *  - Prologue: issue k-tiles 0 .. STAGES-2, cp_async_commit() after each (even when there is
 *    no tile to load: cp_async_wait<N> counts groups).
 *  - Loop: cp_async_wait<STAGES-2>(); __syncthreads(); issue tile kt+STAGES-1 into buffer
 *    (kt+STAGES-1) % STAGES; commit; compute on buffer kt % STAGES.
 *
 * Check it:  make check-05 ARGS="--kernel ex_cp_async3"
 */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

extern "C" int ex_hgemm_cp_async_2stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                        int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_hgemm_cp_async_3stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                        int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}

extern "C" int ex_hgemm_cp_async_4stage(const f16_t *A, const f16_t *B, f16_t *C, int M, int N,
                                        int K, cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
