/* mma.sync m16n8k16 (sm_80+): one warp multiplies a 16x16 fp16 (or bf16) tile of A by a 16x8
 * tile of B and adds a 16x8 accumulator, all operands in registers. PTX ISA 9.7.14.5.8.
 * SASS: HMMA.16816.F32 / HMMA.16816.F16 / HMMA.16816.F32.BF16.
 *
 * Fragment layouts (lane t, group g = t/4, pair p = 2*(t%4)); each register holds two fp16 or
 * bf16, the lower column (A, C) or k (B) in the low 16 bits:
 *   A (16x16, row-major)  a0: (g,   p..p+1)   a1: (g+8, p..p+1)
 *                         a2: (g,   p+8..p+9) a3: (g+8, p+8..p+9)
 *   B (16x8, "col")       b0: (k = p..p+1,   n = g)   b1: (k = p+8..p+9, n = g)
 *   C/D fp32 (16x8)       c0, c1: (g, p), (g, p+1)    c2, c3: (g+8, p), (g+8, p+1)
 *   C/D fp16 (16x8)       c0: (g, p..p+1) as half2   c1: (g+8, p..p+1)
 * ldmatrix_x4 on a row-major 16x16 tile gives a0..a3 in order; ldmatrix_x2 (or half of an x4)
 * on B stored n-major ([n][k], the TN layout) gives b0, b1; ldmatrix_x2_trans does the same
 * from B stored k-major ([k][n], the NN layout).
 *
 * The f16-accumulating form runs at about the same rate on Hopper (docs/anchors.md, "Ceilings": 652 vs 644
 * TFLOPS) and halves the accumulator registers, but rounds the running sum to fp16 after every
 * instruction: see 05_hgemm_mma's README for what that costs in accuracy. */
#ifndef PTX_MMA_CUH
#define PTX_MMA_CUH

#include <cuda_runtime.h>

/* Plain asm (not volatile): the mma only reads and writes registers, so the compiler may
 * schedule it freely around the shared-memory loads. */

/* d = a * b + d, fp16 inputs, fp32 accumulators (d[4]). */
__device__ __forceinline__ void mma_m16n8k16_f32(float d[4], const unsigned a[4],
                                                 const unsigned b[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d = a * b + d, fp16 inputs, fp16 accumulators (d[2], each two halves). */
__device__ __forceinline__ void mma_m16n8k16_f16(unsigned d[2], const unsigned a[4],
                                                 const unsigned b[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
        "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d = a * b + d, bf16 inputs, fp32 accumulators: the same fragment layouts as the fp16 form
 * (bf16 has no bf16-accumulating mma.sync). */
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float d[4], const unsigned a[4],
                                                      const unsigned b[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif
