/* Exercise 5 — XOR-swizzled shared memory.
 *
 * Hints:
 *  - BK = 64, so a tile row is 128 bytes = 8 chunks of 16 bytes. Store chunk c of row r at
 *    byte r * 128 + ((c ^ (r & 7)) << 4): no padding.
 *  - Use the same formula for the cp.async destinations and for the ldmatrix addresses.
 *    For A, lane l reads row r = m0 + l % 16 at chunk 2 * kk + l / 16.
 *  - Check on paper that the 8 lanes of one ldmatrix phase hit 8 different 16-byte bank
 *    groups. Then by enumeration: 05_hgemm_mma/bank_check.py computes every lane's address
 *    with the stages' formulas (swz, s5_cp) and counts the wavefronts of each phase. In a copy
 *    of it, add a gemm_tn(...) line with your two formulas (ldmatrix row and chunk, cp.async
 *    destination) and run it: every phase must need 1 wavefront; its "without the XOR
 *    (control)" line shows what an 8-way conflict looks like. README, "The swizzle and the
 *    bank-conflict counts".
 *  - On the GPU: the ncu command in that section, with your kernel's name in -k and
 *    --kernel ex_swizzle. Compare l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum with
 *    4 x smsp__inst_executed_op_ldsm.sum (an ldmatrix.x4 without conflicts is 4 wavefronts):
 *    ours is 0.4% above it (NOTES.md, the ncu counts); unswizzled 128-byte rows would be
 *    8x it. Do not take l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum as the proof:
 *    it is non-zero for our conflict-free kernel too.
 *  - 3 stages of 128x64 + 128x64 halves are 96 KiB (HGEMM_SMEM_SWIZZLE).
 *
 * Check it:  make check-05 ARGS="--kernel ex_swizzle"
 */
#include "stage.h"
#include "hgemm.h"
#include "ptx/cp_async.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma.cuh"

extern "C" int ex_hgemm_swizzle(const f16_t *A, const f16_t *B, f16_t *C, int M, int N, int K,
                                cudaStream_t stream) {
    /* TODO */
    (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return LAUNCH_TODO;
}
