/* wgmma (sm_90a only): the Hopper tensor-core instruction. A warpgroup, four consecutive warps
 * whose first warp index is a multiple of 4 (threads 128*g .. 128*g + 127 of the block), issues
 * one asynchronous matrix multiply-accumulate D(64xN) += A(64xK) * B(KxN): B is read from
 * shared memory through a matrix descriptor, A either from shared memory too (the "ss" form)
 * or from registers spread over the 128 threads (the "rs" form), and D lives in registers.
 * All 128 threads must execute each wgmma instruction together (.sync.aligned), with the same
 * descriptors.
 *
 * PTX ISA 9.0, 9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions";
 * SASS as ptxas 13.0 writes it for sm_90a (tests/wgmma_wrappers_sm90a.cu checks it):
 *   wgmma_fence          wgmma.fence          9.7.15.7.1  WARPGROUP.ARRIVE
 *   wgmma_commit_group   wgmma.commit_group   9.7.15.7.2  no instruction: marks the group's last
 *                                                         HGMMA/QGMMA with "gsb0"
 *   wgmma_wait_group<N>  wgmma.wait_group     9.7.15.7.3  WARPGROUP.DEPBAR.LE gsb0, N
 *   wgmma_bf16_ss/_rs    wgmma.mma_async      9.7.15.5.2  HGMMA.64xNx16.F32.BF16
 *   wgmma_f16_ss/_rs                                      HGMMA.64xNx16.F32 (f16 is the default)
 *   wgmma_e4m3_e5m2_ss/_rs and the other fp8 pairs        QGMMA.64xNx32.F32.E4M3.E5M2 ...
 *     (the rs form names a register for A: HGMMA.64x256x16.F32.BF16 R24, R152, gdesc[UR4], ...)
 *   wgmma_bf16_rs_tb, wgmma_f16_rs_tb                     the same, B's descriptor marked .tnspB
 *   wgmma_desc           9.7.15.5.1.2.2 "Matrix Descriptor Format"
 *   accumulator and A fragments: 9.7.15.5.1.1 "Register Fragments"; proxies: 9.7.15.4 "Async Proxy"
 * Only sm_90a has them (not sm_90, not sm_100): -gencode=arch=compute_90a,code=sm_90a.
 *
 * Why the fence, the commit and the wait. wgmma.mma_async only starts the multiply: it returns
 * before the tensor core has read its operands or written D. Hence three rules:
 *   - wgmma_fence() before the first wgmma, and again whenever the accumulators or the A
 *     registers were touched by ordinary instructions since the last wgmma: it orders those
 *     register accesses before the wgmma's. (Back-to-back wgmmas of one shape on the same
 *     accumulators need none between them.) The wgmma reads shared memory through the async
 *     proxy, so tiles written by ordinary stores also need fence_proxy_async_shared() (fence.cuh)
 *     and a barrier; tiles landed by TMA and waited for on their mbarrier need nothing more.
 *   - wgmma_commit_group() closes the batch of wgmmas issued since the last commit into one
 *     group (one per thread: every thread of the warpgroup commits).
 *   - wgmma_wait_group<N>() waits until at most N groups are in flight. Before the accumulators
 *     are read, or the shared memory (or A registers) of a group is overwritten, its group must
 *     be complete: wait<0> waits for all, wait<1> lets the newest group run on while the next
 *     stage is refilled.
 * The compiler does not know that the wgmma keeps working on the accumulator registers after
 * the instruction is issued: wgmma_fence_operands(d) pins them (see it below).
 *
 * Accumulator layout (fp32, m64nN: float d[N/2] per thread). Thread t of the warpgroup
 * (0..127), warp w = t / 32, lane l = t % 32, register i:
 *     row    = 16 * w + l / 4 + 8 * ((i / 2) % 2)
 *     column = 8 * (i / 4) + 2 * (l % 4) + i % 2
 * i.e. each warp owns 16 rows, and within every 8-column slice j (registers 4j .. 4j+3) a lane
 * holds the pair (row, 2*(l%4) + 0..1) and the pair eight rows below: the mma.sync m16n8 C
 * layout (mma.cuh), repeated N/8 times along the columns.
 *
 * A in registers (rs): four 32-bit registers a[0..3] per thread; warp w holds rows 16w..16w+15,
 * g = l / 4, and the lower-numbered element sits in the lower bits (the mma.sync A layout):
 *   bf16/f16, k16, two elements per register, c = 2 * (l % 4):
 *     a0: (16w + g, c..c+1)      a1: (16w + g + 8, c..c+1)
 *     a2: (16w + g, c+8..c+9)    a3: (16w + g + 8, c+8..c+9)
 *   e4m3/e5m2, k32, four elements per register, c = 4 * (l % 4):
 *     a0: (16w + g, c..c+3)      a1: (16w + g + 8, c..c+3)
 *     a2: (16w + g, c+16..c+19)  a3: (16w + g + 8, c+16..c+19)
 *   In bytes both are the same: a0 is the 4 bytes at byte 4 * (l % 4) of row g of the 32-byte
 *   k-step, a2 the 4 bytes 16 further.
 *
 * Both operands here are K-major: A is stored as rows of K (MxK, row-major) and B as rows of K
 * (NxK, row-major, i.e. the GEMM computes A * B^T); the transpose immediates are 0. fp8 wgmma
 * accepts only K-major operands anyway.
 *
 * B N-major (the _tb forms, 16-bit types only): B stored as rows of N (KxN row-major), as V is
 * in attention's O = P V (chapter 08, stage 5). imm-trans-b = 1 (PTX ISA 9.7.15.5.1.2 "Shared
 * Memory Matrix Layout": 1 means N-major for B). With the 128-byte swizzle the canonical
 * MN-major layout ("Asynchronous Warpgroup Level Canonical Layouts"; in elements, T = 8 for
 * 16-bit types) is
 *     ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
 * i.e. 64 consecutive N elements (one 128-byte row of the swizzle atom), 8 such rows for
 * 8 consecutive k (128 bytes apart), then the next 64 N at LBO and the next 8 k at SBO. A
 * KxN tile loaded by TMA in 64-column boxes (one swizzled 128-byte panel of K rows each) is
 * exactly that with SBO = 1024 (8 rows of 128 bytes) and LBO = the panel's size (K * 128),
 * and the k16 step s starts 16 rows further: desc(tile + 2048 * s, SWIZZLE_128B, K * 128,
 * 1024). */
