/* Chapter 06: what every stage shares, written once.
 *
 *  - align1024: where a 128-byte-swizzled tile may start;
 *  - desc_sw128: the wgmma descriptor of such a tile (stage 1 explains every field);
 *  - store_fragment: the accumulator fragment of one warpgroup to C, bounds-checked;
 *  - stage_fragment: the same fragment, as bf16, into shared memory in the boxes of a TMA
 *    store (stage 7), and gemm06_store_map_for, the map of C for that store;
 *  - gemm06_maps_for: the two operand tensor maps of one problem, encoded once and cached
 *    (stage 2 explains why);
 *  - gemm06_tile_at, gemm06_schedule: the order in which a persistent kernel visits its tiles
 *    (stage 5).
 *
 * Stage 1's comments explain the descriptor and the fragment layout; stage 2's the map cache;
 * stage 5's the tile order.
 *
 * An exercise writes its stage's own idea itself: its file defines one of these before any
 * include, and the piece is left out here (the stages never define them; later exercises, and
 * chapter 07, use the copy here):
 *   GEMM06_EXERCISE_TILE_ORDER  exercise 5: gemm06_tile_at, the order of a persistent grid's tiles
 *   GEMM06_EXERCISE_STAGING     exercise 7: stage_box, stage_fragment, stage_tail and store_boxes,
 *                               the fragment into shared memory for a TMA store */
#ifndef GEMM06_SM90A_CUH
#define GEMM06_SM90A_CUH

#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "stage.h"
#include "tensor_map.h"
#include "launch.cuh"
#include "ptx/fence.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/smem.cuh"
#include "ptx/stmatrix.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

/* k per tile in every stage: 64 bf16 = 128 bytes, the span of the 128-byte swizzle. */
#define GEMM06_BK 64

/* The first 1024-byte boundary at or after p: the 128-byte swizzle repeats every 8 rows of 128
 * bytes, and both TMA and wgmma take the pattern from the address bits. */
static __device__ __forceinline__ unsigned char *align1024(unsigned char *p) {
    const unsigned misalign = smem_addr(p) % 1024;
    return p + (misalign ? 1024 - misalign : 0);
}

/* K-major tile, 128-byte rows, 128-byte swizzle: SBO = 1024 (one 8-row atom to the next), LBO
 * unused by this mode (16), base offset 0 (tiles are 1024-aligned). Step k16 of a 64-wide K tile
 * starts 32 bytes further: desc_sw128(tile + 32 * k). */
static __device__ __forceinline__ uint64_t desc_sw128(unsigned addr) {
    return wgmma_desc(addr, WGMMA_SWIZZLE_128B, 16, 1024);
}

/* The descriptor of the tile `bytes` (a multiple of 16) further on: its start address field is
 * addr >> 4 in the low 14 bits, and shared memory ends below 2^18 bytes, so the sum never carries
 * into the other fields. Adding to a descriptor made once costs one add per wgmma operand where
 * desc_sw128 of each address costs an and, a shift and an or besides (chapter 07's FP8 K loop,
 * whose wgmmas are short, issues four per K tile and consumer). */
static __device__ __forceinline__ uint64_t desc_advance(uint64_t desc, unsigned bytes) {
    return desc + (bytes >> 4);
}

/* Two fp32 values rounded to a pair of T (bf16_t or, from stage 8, f16_t), as one 32-bit word. */
template <typename T> static __device__ __forceinline__ unsigned pack_pair(float lo, float hi) {
    if constexpr (std::is_same_v<T, f16_t>) {
        const __half2 v = __floats2half2_rn(lo, hi);
        return *(const unsigned *)&v;
    } else {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *(const unsigned *)&v;
    }
}

/* One warpgroup's m64nN fp32 fragment to C (M x N row-major bf16, or fp16 in stage 8) at
 * (row0, col0). Thread t of the warpgroup (warp w = t / 32, lane l) holds in register i
 *   row 16w + l/4 + 8 * ((i/2) % 2),   column 8 * (i/4) + 2 * (l%4) + i%2,
 * so registers i, i+1 (i even) are neighbours in a row: one 4-byte store when every row of C
 * starts 4-byte aligned (N even), two 2-byte stores otherwise. Rows and columns past M and N
 * are skipped: they hold products of TMA's zero fill. */
template <int BN, typename T>
static __device__ __forceinline__ void store_fragment(const float (&d)[BN / 2],
                                                      T *__restrict__ C, int M, int N,
                                                      int row0, int col0) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int i = 0; i < BN / 2; i += 2) {
        const int row = row0 + 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        const int col = col0 + 8 * (i / 4) + 2 * (lane % 4);
        if (row >= M || col >= N) continue;
        T *dst = C + (size_t)row * N + col;
        const unsigned both = pack_pair<T>(d[i], d[i + 1]);
        if (pairs) {
            *(unsigned *)dst = both;
        } else {
            const unsigned short lo = (unsigned short)both, hi = (unsigned short)(both >> 16);
            *(unsigned short *)dst = lo;
            if (col + 1 < N) *(unsigned short *)(dst + 1) = hi;
        }
    }
}

#ifndef GEMM06_EXERCISE_STAGING /* exercise 7 writes its own */
/* Box `box` alone (columns 64 box .. 64 box + 63 of the fragment) into the 8 KiB at `buf`: for
 * an epilogue that stages one box at a time (stage 8). */
template <int BN, typename T>
static __device__ __forceinline__ void stage_box(const float (&d)[BN / 2], unsigned buf, int box) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int row = 16 * warp + 8 * ((lane / 8) % 2) + lane % 8; /* the row this lane addresses */
#pragma unroll
    for (int q = 4 * box; q < 4 * box + 4; q++) {
        const int chunk = 2 * q + lane / 16 - 8 * box; /* 8-column chunk within the box */
        const unsigned addr = buf + row * 128 + ((chunk ^ (row % 8)) * 16);
        stmatrix_x4(addr, pack_pair<T>(d[8 * q], d[8 * q + 1]),
                    pack_pair<T>(d[8 * q + 2], d[8 * q + 3]),
                    pack_pair<T>(d[8 * q + 4], d[8 * q + 5]),
                    pack_pair<T>(d[8 * q + 6], d[8 * q + 7]));
    }
}

/* Stage 7's epilogue: one warpgroup's m64nBN fragment, rounded to T (bf16 or fp16), into shared memory at
 * `staging` (1024-aligned) as BN / 64 boxes of 64 rows x 64 columns (8 KiB each, box b holds
 * columns 64b..64b+63), each in the 128-byte swizzle: row r's 16-byte chunk j at
 * r * 128 + (j ^ r % 8) * 16. That is the layout a TMA store with boxes {64, 64} and
 * TMAP_SWIZZLE_128B reads, and it makes stmatrix conflict-free: the eight rows of one 8x8
 * matrix have the same chunk j, which the XOR spreads over all eight 16-byte bank groups.
 * One stmatrix.x4 per 16 columns (stage_box, per box): its matrices are (rows 0-7, columns
 * 16q..16q+7), (rows 8-15, same columns), then the next 8 columns; in the fragment those are
 * registers 8q .. 8q+7 in order (see store_fragment), two per 32-bit register. Lane l gives the address of row l % 8 of
 * matrix l / 8. */
template <int BN, typename T = bf16_t>
static __device__ __forceinline__ void stage_fragment(const float (&d)[BN / 2], unsigned staging) {
#pragma unroll
    for (int box = 0; box < BN / 64; box++) stage_box<BN, T>(d, staging + box * 8192, box);
}

/* 16 columns of a fragment (8 registers from r: chapter 07's 128 x 144 tile's last 16) into a
 * 64 x 16 box, unswizzled (row r at 32 r bytes, the layout of a TMA store map of 16-column boxes,
 * gemm06_store_map_for), at `tail`: one stmatrix.x4, whose four 8 x 8 matrices are the columns
 * 0-7 and 8-15 of the warp's rows 0-7 and 8-15, as in stage_box. */
template <typename T>
static __device__ __forceinline__ void stage_tail(const float *r, unsigned tail) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int row = 16 * warp + 8 * ((lane / 8) % 2) + lane % 8;
    stmatrix_x4(tail + row * 32 + (lane / 16) * 16, pack_pair<T>(r[0], r[1]),
                pack_pair<T>(r[2], r[3]), pack_pair<T>(r[4], r[5]), pack_pair<T>(r[6], r[7]));
}
#endif

#ifndef GEMM06_EXERCISE_STAGING
/* A consumer warpgroup's m64nBN fragment to C at (row0, col0) by TMA stores, one 64 x 64 box at
 * a time through two 8 KiB buffers at `staging` (stages 8 and chapter 07's stage 5), taken in
 * turn by a count of boxes that runs on across tiles (so that any number of boxes per tile
 * would do): a buffer may be written once the store two boxes back, which read it, is done
 * reading, i.e. at most one store group is pending. `barrier` is the warpgroup's named barrier;
 * `stores` is true on the one thread that issues the stores, and false on all of them for a
 * band past C's last row (then nothing is stored; TMA would clip it all anyway).
 *
 * No branch: every thread runs the waits and commits (with no store of its own, its groups are
 * empty), and the store is predicated inside the asm, so that a warpgroup may store while its
 * next tile's first wgmmas are in flight (chapter 07 tried it: README, stage 5). */
template <int BN, typename T>
static __device__ __forceinline__ void store_boxes(const float (&d)[BN / 2],
                                                   const CUtensorMap *map, unsigned staging,
                                                   unsigned &boxes, int row0, int col0,
                                                   int barrier, bool stores) {
#pragma unroll
    for (int box = 0; box < BN / 64; box++, boxes++) {
        const unsigned buf = staging + (boxes % 2) * 8192;
        tma_store_wait<1>();
        named_barrier_sync(barrier, 128);
        stage_box<BN, T>(d, buf, box);
        fence_proxy_async_shared();
        named_barrier_sync(barrier, 128);
        tma_store_2d_if(map, buf, col0 + 64 * box, row0, stores);
        tma_store_commit();
    }
}
#endif

/* ---- host: the operand tensor maps ---------------------------------------------------------
 * A map holds the tensor's address and shape, so it is encoded again for new pointers or
 * sizes, but not for every launch: cuTensorMapEncodeTiled is a driver call on the host, and the
 * timed launches of one shape would pay for it each time. Each stage keeps the maps of the last
 * eight problems it saw (this function is static: one cache per stage file). The key is
 * everything the maps encode, so a hit is always right, even when a buffer was freed and
 * another allocated at the same address. */
typedef struct {
    const void *A, *B;
    int M, N, K;
    unsigned a_rows, b_rows; /* box heights */
    tensor_map_type type;
    CUtensorMap map_a, map_b;
} gemm06_maps;

/* A row-major rows x cols tensor (a K-major operand: cols = K; or C) of 2-byte elements
 * (TMAP_BF16; fp16 travels as the same bits) or of 1-byte ones (TMAP_U8: chapter 07's fp8):
 * dims innermost first {cols, rows}, rows a whole row of bytes apart, boxes of 128 bytes of
 * columns (the swizzle span: 64 2-byte or 128 1-byte elements) by box_rows, zeros outside the
 * tensor. */
static inline int gemm06_encode_2d_box(CUtensorMap *map, const void *base, tensor_map_type type,
                                       int rows, int cols, unsigned box_cols, unsigned box_rows,
                                       tensor_map_swizzle swizzle, char *err, size_t len) {
    const unsigned bytes = type == TMAP_U8 ? 1 : 2;
    tensor_map_desc d;
    memset(&d, 0, sizeof d);
    d.base = base;
    d.type = type;
    d.rank = 2;
    d.dims[0] = (uint64_t)cols;
    d.dims[1] = (uint64_t)rows;
    d.strides[0] = (uint64_t)cols * bytes;
    d.box[0] = box_cols;
    d.box[1] = box_rows;
    d.swizzle = swizzle;
    d.fill = TMAP_FILL_ZERO;
    return tensor_map_encode(map, &d, err, len);
}
static inline int gemm06_encode_2d_typed(CUtensorMap *map, const void *base, tensor_map_type type,
                                         int rows, int cols, unsigned box_rows, char *err,
                                         size_t len) {
    const unsigned box_cols = type == TMAP_U8 ? 128 : 64; /* 128 bytes */
    return gemm06_encode_2d_box(map, base, type, rows, cols, box_cols, box_rows,
                                TMAP_SWIZZLE_128B, err, len);
}
static inline int gemm06_encode_2d(CUtensorMap *map, const void *base, int rows, int cols,
                                   unsigned box_rows, char *err, size_t len) {
    return gemm06_encode_2d_typed(map, base, TMAP_BF16, rows, cols, box_rows, err, len);
}

/* The maps of A (boxes of a_rows rows) and B (b_rows rows) of element type `type`, or NULL with
 * the encoder's reason. */
