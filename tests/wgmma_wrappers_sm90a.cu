/* SASS checks of common/ptx/wgmma.cuh: each kernel below issues one wgmma form, and the line
 * before it names SASS opcode prefixes that cuobjdump must find in that kernel. Built with
 * -cubin for sm_90a and never run: the operands are made up (A and B tiles at the start of
 * dynamic shared memory, K-major, 128-byte swizzle), only the instruction selection matters.
 * Each kernel issues the four k-steps of one 128-byte K tile with scale_d = accumulate || k > 0,
 * as a GEMM main loop does, so the predicate stays a run-time value; the N = 256 kernels also
 * show that 128 accumulators per thread fit without spilling (no LDL/STL). ptxas 13.0 emits:
 *   bf16   HGMMA.64xNx16.F32.BF16        f16: HGMMA.64xNx16.F32 (no type suffix)
 *   fp8    QGMMA.64xNx32.F32.<A type>.<B type>
 *   rs     a register for A: HGMMA.64xNx16.F32.BF16 R24, R152, gdesc[UR4], R24, ...
 *   wgmma_fence  WARPGROUP.ARRIVE;  wgmma_commit_group  "gsb0" on the group's last GMMA;
 *   wgmma_wait_group<0>  WARPGROUP.DEPBAR.LE gsb0, 0x0 */
#include "ptx/smem.cuh"
#include "ptx/wgmma.cuh"

extern __shared__ __align__(1024) unsigned char smem[];

/* A at smem, B at smem + 16 KB; SBO = 1024 (8 rows of 128 bytes), LBO unused (16). */
__device__ __forceinline__ uint64_t desc_at(unsigned offset, int k) {
    return wgmma_desc(smem_addr(smem) + offset + 32 * k, WGMMA_SWIZZLE_128B, 16, 1024);
}

/* Waits for the wgmmas and writes the accumulators out (so that none is dead code). */
template <int R> __device__ __forceinline__ void finish(float *out, float (&d)[R]) {
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);
#pragma unroll
    for (int i = 0; i < R; i++) out[(blockIdx.x * blockDim.x + threadIdx.x) * R + i] = d[i];
}

/* The A fragment of the rs form, from global memory (any values will do here). */
__device__ __forceinline__ void load_a(unsigned (&a)[4], const unsigned *a_frag) {
    for (int i = 0; i < 4; i++) a[i] = a_frag[threadIdx.x * 4 + i];
}

#define SS_KERNEL(kname, fn, N)                                                                    \
    extern "C" __global__ void kname(float *out, int accumulate) {                                 \
        float d[N / 2];                                                                            \
        wgmma_fence();                                                                             \
        _Pragma("unroll") for (int k = 0; k < 4; k++)                                              \
            fn<N>(d, desc_at(0, k), desc_at(16384, k), accumulate || k > 0);                       \
        finish(out, d);                                                                            \
    }
#define RS_KERNEL(kname, fn, N)                                                                    \
    extern "C" __global__ void kname(float *out, const unsigned *a_frag, int accumulate) {         \
        float d[N / 2];                                                                            \
        unsigned a[4];                                                                             \
        load_a(a, a_frag);                                                                         \
        wgmma_fence();                                                                             \
        _Pragma("unroll") for (int k = 0; k < 4; k++)                                              \
            fn<N>(d, a, desc_at(16384, k), accumulate || k > 0);                                   \
        finish(out, d);                                                                            \
    }

// sass: wgmma_bf16_ss_n8 HGMMA.64x8x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_bf16_ss_n8, wgmma_bf16_ss, 8)
// sass: wgmma_bf16_ss_n128 HGMMA.64x128x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_bf16_ss_n128, wgmma_bf16_ss, 128)
// sass: wgmma_bf16_ss_n256 HGMMA.64x256x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_bf16_ss_n256, wgmma_bf16_ss, 256)
// sass: wgmma_bf16_rs_n8 HGMMA.64x8x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_bf16_rs_n8, wgmma_bf16_rs, 8)
// sass: wgmma_bf16_rs_n128 HGMMA.64x128x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_bf16_rs_n128, wgmma_bf16_rs, 128)
// sass: wgmma_bf16_rs_n256 HGMMA.64x256x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_bf16_rs_n256, wgmma_bf16_rs, 256)
// sass: wgmma_f16_ss_n64 HGMMA.64x64x16.F32 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_f16_ss_n64, wgmma_f16_ss, 64)
// sass: wgmma_f16_rs_n24 HGMMA.64x24x16.F32 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_f16_rs_n24, wgmma_f16_rs, 24)
// sass: wgmma_bf16_rs_tb_n128 HGMMA.64x128x16.F32.BF16 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_bf16_rs_tb_n128, wgmma_bf16_rs_tb, 128)
// sass: wgmma_f16_rs_tb_n64 HGMMA.64x64x16.F32 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_f16_rs_tb_n64, wgmma_f16_rs_tb, 64)
// sass: wgmma_e4m3_e4m3_ss_n256 QGMMA.64x256x32.F32.E4M3.E4M3 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_e4m3_e4m3_ss_n256, wgmma_e4m3_e4m3_ss, 256)
// sass: wgmma_e4m3_e4m3_rs_n256 QGMMA.64x256x32.F32.E4M3.E4M3 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_e4m3_e4m3_rs_n256, wgmma_e4m3_e4m3_rs, 256)
// sass: wgmma_e4m3_e5m2_ss_n40 QGMMA.64x40x32.F32.E4M3.E5M2 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_e4m3_e5m2_ss_n40, wgmma_e4m3_e5m2_ss, 40)
// sass: wgmma_e4m3_e5m2_rs_n16 QGMMA.64x16x32.F32.E4M3.E5M2 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_e4m3_e5m2_rs_n16, wgmma_e4m3_e5m2_rs, 16)
// sass: wgmma_e5m2_e4m3_ss_n96 QGMMA.64x96x32.F32.E5M2.E4M3 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_e5m2_e4m3_ss_n96, wgmma_e5m2_e4m3_ss, 96)
// sass: wgmma_e5m2_e4m3_rs_n200 QGMMA.64x200x32.F32.E5M2.E4M3 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_e5m2_e4m3_rs_n200, wgmma_e5m2_e4m3_rs, 200)
// sass: wgmma_e5m2_e5m2_ss_n248 QGMMA.64x248x32.F32.E5M2.E5M2 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
SS_KERNEL(wgmma_e5m2_e5m2_ss_n248, wgmma_e5m2_e5m2_ss, 248)
// sass: wgmma_e5m2_e5m2_rs_n56 QGMMA.64x56x32.F32.E5M2.E5M2 WARPGROUP.ARRIVE WARPGROUP.DEPBAR.LE
RS_KERNEL(wgmma_e5m2_e5m2_rs_n56, wgmma_e5m2_e5m2_rs, 56)