#ifndef PTX_WGMMA_CUH
#define PTX_WGMMA_CUH

#include <stdint.h>

#include <cuda_runtime.h>

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit_group() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N> __device__ __forceinline__ void wgmma_wait_group() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* An empty asm that claims to read and rewrite every accumulator register. The wgmma asm
 * statements and the wait are ordered among themselves (volatile), but an ordinary use of d
 * (d[i] * scale, a conversion to bf16) carries no dependence on the wait and may be scheduled
 * before it, reading registers the tensor core has not written yet. Call this right after
 * wgmma_wait_group (and before the first wgmma_fence of a batch that follows ordinary code on d):
 * uses of d can then move across neither. It emits no instruction. */
template <int R> __device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}
/* The same for the A fragment of the rs form (registers of two 16-bit values). The tensor core
 * reads them after the wgmma is issued, until its wgmma_wait_group: pinning them after the wait
 * keeps them live (and unchanged) while the product is in flight. */
template <int R> __device__ __forceinline__ void wgmma_fence_operands(unsigned (&a)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+r"(a[i])::"memory");
}

/* ---- shared-memory matrix descriptor ---------------------------------------------------------
 * A 64-bit value that tells the tensor core where an operand tile sits in shared memory and how
 * it is laid out (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format"):
 *   bits  0-13  start address (smem_addr & 0x3FFFF) >> 4: the tile's first byte, 16-byte units
 *   bits 16-29  leading-dimension byte offset (LBO) >> 4
 *   bits 32-45  stride-dimension byte offset  (SBO) >> 4
 *   bits 49-51  base offset: 0 when the tile's swizzle pattern starts on its natural boundary
 *               (1024 bytes for the 128-byte swizzle, 512 for 64, 256 for 32); otherwise
 *               (pattern start address >> 7) & 7. wgmma_desc always writes 0: place tiles on
 *               those boundaries.
 *   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte (the enum below)
 *   other bits  0
 * The operand is seen as "core matrices" of 8 rows x 16 bytes (8 bf16 or 16 fp8 per row). For
 * a K-major operand with the 128-byte swizzle, the course's one case, a tile of R rows x 64
 * bf16 (128 bytes = one swizzle row) is stored as TMA writes it: row r at byte 128 * r, its
 * eight 16-byte chunks permuted by chunk ^= (r % 8). Then
 *   SBO = 1024: the distance from one group of 8 rows (one 8 x 128-byte swizzle atom) to the
 *         next, along M (for A) or N (for B);
 *   LBO is unused: the whole K extent of one instruction (32 bytes: k16 of bf16, k32 of fp8)
 *         lies within one 128-byte row, so there is no "next core matrix along K" to step to
 *         (the PTX ISA's stride table, in its tcgen05 edition: "Swizzled layouts: not used,
 *         assumed to be 1"). Pass 16, which encodes as 1.
 * Stepping along K inside the 128-byte row: the k-th instruction of a 64-wide bf16 K tile
 * starts at tile + 32 * k bytes (k = 0..3), so its descriptor is wgmma_desc(tile + 32 * k, ...)
 * (the same as adding 2 * k to the encoded start address), as CUTLASS, DeepGEMM and fast.cu do.
 * The start address is then no longer 1024-aligned, yet the base offset stays 0: the hardware
 * applies the XOR swizzle to the address bits themselves (bits 4-6 ^= bits 7-9 of the address
 * it computes for each row and chunk), the same function of the address that TMA used when it
 * wrote the tile, so an address inside row 0 of an aligned atom still finds every row's chunk.
 * That is why the tile itself (not each k-step) must be 1024-byte aligned.
 * tests/test_hopper_sm90a.cu checks exactly this case on the GPU (TMA-loaded tiles, K = 128). */
enum wgmma_swizzle {
    WGMMA_SWIZZLE_NONE = 0,
    WGMMA_SWIZZLE_128B = 1,
    WGMMA_SWIZZLE_64B = 2,
    WGMMA_SWIZZLE_32B = 3
};

__device__ __forceinline__ uint64_t wgmma_desc(unsigned smem_addr, wgmma_swizzle sw,
                                               unsigned lbo_bytes, unsigned sbo_bytes) {
    uint64_t start = (smem_addr & 0x3FFFF) >> 4;
    uint64_t lbo = (lbo_bytes & 0x3FFFF) >> 4;
    uint64_t sbo = (sbo_bytes & 0x3FFFF) >> 4;
    return start | (lbo << 16) | (sbo << 32) | ((uint64_t)sw << 62);
}

/* ---- the instructions ------------------------------------------------------------------------
 * d = A * B + (scale_d ? d : 0): scale_d = 0 overwrites d (the first k-step of a tile, no
 * zeroing of the accumulators needed), 1 accumulates. It is a run-time predicate
 * (setp.ne.b32 p, scale_d, 0), so one instruction serves both in a loop.
 *
 *   template <int N> void wgmma_bf16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
 *                                       int scale_d)
 *   template <int N> void wgmma_bf16_rs(float (&d)[N / 2], const unsigned (&a)[4],
 *                                       uint64_t desc_b, int scale_d)
 *   template <int N> void wgmma_bf16_rs_tb(float (&d)[N / 2], const unsigned (&a)[4],
 *                                          uint64_t desc_b, int scale_d)
 *     the rs form with B N-major (imm-trans-b = 1; see "B N-major" above)
 *   the same for f16 (m64nNk16: wgmma_f16_ss, _rs, _rs_tb) and for the fp8 pairs (m64nNk32):
 *   wgmma_e4m3_e4m3_ss/_rs, wgmma_e4m3_e5m2_*, wgmma_e5m2_e4m3_*, wgmma_e5m2_e5m2_* (A type first)
 * for N = 8, 16, ..., 256. Any other N fails to compile (the primary template's static_assert).
 * Each N is an explicit specialization, compiled only where a kernel calls it.
 *
 * How the family is generated. Inline asm numbers its operands in order, outputs first, and nvcc
 * does not accept named operands (%[name]), so the N/2 accumulators are %0 .. %(N/2 - 1) and the
 * inputs come after them. The preprocessor cannot add, but it can paste digits: operand
 * 10 * t + u is written "%" "t" "u" (nvcc reads "%05" as operand 5). WGMMA_N(N, t, r) at the end
 * declares one N by its register count N/2 = 10 * t + r, with r in 2..10 so that the last run
 * of ten is never empty (a static_assert checks the sum). From t and r the macros below spell the
 * accumulator list and the numbers of the six operands after it. You do not need to read them to
 * use the wrappers. */

#define WG_STR(x) #x
#define WG_NUM(t, u) "%" WG_STR(t) #u /* operand 10 * t + u; t is expanded first */

/* Element macros E(t, u) for one accumulator, followed by its separator; E##_END for the last. */
#define WG_S(t, u) WG_NUM(t, u) ", "
#define WG_S_END(t, u) WG_NUM(t, u)
#define WG_C(t, u) "+f"(d[(t) * 10 + u]),
#define WG_C_END(t, u) "+f"(d[(t) * 10 + u])

/* The ten operands 10t .. 10t + 9, and all the full runs of ten below 10t. */
#define WG_TEN(E, t) E(t, 0) E(t, 1) E(t, 2) E(t, 3) E(t, 4) E(t, 5) E(t, 6) E(t, 7) E(t, 8) E(t, 9)
#define WG_TENS_0(E)
#define WG_TENS_1(E) WG_TEN(E, 0)
#define WG_TENS_2(E) WG_TENS_1(E) WG_TEN(E, 1)
#define WG_TENS_3(E) WG_TENS_2(E) WG_TEN(E, 2)
#define WG_TENS_4(E) WG_TENS_3(E) WG_TEN(E, 3)
#define WG_TENS_5(E) WG_TENS_4(E) WG_TEN(E, 4)
#define WG_TENS_6(E) WG_TENS_5(E) WG_TEN(E, 5)
#define WG_TENS_7(E) WG_TENS_6(E) WG_TEN(E, 6)
#define WG_TENS_8(E) WG_TENS_7(E) WG_TEN(E, 7)
#define WG_TENS_9(E) WG_TENS_8(E) WG_TEN(E, 8)
#define WG_TENS_10(E) WG_TENS_9(E) WG_TEN(E, 9)
#define WG_TENS_11(E) WG_TENS_10(E) WG_TEN(E, 10)
#define WG_TENS_12(E) WG_TENS_11(E) WG_TEN(E, 11)

/* The last run, operands 10t .. 10t + r - 1, ending without a separator. */
#define WG_LAST_2(E, t) E(t, 0) E##_END(t, 1)
#define WG_LAST_4(E, t) E(t, 0) E(t, 1) E(t, 2) E##_END(t, 3)
#define WG_LAST_6(E, t) E(t, 0) E(t, 1) E(t, 2) E(t, 3) E(t, 4) E##_END(t, 5)
#define WG_LAST_8(E, t) E(t, 0) E(t, 1) E(t, 2) E(t, 3) E(t, 4) E(t, 5) E(t, 6) E##_END(t, 7)
#define WG_LAST_10(E, t)                                                                           \
    E(t, 0) E(t, 1) E(t, 2) E(t, 3) E(t, 4) E(t, 5) E(t, 6) E(t, 7) E(t, 8) E##_END(t, 9)

/* The accumulator list "%00, %01, ..." (E = WG_S) or "+f"(d[0]), ... (E = WG_C). */
#define WG_ACC(E, t, r) WG_TENS_##t(E) WG_LAST_##r(E, t)

/* The numbers of the six operands after the accumulators, 10t + r .. 10t + r + 5, as six
 * string literals; past 10t + 9 they continue in the next run of ten, WG_NEXT_t. */
#define WG_NEXT_0 1
#define WG_NEXT_1 2
#define WG_NEXT_2 3
#define WG_NEXT_3 4
#define WG_NEXT_4 5
#define WG_NEXT_5 6
#define WG_NEXT_6 7
#define WG_NEXT_7 8
#define WG_NEXT_8 9
#define WG_NEXT_9 10
#define WG_NEXT_10 11
#define WG_NEXT_11 12
#define WG_NEXT_12 13
#define WG_IN_2(t)                                                                                 \
    WG_NUM(t, 2), WG_NUM(t, 3), WG_NUM(t, 4), WG_NUM(t, 5), WG_NUM(t, 6), WG_NUM(t, 7)
#define WG_IN_4(t)                                                                                 \
    WG_NUM(t, 4), WG_NUM(t, 5), WG_NUM(t, 6), WG_NUM(t, 7), WG_NUM(t, 8), WG_NUM(t, 9)
#define WG_IN_6(t)                                                                                 \
    WG_NUM(t, 6), WG_NUM(t, 7), WG_NUM(t, 8), WG_NUM(t, 9), WG_NUM(WG_NEXT_##t, 0),                \
        WG_NUM(WG_NEXT_##t, 1)
#define WG_IN_8(t)                                                                                 \
    WG_NUM(t, 8), WG_NUM(t, 9), WG_NUM(WG_NEXT_##t, 0), WG_NUM(WG_NEXT_##t, 1),                    \
        WG_NUM(WG_NEXT_##t, 2), WG_NUM(WG_NEXT_##t, 3)
#define WG_IN_10(t)                                                                                \
    WG_NUM(WG_NEXT_##t, 0), WG_NUM(WG_NEXT_##t, 1), WG_NUM(WG_NEXT_##t, 2),                        \
        WG_NUM(WG_NEXT_##t, 3), WG_NUM(WG_NEXT_##t, 4), WG_NUM(WG_NEXT_##t, 5)

/* One specialization. `shape` is "k16.f32.bf16.bf16" and the like; `imm` the immediates after
 * the predicate: imm-scale-a, imm-scale-b (1: no negation) and, for 16-bit types, the transpose
 * immediates (0: K-major). i0.. are the operand numbers after the accumulators.
 * ss: desc_a = i0, desc_b = i1, scale_d = i2.  rs: a[0..3] = i0..i3, desc_b = i4, scale_d = i5. */
#define WG_SS(name, N, shape, imm, t, r, i0, i1, i2, i3, i4, i5)                                   \
    template <>                                                                                    \
    __device__ __forceinline__ void name<N>(float(&d)[N / 2], uint64_t desc_a, uint64_t desc_b,    \
                                            int scale_d) {                                         \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " i2 ", 0;\n"                               \
                     "wgmma.mma_async.sync.aligned.m64n" #N shape " {" WG_ACC(WG_S, t, r)          \
                     "}, " i0 ", " i1 ", p" imm ";\n}\n"                                           \
                     : WG_ACC(WG_C, t, r)                                                          \
                     : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                    \
    }
#define WG_RS(name, N, shape, imm, t, r, i0, i1, i2, i3, i4, i5)                                   \
    template <>                                                                                    \
    __device__ __forceinline__ void name<N>(float(&d)[N / 2], const unsigned(&a)[4],               \
                                            uint64_t desc_b, int scale_d) {                        \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " i5 ", 0;\n"                               \
                     "wgmma.mma_async.sync.aligned.m64n" #N shape " {" WG_ACC(WG_S, t, r)          \
                     "}, {" i0 ", " i1 ", " i2 ", " i3 "}, " i4 ", p" imm ";\n}\n"                 \
                     : WG_ACC(WG_C, t, r)                                                          \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));    \
    }

/* Primary templates: only the N below exist, and another N fails this static_assert. nvcc reads
 * a .cu file twice, for the host and for the device, and only the device pass needs the 384
 * specializations: the host pass sees the primary templates alone, with empty bodies (that
 * halves what this header adds to a compile, about 1 s). */
#ifdef __CUDA_ARCH__
#define WG_NO_SUCH_N                                                                               \
    { static_assert(N < 0, "wgmma: N must be one of 8, 16, ..., 256"); }
#else
#define WG_NO_SUCH_N {}
#endif
#define WG_PRIMARY_RS(name_rs)                                                                     \
    template <int N>                                                                               \
    __device__ __forceinline__ void name_rs(float(&)[N / 2], const unsigned(&)[4], uint64_t, int)  \
        WG_NO_SUCH_N
#define WG_PRIMARY(name_ss, name_rs)                                                               \
    template <int N>                                                                               \
    __device__ __forceinline__ void name_ss(float(&)[N / 2], uint64_t, uint64_t, int)              \
        WG_NO_SUCH_N                                                                               \
    WG_PRIMARY_RS(name_rs)
WG_PRIMARY(wgmma_bf16_ss, wgmma_bf16_rs)
WG_PRIMARY(wgmma_f16_ss, wgmma_f16_rs)
WG_PRIMARY_RS(wgmma_bf16_rs_tb)
WG_PRIMARY_RS(wgmma_f16_rs_tb)
WG_PRIMARY(wgmma_e4m3_e4m3_ss, wgmma_e4m3_e4m3_rs)
WG_PRIMARY(wgmma_e4m3_e5m2_ss, wgmma_e4m3_e5m2_rs)
WG_PRIMARY(wgmma_e5m2_e4m3_ss, wgmma_e5m2_e4m3_rs)
WG_PRIMARY(wgmma_e5m2_e5m2_ss, wgmma_e5m2_e5m2_rs)

/* Every form for one N; the six operand numbers arrive as the last six arguments. */
#define WG_FORMS(N, t, r, ...)                                                                     \
    WG_SS(wgmma_bf16_ss, N, "k16.f32.bf16.bf16", ", 1, 1, 0, 0", t, r, __VA_ARGS__)                \
    WG_RS(wgmma_bf16_rs, N, "k16.f32.bf16.bf16", ", 1, 1, 0", t, r, __VA_ARGS__)                   \
    WG_SS(wgmma_f16_ss, N, "k16.f32.f16.f16", ", 1, 1, 0, 0", t, r, __VA_ARGS__)                   \
    WG_RS(wgmma_f16_rs, N, "k16.f32.f16.f16", ", 1, 1, 0", t, r, __VA_ARGS__)                      \
    WG_RS(wgmma_bf16_rs_tb, N, "k16.f32.bf16.bf16", ", 1, 1, 1", t, r, __VA_ARGS__)                \
    WG_RS(wgmma_f16_rs_tb, N, "k16.f32.f16.f16", ", 1, 1, 1", t, r, __VA_ARGS__)                   \
    WG_SS(wgmma_e4m3_e4m3_ss, N, "k32.f32.e4m3.e4m3", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_RS(wgmma_e4m3_e4m3_rs, N, "k32.f32.e4m3.e4m3", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_SS(wgmma_e4m3_e5m2_ss, N, "k32.f32.e4m3.e5m2", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_RS(wgmma_e4m3_e5m2_rs, N, "k32.f32.e4m3.e5m2", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_SS(wgmma_e5m2_e4m3_ss, N, "k32.f32.e5m2.e4m3", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_RS(wgmma_e5m2_e4m3_rs, N, "k32.f32.e5m2.e4m3", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_SS(wgmma_e5m2_e5m2_ss, N, "k32.f32.e5m2.e5m2", ", 1, 1", t, r, __VA_ARGS__)                 \
    WG_RS(wgmma_e5m2_e5m2_rs, N, "k32.f32.e5m2.e5m2", ", 1, 1", t, r, __VA_ARGS__)

#define WGMMA_N(N, t, r)                                                                           \
    static_assert(10 * (t) + (r) == (N) / 2, "WGMMA_N: 10 * t + r must be N / 2");                 \
    WG_FORMS(N, t, r, WG_IN_##r(t))

#ifdef __CUDA_ARCH__
/*      N   N/2 = 10t + r */
WGMMA_N(8, 0, 4)
WGMMA_N(16, 0, 8)
WGMMA_N(24, 1, 2)
WGMMA_N(32, 1, 6)
WGMMA_N(40, 1, 10)
WGMMA_N(48, 2, 4)
WGMMA_N(56, 2, 8)
WGMMA_N(64, 3, 2)
WGMMA_N(72, 3, 6)
WGMMA_N(80, 3, 10)
WGMMA_N(88, 4, 4)
WGMMA_N(96, 4, 8)
WGMMA_N(104, 5, 2)
WGMMA_N(112, 5, 6)
WGMMA_N(120, 5, 10)
WGMMA_N(128, 6, 4)
WGMMA_N(136, 6, 8)
WGMMA_N(144, 7, 2)
WGMMA_N(152, 7, 6)
WGMMA_N(160, 7, 10)
WGMMA_N(168, 8, 4)
WGMMA_N(176, 8, 8)
WGMMA_N(184, 9, 2)
WGMMA_N(192, 9, 6)
WGMMA_N(200, 9, 10)
WGMMA_N(208, 10, 4)
WGMMA_N(216, 10, 8)
WGMMA_N(224, 11, 2)
WGMMA_N(232, 11, 6)
WGMMA_N(240, 11, 10)
WGMMA_N(248, 12, 4)
WGMMA_N(256, 12, 8)
#endif

#endif