static inline const gemm06_maps *gemm06_maps_for_type(const void *A, const void *B,
                                                      tensor_map_type type, int M, int N, int K,
                                                      unsigned a_rows, unsigned b_rows, char *err,
                                                      size_t len) {
    static gemm06_maps cache[8];
    static int used, next;
    for (int i = 0; i < used; i++) {
        const gemm06_maps *c = &cache[i];
        if (c->A == A && c->B == B && c->type == type && c->M == M && c->N == N && c->K == K &&
            c->a_rows == a_rows && c->b_rows == b_rows)
            return c;
    }
    gemm06_maps m;
    m.A = A, m.B = B, m.type = type, m.M = M, m.N = N, m.K = K, m.a_rows = a_rows,
    m.b_rows = b_rows;
    if (gemm06_encode_2d_typed(&m.map_a, A, type, M, K, a_rows, err, len) != TENSOR_MAP_OK ||
        gemm06_encode_2d_typed(&m.map_b, B, type, N, K, b_rows, err, len) != TENSOR_MAP_OK)
        return NULL;
    gemm06_maps *slot = &cache[next];
    *slot = m;
    next = (next + 1) % 8;
    if (used < 8) used++;
    return slot;
}
static inline const gemm06_maps *gemm06_maps_for(const bf16_t *A, const bf16_t *B, int M, int N,
                                                 int K, unsigned a_rows, unsigned b_rows,
                                                 char *err, size_t len) {
    return gemm06_maps_for_type(A, B, TMAP_BF16, M, N, K, a_rows, b_rows, err, len);
}

/* The map of C (M x N row-major bf16) for TMA stores of 64 x 64 boxes in the 128-byte
 * swizzle (stage_fragment's layout), or with box_cols 16 of 64 x 16 boxes unswizzled (the tail
 * of store_boxes). TMA clips a box at the tensor's edges, so any M and N whose row stride is a
 * multiple of 16 bytes: N % 8 == 0. Cached like the operand maps. */
typedef struct {
    const void *C;
    int M, N, box_cols;
    CUtensorMap map;
} gemm06_store_map;

static inline const CUtensorMap *gemm06_store_map_for(const bf16_t *C, int M, int N, char *err,
                                                      size_t len, int box_cols = 64) {
    static gemm06_store_map cache[8];
    static int used, next;
    for (int i = 0; i < used; i++)
        if (cache[i].C == C && cache[i].M == M && cache[i].N == N &&
            cache[i].box_cols == box_cols)
            return &cache[i].map;
    gemm06_store_map m = {C, M, N, box_cols, {}};
    if (gemm06_encode_2d_box(&m.map, C, TMAP_BF16, M, N, (unsigned)box_cols, 64,
                             box_cols == 64 ? TMAP_SWIZZLE_128B : TMAP_SWIZZLE_NONE, err,
                             len) != TENSOR_MAP_OK)
        return NULL;
    gemm06_store_map *slot = &cache[next];
    *slot = m;
    next = (next + 1) % 8;
    if (used < 8) used++;
    return &slot->map;
}

/* ---- the order of tiles in a persistent kernel (stage 5 on) -----------------------------------
 * A persistent kernel runs one block per SM; block b computes tiles b, b + G, b + 2G, ... of a
 * sequence (G blocks). At any moment the G tiles in flight are G neighbours in that sequence,
 * and what they read is what L2 must hold: the A rows of every tile row they touch and the B
 * rows of every tile column. The order decides how many distinct rows and columns G
 * consecutive tiles touch:
 *  - rows: row by row. G = 132 tiles of a 32 x 16 grid (4096^2 in 128x256 tiles) are 8+ whole
 *    tile rows: all of B (32 MiB) and 8 panels of A, re-read from DRAM every few waves.
 *  - grouped: GEMM06_GROUP_ROWS tile rows at a time, column by column within the group: the
 *    G tiles in flight make a 16 x 8 block of tiles, 16 A panels and 8 B panels.
 *  - hilbert: the Hilbert curve over the tile grid (on the enclosing power-of-two square,
 *    skipping cells outside): every run of consecutive tiles is a compact blob, at every size,
 *    with no group size to choose. It is computed on the host once per grid shape and read from
 *    constant memory (at most GEMM06_HILBERT_MAX tiles; larger grids fall back to grouped). */
enum gemm06_order { GEMM06_ORDER_ROWS, GEMM06_ORDER_GROUPED, GEMM06_ORDER_HILBERT };
#define GEMM06_GROUP_ROWS 16
#define GEMM06_HILBERT_MAX 8192 /* 32 KiB of the 64 KiB of constant memory */

struct gemm06_tiles {
    int tiles_m, tiles_n; /* the grid of output tiles */
    int order;            /* gemm06_order */
    int group_rows;       /* grouped order's group height; 0: GEMM06_GROUP_ROWS */
};

/* (row, column) of tile i, packed: row << 16 | column. One per stage file (static). */
static __constant__ unsigned gemm06_hilbert[GEMM06_HILBERT_MAX];

