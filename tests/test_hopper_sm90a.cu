/* The Hopper pieces of chapter 06, each seen working on its own: a TMA load that lands a
 * swizzled tile in shared memory and signals an mbarrier, a single-warpgroup wgmma GEMM fed by
 * such loads, and a TMA store. Every kernel is one CTA of 128 threads (one warpgroup).
 *
 *   TMA load    a tensor map (built on the host, common/tensor_map.h) describes the tensor and
 *               the box; one thread arms an mbarrier with the box's byte count and issues the
 *               copy; everyone waits on the barrier's phase. The tile lands 128-byte swizzled:
 *               16-byte chunk j of row r sits at chunk j ^ (r % 8) of that row.
 *   wgmma       reads both operands from those swizzled tiles through matrix descriptors
 *               (common/ptx/wgmma.cuh) and accumulates C in registers spread over the 128
 *               threads; the kernel writes them out by the accumulator layout.
 *   TMA store   threads write a tile to shared memory, fence it into the async proxy, and one
 *               thread stores it; the engine clips the box at the tensor's edge.
 *
 * Checked against a CPU fp64 reference, with seeded random non-zero inputs (multiples of 1/8 in
 * [-2, 2], exact in bf16 and e4m3) and outputs poisoned with NaN bytes before each launch.
 * Prints PASS/FAIL/SKIP lines and exits 0; without a GPU of compute capability 9.0 every test is
 * a SKIP. Build: nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Icommon
 * tests/test_hopper_sm90a.cu common/tensor_map.c (no -lcuda: the tensor map comes through
 * the runtime's driver entry point). */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "ptx/fence.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "rng.h"
#include "tensor_map.h"
#include "types.h"

/* ---- device side -------------------------------------------------------------------------- */

extern __shared__ unsigned char dyn_smem[];

/* Dynamic shared memory rounded up to 1024 bytes: a 128-byte-swizzled tile must start on a
 * 1024-byte boundary, because TMA and wgmma both derive the swizzle (8 rows of 128 bytes) from
 * the address bits. Launches ask for 1 KB more than their tiles need. */
__device__ unsigned char *smem_1024() {
    unsigned misalign = smem_addr(dyn_smem) % 1024;
    return dyn_smem + (misalign ? 1024 - misalign : 0);
}

/* One thread initializes the barrier for one arrival (the thread that will arm it), and fences
 * the init into the async proxy, where the TMA engine will complete bytes on it. */
__device__ void barrier_init(unsigned bar) {
    if (threadIdx.x == 0) {
        mbarrier_init(bar, 1);
        fence_proxy_async_shared();
    }
    __syncthreads();
}

/* Where element (r, c) of a tile with 128-byte rows sits after the 128-byte swizzle, in bytes
 * from the tile's start: the 16-byte chunk index is XORed with the row index modulo 8. */
__device__ unsigned swizzle128(int r, int c_bytes) {
    return r * 128 + ((((c_bytes / 16) ^ (r % 8)) * 16) | (c_bytes % 16));
}

/* (a) Loads the 64x64 bf16 box at column c0, row c1; writes it out unswizzled, row-major. */
extern "C" __global__ void tma_load_tile(const __grid_constant__ CUtensorMap map, bf16_t *out,
                                         int c0, int c1) {
    __shared__ __align__(8) unsigned long long bar_storage;
    unsigned bar = smem_addr(&bar_storage);
    unsigned char *tile = smem_1024();
    barrier_init(bar);
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(bar, 64 * 64 * sizeof(bf16_t)); /* the whole box, edges too */
        tma_load_2d(smem_addr(tile), &map, bar, c0, c1);
    }
    mbarrier_wait_parity(bar, 0); /* phase 0 completes when the bytes have landed */
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
        int r = i / 64, c = i % 64;
        out[i] = *(const bf16_t *)(tile + swizzle128(r, c * (int)sizeof(bf16_t)));
    }
}

/* Descriptor of a K-major operand tile with 128-byte rows and the 128-byte swizzle: SBO = 1024
 * bytes from one 8-row group to the next, LBO unused (wgmma.cuh). */
__device__ uint64_t desc_sw128(unsigned addr) {
    return wgmma_desc(addr, WGMMA_SWIZZLE_128B, 16, 1024);
}

/* Writes the 64xN fp32 accumulators to C (row-major) by the wgmma accumulator layout: thread t
 * of the warpgroup, register i holds row 16*(t/32) + (t%32)/4 + 8*((i/2)%2), column
 * 8*(i/4) + 2*(t%4) + i%2. */
template <int N> __device__ void store_accumulators(const float (&d)[N / 2], float *c) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < N / 2; i++) {
        int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        c[row * N + col] = d[i];
    }
}

/* The operands in shared memory: K_TILES tiles of 128-byte rows along K (64 bf16 or 128 fp8
 * each), A tiles of 64 rows, B tiles of N rows, each 1024-byte aligned. One barrier counts all
 * their bytes. map_a is NULL when A comes from registers. */
constexpr int K_TILES = 2;

__device__ void load_operands(const CUtensorMap *map_a, const CUtensorMap *map_b, unsigned a_s,
                              unsigned b_s, int n, int elems_per_row, unsigned bar) {
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(bar, K_TILES * ((map_a ? 64 : 0) + n) * 128);
        for (int kt = 0; kt < K_TILES; kt++) {
            if (map_a) tma_load_2d(a_s + kt * 64 * 128, map_a, bar, kt * elems_per_row, 0);
            tma_load_2d(b_s + kt * n * 128, map_b, bar, kt * elems_per_row, 0);
        }
    }
    mbarrier_wait_parity(bar, 0);
}

/* Accumulators start as NaN: the first wgmma (scale_d = 0) must overwrite them, not add to them. */
template <int R> __device__ void poison_accumulators(float (&d)[R]) {
    for (int i = 0; i < R; i++) d[i] = __int_as_float(0x7fffffff);
}

/* (b) C(64xN) = A(64xK) * B(NxK)^T, bf16 in, fp32 out, both operands by TMA. Each 128-byte row
 * of a tile holds 64 k values; one wgmma consumes 16 of them (32 bytes), so the k-th step
 * within a tile starts 32 * k bytes into it: row 0 of the swizzle atom, from which the hardware
 * finds the other rows' chunks by the same XOR that TMA used (wgmma.cuh). */
template <int N>
__global__ void gemm_bf16_ss(const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_b, float *c) {
    __shared__ __align__(8) unsigned long long bar_storage;
    unsigned bar = smem_addr(&bar_storage);
    unsigned a_s = smem_addr(smem_1024()), b_s = a_s + K_TILES * 64 * 128;
    barrier_init(bar);
    load_operands(&map_a, &map_b, a_s, b_s, N, 64, bar);

    float d[N / 2];
    poison_accumulators(d);
    wgmma_fence();
#pragma unroll
    for (int kt = 0; kt < K_TILES; kt++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            wgmma_bf16_ss<N>(d, desc_sw128(a_s + kt * 64 * 128 + 32 * k),
                             desc_sw128(b_s + kt * N * 128 + 32 * k), kt > 0 || k > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);
    store_accumulators<N>(d, c);
}

/* The same with A from registers (rs form): each thread loads its fragment of A from global
 * memory, by the layout of wgmma.cuh (warp w holds rows 16w..16w+15; lane l holds rows l/4 and
 * l/4 + 8 of those, columns 2*(l%4) + 0..1 and + 8..9 of each 16-wide k-step). */
template <int N>
__global__ void gemm_bf16_rs(const bf16_t *a, const __grid_constant__ CUtensorMap map_b, float *c) {
    constexpr int K = K_TILES * 64;
    __shared__ __align__(8) unsigned long long bar_storage;
    unsigned bar = smem_addr(&bar_storage);
    unsigned b_s = smem_addr(smem_1024());
    barrier_init(bar);
    load_operands(NULL, &map_b, 0, b_s, N, 64, bar);

    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
    unsigned frag[K / 16][4];
    for (int s = 0; s < K / 16; s++) {
        const bf16_t *p = a + row * K + 16 * s + col;
        frag[s][0] = *(const unsigned *)p;               /* (row,     col .. col+1)   */
        frag[s][1] = *(const unsigned *)(p + 8 * K);     /* (row + 8, col .. col+1)   */
        frag[s][2] = *(const unsigned *)(p + 8);         /* (row,     col+8 .. col+9) */
        frag[s][3] = *(const unsigned *)(p + 8 * K + 8); /* (row + 8, col+8 .. col+9) */
    }

    float d[N / 2];
    poison_accumulators(d);
    wgmma_fence(); /* orders the fragment loads and the NaN writes before the wgmma reads them */
#pragma unroll
    for (int s = 0; s < K / 16; s++)
        wgmma_bf16_rs<N>(d, frag[s], desc_sw128(b_s + (s / 4) * N * 128 + 32 * (s % 4)), s > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);
    store_accumulators<N>(d, c);
}

/* fp8: e4m3 x e4m3, fp32 out. A 128-byte tile row holds 128 k values; one wgmma consumes 32 of
 * them (32 bytes again), so the descriptors step exactly as for bf16. */
template <int N>
__global__ void gemm_e4m3_ss(const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_b, float *c) {
    __shared__ __align__(8) unsigned long long bar_storage;
    unsigned bar = smem_addr(&bar_storage);
    unsigned a_s = smem_addr(smem_1024()), b_s = a_s + K_TILES * 64 * 128;
    barrier_init(bar);
    load_operands(&map_a, &map_b, a_s, b_s, N, 128, bar);

    float d[N / 2];
    poison_accumulators(d);
    wgmma_fence();
#pragma unroll
    for (int kt = 0; kt < K_TILES; kt++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            wgmma_e4m3_e4m3_ss<N>(d, desc_sw128(a_s + kt * 64 * 128 + 32 * k),
                                  desc_sw128(b_s + kt * N * 128 + 32 * k), kt > 0 || k > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);
    store_accumulators<N>(d, c);
}

/* (c) Threads copy a 64x64 bf16 tile into shared memory (plain row-major, no swizzle); each
 * fences its writes into the async proxy; after the barrier one thread stores the tile at
 * (0, 0) and at (64, 64), where the tensor's edge clips it. */
extern "C" __global__ void tma_store_tile(const __grid_constant__ CUtensorMap map,
                                          const bf16_t *tile_in) {
    bf16_t *tile = (bf16_t *)smem_1024();
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) tile[i] = tile_in[i];
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, smem_addr(tile), 0, 0);
        tma_store_2d(&map, smem_addr(tile), 64, 64);
        tma_store_commit();
        tma_store_wait<0>(); /* shared memory must stay valid until the engine has read it */
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

enum { T_LOAD, T_LOAD_EDGE, T_GEMM_64, T_GEMM_256, T_GEMM_RS, T_GEMM_FP8, T_STORE, T_COUNT };
static const char *const test_names[T_COUNT] = {
    "hopper: TMA load of a 64x64 bf16 tile with the 128-byte swizzle, on an mbarrier",
    "hopper: TMA load across the tensor edge fills zeros",
    "hopper: wgmma bf16 ss m64n64k16, K = 128, operands by TMA",
    "hopper: wgmma bf16 ss m64n256k16, K = 128, operands by TMA",
    "hopper: wgmma bf16 rs m64n128k16, K = 128, A from registers",
    "hopper: wgmma e4m3 ss m64n128k32, K = 256, operands by TMA",
    "hopper: TMA store of a 64x64 bf16 tile, inside the tensor and clipped at its edge",
};

static void report(int test, bool ok, const char *fmt, ...) {
    if (ok) {
        printf("PASS %s\n", test_names[test]);
        return;
    }
    printf("FAIL %s: ", test_names[test]);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* A failed CUDA call: one FAIL line and exit 0, since the driver counts lines (a kernel fault
 * also leaves the context unusable for the tests after it). */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL hopper: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,                    \
                   cudaGetErrorString(e_));                                                        \
            exit(0);                                                                               \
        }                                                                                          \
    } while (0)

