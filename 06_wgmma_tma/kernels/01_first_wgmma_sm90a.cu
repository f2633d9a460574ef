/* Stage 1 — the first wgmma: one warpgroup computes a 64x128 tile of C from operands that its
 * threads copied into shared memory, in the 128-byte swizzled layout, and waits for each
 * multiply to finish.
 *
 * Builds on: 05_hgemm_mma/kernels/08_final.cu (make diff-06 STAGE=1 shows the change)
 *
 * What changes from chapter 05. mma.sync is a warp instruction on registers: every k16 step
 * each warp first loads its fragments with ldmatrix. wgmma (sm_90a) is a warpgroup instruction
 * (4 warps, 128 threads) that reads both operands straight from shared memory through two
 * 64-bit "matrix descriptors" and accumulates a 64xN block of C in the registers of the 128
 * threads. One wgmma.m64n128k16 does 64*128*16 multiply-adds: as many as 64 mma.sync.m16n8k16,
 * with no ldmatrix at all.
 *
 * The price is a contract about the shared-memory layout. The tensor core reads the tile as
 * rows of 128 bytes (64 bf16 of k) with the 128-byte swizzle: the 16-byte chunk c of row r is
 * stored at chunk c ^ (r % 8) of its row, and the pattern repeats every 8 rows (1024 bytes), so
 * tiles start on 1024-byte boundaries. That is the layout chapter 05's swizzle stage used, and
 * the one TMA writes in stage 2; here the threads write it themselves with ordinary 16-byte
 * stores.
 *
 * The descriptor of such a tile (desc_sw128 in gemm06_sm90a.cuh, which every stage shares; the
 * fields are drawn in the README): the start address in 16-byte units, SBO = 1024 bytes from
 * one 8-row atom to the next, LBO unused by this swizzle mode (16, which encodes as 1), the
 * swizzle mode, and base offset 0 because every tile starts 1024-aligned (align1024, same
 * header). Step k (k = 0..3) of a 64-wide K tile starts 32 bytes further into row 0.
 *
 * The synchronous recipe, per 64-wide K tile:
 *   copy A and B tiles (st.shared) -> fence.proxy.async -> __syncthreads
 *   -> wgmma.fence -> 4 x wgmma (k16 steps) -> commit_group -> wait_group 0 -> __syncthreads.
 * wgmma reads shared memory through the "async proxy", a path that does not see ordinary
 * stores in order: without fence_proxy_async_shared() the tensor core may read stale bytes even
 * after the barrier. Nothing overlaps here: copies, then math, then copies again. Stage 2 hands
 * the copies to TMA, stage 3 overlaps them with the math.
 *
 * What to look for. SASS: HGMMA.64x128x16.F32.BF16 four times in the loop, WARPGROUP.ARRIVE
 * before them, WARPGROUP.DEPBAR after, FENCE.VIEW.ASYNC.S after the copies; no LDSM. In the
 * profile: most warps stall on the barrier and on the global loads (long scoreboard), and the
 * tensor pipe is busy only in short bursts.
 *
 * Shapes: any M and N; K % 8 == 0 (each 16-byte chunk of a row of A and B is either wholly
 * inside K or wholly past it; chunks past M, N or K are stored as zeros, which add nothing). */
#include "stage.h"
#include "gemm06.h"
#include "gemm06_sm90a.cuh"
#include "ptx/fence.cuh"
#include "ptx/smem.cuh"
#include "ptx/wgmma.cuh"

#define BM 64       /* rows of C per block: one wgmma's M */
#define BN 128      /* columns of C per block: the wgmma's N, 64 fp32 accumulators per thread */
#define BK 64       /* k per tile: 64 bf16 = 128 bytes, one swizzle row */
#define THREADS 128 /* one warpgroup */

/* Byte offset of the 16-byte chunk c (0..7) of row r in a tile of 128-byte rows with the
 * 128-byte swizzle. Rows r and r + 8 use the same permutation; 8 rows make one 1024-byte atom. */
static __device__ __forceinline__ unsigned swizzle128(int r, int c) {
    return (unsigned)r * 128 + (unsigned)((c ^ (r % 8)) * 16);
}

/* Copies ROWS rows of X (rows_total x K, row-major) from row0, k0 .. k0 + 63, into the swizzled
 * tile at dst. Thread i copies chunk i % 8 of row i / 8, then 16 rows further, and so on: eight
 * neighbouring threads read one 128-byte piece of a row (coalesced) and write one 128-byte row
 * of the tile, in permuted order but all eight chunks (no bank conflict). */
template <int ROWS>
static __device__ __forceinline__ void copy_tile(unsigned char *dst, const bf16_t *__restrict__ X,
                                                 int row0, int rows_total, int k0, int K) {
    static_assert(ROWS * 8 % THREADS == 0, "whole passes of the block over the tile");
#pragma unroll
    for (int pass = 0; pass < ROWS * 8 / THREADS; pass++) {
        const int i = threadIdx.x + pass * THREADS;
        const int r = i / 8, c = i % 8;
        const int row = row0 + r, k = k0 + 8 * c;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row < rows_total && k < K) v = *(const uint4 *)(X + (size_t)row * K + k);
        *(uint4 *)(dst + swizzle128(r, c)) = v;
    }
}

static __global__ void __launch_bounds__(THREADS)
    first_wgmma_kernel(const bf16_t *__restrict__ A, const bf16_t *__restrict__ B,
                       bf16_t *__restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *a_tile = align1024(smem);     /* 64 rows x 128 bytes = 8 KiB */
    unsigned char *b_tile = a_tile + BM * 128;   /* 128 rows x 128 bytes = 16 KiB, 1024-aligned */
    const unsigned a_s = smem_addr(a_tile), b_s = smem_addr(b_tile);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        copy_tile<BM>(a_tile, A, m0, M, k0, K);
        copy_tile<BN>(b_tile, B, n0, N, k0, K);
        fence_proxy_async_shared(); /* my stores, visible to the async proxy ... */
        __syncthreads();            /* ... and everybody's, before the tensor core reads */

        wgmma_fence(); /* register accesses to d above are ordered before the wgmmas */
        /* Step k reads k = 16k .. 16k + 15 of the tile: 32 bytes into row 0 of each atom; the
         * hardware applies the same XOR to every row's address, so no other field changes. */
#pragma unroll
        for (int k = 0; k < BK / 16; k++)
            wgmma_bf16_ss<BN>(d, desc_sw128(a_s + 32 * k), desc_sw128(b_s + 32 * k), 1);
        wgmma_commit_group();
        wgmma_wait_group<0>(); /* the group has read its tiles and written d */
        wgmma_fence_operands(d);
        __syncthreads(); /* no warp overwrites a tile that another warp's part may still read */
    }

    /* Epilogue, straight from the accumulator fragment (wgmma.cuh): thread t of the warpgroup,
     * warp w = t / 32, lane l, register i holds
     *   row 16w + l/4 + 8 * ((i/2) % 2),   column 8 * (i/4) + 2 * (l%4) + i%2,
     * so registers i and i + 1 (i even) are two neighbouring columns of one row: one bf16x2
     * store when C's rows keep 4-byte alignment (N even), else two 2-byte stores. */
    store_fragment<BN>(d, C, M, N, m0, n0); /* this loop, written once: gemm06_sm90a.cuh */
}

extern "C" int STAGE(gemm06_first_wgmma)(const bf16_t *A, const bf16_t *B, bf16_t *C, int M,
                                         int N, int K, cudaStream_t stream) {
    if (!aligned16(A) || !aligned16(B))
        return launch_unsupported("A and B must be 16-byte aligned");
    const unsigned m_tiles = blocks_for(M, BM);
    if (m_tiles > 65535)
        return launch_unsupported("M > %d: more row tiles than gridDim.y", 65535 * BM);
    const dim3 grid(blocks_for(N, BN), m_tiles);
    first_wgmma_kernel<<<grid, THREADS, GEMM06_SMEM_FIRST_WGMMA, stream>>>(A, B, C, M, N, K);
    return LAUNCH_OK;
}