#ifndef GEMM06_EXERCISE_TILE_ORDER /* exercise 5 writes its own */
static __device__ __forceinline__ void gemm06_tile_at(const gemm06_tiles &g, int i, int &tm,
                                                      int &tn) {
    if (g.order == GEMM06_ORDER_HILBERT) {
        const unsigned v = gemm06_hilbert[i];
        tm = (int)(v >> 16), tn = (int)(v & 0xffff);
    } else if (g.order == GEMM06_ORDER_GROUPED) {
        const int group = g.group_rows ? g.group_rows : GEMM06_GROUP_ROWS;
        const int per_group = group * g.tiles_n;
        const int first = i / per_group * group, j = i % per_group;
        const int rows = min(group, g.tiles_m - first); /* the last group may be short */
        tm = first + j % rows, tn = j / rows;
    } else {
        tm = i / g.tiles_n, tn = i % g.tiles_n;
    }
}
#endif

/* Cell d of the Hilbert curve on a side x side square (side a power of two): at each scale s,
 * two bits of d pick the quadrant, and the part already placed is rotated or mirrored so that
 * the curve enters and leaves the quadrant at the right corners. */
static inline void gemm06_hilbert_cell(unsigned side, unsigned d, unsigned *x, unsigned *y) {
    unsigned cx = 0, cy = 0;
    for (unsigned s = 1; s < side; s *= 2, d /= 4) {
        const unsigned qx = (d / 2) & 1, qy = (d ^ qx) & 1;
        if (qy == 0) {
            if (qx == 1) cx = s - 1 - cx, cy = s - 1 - cy;
            const unsigned t = cx;
            cx = cy, cy = t;
        }
        cx += s * qx, cy += s * qy;
    }
    *x = cx, *y = cy;
}

/* The schedule of a grid in the order asked for, uploaded if it is a Hilbert order for a grid
 * other than the last one (stream-ordered, so a launch that follows sees it). Returns the order
 * used (grouped when the grid has more tiles than the table holds), or -1 if the upload
 * failed. */
static inline int gemm06_schedule(gemm06_tiles *g, int order, cudaStream_t stream) {
    g->order = order;
    if (order != GEMM06_ORDER_HILBERT) return order;
    static int last_m = -1, last_n = -1;
    if ((long)g->tiles_m * g->tiles_n > GEMM06_HILBERT_MAX) return g->order = GEMM06_ORDER_GROUPED;
    if (g->tiles_m == last_m && g->tiles_n == last_n) return order;
    static unsigned table[GEMM06_HILBERT_MAX];
    unsigned side = 1, n = 0;
    while (side < (unsigned)g->tiles_m || side < (unsigned)g->tiles_n) side *= 2;
    for (unsigned d = 0; d < side * side; d++) {
        unsigned x, y;
        gemm06_hilbert_cell(side, d, &x, &y);
        if (y < (unsigned)g->tiles_m && x < (unsigned)g->tiles_n) table[n++] = y << 16 | x;
    }
    if (cudaMemcpyToSymbolAsync(gemm06_hilbert, table, n * sizeof(unsigned), 0,
                                cudaMemcpyHostToDevice, stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    last_m = g->tiles_m, last_n = g->tiles_n;
    return order;
}

/* GEMM06_TILE_ORDER=rows|grouped|hilbert, read once (the README's comparison); unset: `deflt`.
 * Returns -1 for anything else, which the launcher reports instead of guessing. */
static inline int gemm06_order_from_env(int deflt) {
    static int order = -2;
    if (order == -2) {
        const char *e = getenv("GEMM06_TILE_ORDER");
        if (!e || !*e) order = deflt;
        else if (!strcmp(e, "rows")) order = GEMM06_ORDER_ROWS;
        else if (!strcmp(e, "grouped")) order = GEMM06_ORDER_GROUPED;
        else if (!strcmp(e, "hilbert")) order = GEMM06_ORDER_HILBERT;
        else order = -1;
    }
    return order;
}

/* The grouped order's group height from the environment variable `var` (1..64 cluster rows),
 * read once (one variable per program: chapter 06 GEMM06_GROUP_ROWS, chapter 07
 * GEMM07_GROUP_ROWS); unset or out of range: `deflt`. For the READMEs' sweeps. */
static inline int gemm06_group_rows_from_env(const char *var, int deflt) {
    static int rows = -1;
    if (rows < 0) {
        const char *e = getenv(var);
        const int v = e ? atoi(e) : 0;
        rows = v >= 1 && v <= 64 ? v : deflt;
    }
    return rows;
}

#endif