static void encode(CUtensorMap *map, const tensor_map_desc *d) {
    char err[512];
    if (tensor_map_encode(map, d, err, sizeof err) != TENSOR_MAP_OK) {
        printf("FAIL hopper: %s\n", err);
        exit(0);
    }
}

static void *device_copy(const void *host, size_t bytes) {
    void *p;
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
}

static const uint64_t SEED = 20240906;

/* Value i of input `which`: k / 8 with k in -16..-1, 1..16, exact in bf16 and e4m3. */
static float input_value(uint64_t which, uint64_t i) {
    int k = (int)(rng_mix(SEED * 1000003u + which * 0x9E3779B9u + i) % 32) - 16;
    return (float)(k >= 0 ? k + 1 : k) / 8.0f;
}

static uint16_t bits_of(bf16_t x) {
    uint16_t b;
    memcpy(&b, &x, 2);
    return b;
}

/* A 100 x 96 bf16 tensor (rows of 192 bytes): a 64x64 box at (64, 64) sticks out by 28 rows and
 * 32 columns. */
enum { ROWS = 100, COLS = 96 };

static void test_tma_load(void) {
    bf16_t *src = (bf16_t *)malloc(ROWS * COLS * sizeof(bf16_t));
    for (int i = 0; i < ROWS * COLS; i++) src[i] = __float2bfloat16(input_value(1, i));
    bf16_t *d_src = (bf16_t *)device_copy(src, ROWS * COLS * sizeof(bf16_t));
    bf16_t *d_out, out[64 * 64];
    CHECK(cudaMalloc(&d_out, sizeof out));

    tensor_map_desc desc = {.base = d_src, .type = TMAP_BF16, .rank = 2, .dims = {COLS, ROWS},
                            .strides = {COLS * sizeof(bf16_t)}, .box = {64, 64},
                            .swizzle = TMAP_SWIZZLE_128B, .fill = TMAP_FILL_ZERO};
    CUtensorMap map;
    encode(&map, &desc);

    const int corner[2][2] = {{0, 0}, {64, 64}}; /* (column c0, row c1) of the box */
    for (int t = 0; t < 2; t++) {
        int c0 = corner[t][0], c1 = corner[t][1];
        CHECK(cudaMemset(d_out, 0xFF, sizeof out));
        tma_load_tile<<<1, 128, 64 * 64 * sizeof(bf16_t) + 1024>>>(map, d_out, c0, c1);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
        int bad = 0, first = -1;
        for (int r = 0; r < 64; r++)
            for (int c = 0; c < 64; c++) {
                bool inside = r + c1 < ROWS && c + c0 < COLS;
                uint16_t want = inside ? bits_of(src[(r + c1) * COLS + c + c0]) : 0;
                if (bits_of(out[r * 64 + c]) != want && bad++ == 0) first = r * 64 + c;
            }
        report(t == 0 ? T_LOAD : T_LOAD_EDGE, bad == 0,
               "%d of 4096 elements differ, first at row %d column %d: 0x%04x", bad, first / 64,
               first % 64, first >= 0 ? bits_of(out[first]) : 0);
    }
    CHECK(cudaFree(d_src));
    CHECK(cudaFree(d_out));
    free(src);
}

/* Compares C (64 x n) with the fp64 product of A (64 x k) and B (n x k)^T. Tolerance per
 * element: 1e-3 of sum |a * b| (the products and their sums are exact in fp32 here; the slack
 * is for the tensor core's accumulation order and fp8's narrower internal sums). */
static void check_gemm(int test, const float *c, const float *a, const float *b, int n, int k) {
    int bad = 0, first = -1;
    double first_want = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                sum += (double)a[i * k + p] * b[j * k + p];
                mag += fabs((double)a[i * k + p] * b[j * k + p]);
            }
            if (!(fabs(c[i * n + j] - sum) <= 1e-3 * mag) && bad++ == 0) {
                first = i * n + j;
                first_want = sum;
            }
        }
    report(test, bad == 0, "%d of %d elements wrong, first C[%d][%d] = %g, expected %g", bad,
           64 * n, first / n, first % n, first >= 0 ? c[first] : 0.0, first_want);
}

/* Element i of an input array of bf16 (esize 2) or e4m3 (esize 1). */
static void put_input(void *p, int i, float v, int esize) {
    if (esize == 2) ((bf16_t *)p)[i] = __float2bfloat16(v);
    else ((e4m3_t *)p)[i] = e4m3_t(v);
}

/* One GEMM test of one kernel (instantiated only for the N it is tested with). */
enum { BF16_SS, BF16_RS, E4M3_SS };
template <int N, int KIND> static void test_gemm(int test) {
    const int esize = KIND == E4M3_SS ? 1 : 2; /* bytes per input element */
    const int K = K_TILES * 128 / esize;
    float *a = (float *)malloc(64 * K * sizeof(float)), *b = (float *)malloc(N * K * sizeof(float));
    float *c = (float *)malloc(64 * N * sizeof(float));
    void *a_dev_bytes = malloc(64 * K * esize), *b_dev_bytes = malloc(N * K * esize);
    for (int i = 0; i < 64 * K; i++) a[i] = input_value(2, i);
    for (int i = 0; i < N * K; i++) b[i] = input_value(3, i);
    for (int i = 0; i < 64 * K; i++) put_input(a_dev_bytes, i, a[i], esize);
    for (int i = 0; i < N * K; i++) put_input(b_dev_bytes, i, b[i], esize);
    void *d_a = device_copy(a_dev_bytes, 64 * K * esize);
    void *d_b = device_copy(b_dev_bytes, N * K * esize);
    float *d_c;
    CHECK(cudaMalloc(&d_c, 64 * N * sizeof(float)));
    CHECK(cudaMemset(d_c, 0xFF, 64 * N * sizeof(float)));

    /* Both operands K-major: dims {K, rows}, one row of K elements apart; boxes of one 128-byte
     * row of K by all the rows. */
    tensor_map_type type = esize == 2 ? TMAP_BF16 : TMAP_U8;
    unsigned box_k = 128 / esize;
    tensor_map_desc da = {.base = d_a, .type = type, .rank = 2, .dims = {(uint64_t)K, 64},
                          .strides = {(uint64_t)K * esize}, .box = {box_k, 64},
                          .swizzle = TMAP_SWIZZLE_128B, .fill = TMAP_FILL_ZERO};
    tensor_map_desc db = {.base = d_b, .type = type, .rank = 2, .dims = {(uint64_t)K, N},
                          .strides = {(uint64_t)K * esize}, .box = {box_k, N},
                          .swizzle = TMAP_SWIZZLE_128B, .fill = TMAP_FILL_ZERO};
    CUtensorMap map_a, map_b;
    encode(&map_a, &da);
    encode(&map_b, &db);

    /* More than the default 48 KB of dynamic shared memory needs the kernel's consent. */
    int smem = K_TILES * (64 + N) * 128 + 1024;
    cudaFuncAttribute max_smem = cudaFuncAttributeMaxDynamicSharedMemorySize;
    if constexpr (KIND == BF16_SS) {
        CHECK(cudaFuncSetAttribute(gemm_bf16_ss<N>, max_smem, smem));
        gemm_bf16_ss<N><<<1, 128, smem>>>(map_a, map_b, d_c);
    } else if constexpr (KIND == BF16_RS) {
        CHECK(cudaFuncSetAttribute(gemm_bf16_rs<N>, max_smem, smem));
        gemm_bf16_rs<N><<<1, 128, smem>>>((const bf16_t *)d_a, map_b, d_c);
    } else {
        CHECK(cudaFuncSetAttribute(gemm_e4m3_ss<N>, max_smem, smem));
        gemm_e4m3_ss<N><<<1, 128, smem>>>(map_a, map_b, d_c);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, d_c, 64 * N * sizeof(float), cudaMemcpyDeviceToHost));
    check_gemm(test, c, a, b, N, K);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    free(a), free(b), free(c), free(a_dev_bytes), free(b_dev_bytes);
}

/* The output has 28 rows of guard below the 100 rows the map covers: a store that ignored the
 * edge would write into them (or into the next row's first columns). */
static void test_tma_store(void) {
    enum { GUARD_ROWS = 128 };
    bf16_t tile[64 * 64], *out = (bf16_t *)malloc(GUARD_ROWS * COLS * sizeof(bf16_t));
    for (int i = 0; i < 64 * 64; i++) tile[i] = __float2bfloat16(input_value(4, i));
    bf16_t *d_tile = (bf16_t *)device_copy(tile, sizeof tile), *d_out;
    CHECK(cudaMalloc(&d_out, GUARD_ROWS * COLS * sizeof(bf16_t)));
    CHECK(cudaMemset(d_out, 0xFF, GUARD_ROWS * COLS * sizeof(bf16_t)));

    tensor_map_desc desc = {.base = d_out, .type = TMAP_BF16, .rank = 2, .dims = {COLS, ROWS},
                            .strides = {COLS * sizeof(bf16_t)}, .box = {64, 64},
                            .swizzle = TMAP_SWIZZLE_NONE, .fill = TMAP_FILL_ZERO};
    CUtensorMap map;
    encode(&map, &desc);
    tma_store_tile<<<1, 128, sizeof tile + 1024>>>(map, d_tile);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, GUARD_ROWS * COLS * sizeof(bf16_t), cudaMemcpyDeviceToHost));

    int bad = 0, first = -1;
    for (int r = 0; r < GUARD_ROWS; r++)
        for (int c = 0; c < COLS; c++) {
            uint16_t want = 0xFFFF; /* untouched poison */
            if (r < ROWS && r < 64 && c < 64) want = bits_of(tile[r * 64 + c]);
            if (r < ROWS && r >= 64 && c >= 64) want = bits_of(tile[(r - 64) * 64 + c - 64]);
            if (bits_of(out[r * COLS + c]) != want && bad++ == 0) first = r * COLS + c;
        }
    report(T_STORE, bad == 0, "%d of %d elements wrong, first at row %d column %d: 0x%04x", bad,
           GUARD_ROWS * COLS, first / COLS, first % COLS, first >= 0 ? bits_of(out[first]) : 0);
    CHECK(cudaFree(d_tile));
    CHECK(cudaFree(d_out));
    free(out);
}

int main(void) {
    int count = 0;
    cudaDeviceProp prop;
    const char *why = NULL;
    char buf[160];
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        why = "no CUDA device";
    } else if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        why = "cannot read the properties of device 0";
    } else if (prop.major != 9 || prop.minor != 0) {
        snprintf(buf, sizeof buf, "needs compute capability 9.0 (sm_90a), device 0 is %d.%d",
                 prop.major, prop.minor);
        why = buf;
    }
    if (why) {
        for (int t = 0; t < T_COUNT; t++) printf("SKIP %s: %s\n", test_names[t], why);
        return 0;
    }
    test_tma_load();
    test_gemm<64, BF16_SS>(T_GEMM_64);
    test_gemm<256, BF16_SS>(T_GEMM_256);
    test_gemm<128, BF16_RS>(T_GEMM_RS);
    test_gemm<128, E4M3_SS>(T_GEMM_FP8);
    test_tma_store();
    return 0;
}
