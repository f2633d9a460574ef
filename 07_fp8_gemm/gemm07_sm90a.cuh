/* Chapter 07: host pieces the block-scaled GEMM stages share (chapter 06's gemm06_sm90a.cuh has
 * the rest: the swizzled tile's descriptor, the operand map cache, the fragment store).
 *
 *  - gemm07_scale_map_for: the TMA map of A's 1 x 128 scales (gemm07.h's layout,
 *    scale_a[kb * M + i]) as an fp32 tensor of L = ceil(K / 128) rows of M values, boxes of
 *    box_rows x 1 (the scales of a tile's rows at one K block: box_rows contiguous floats), no
 *    swizzle, zeros past M. Its row stride is M * 4 bytes, which TMA wants in 16s: M % 4 == 0.
 *    Cached for the last eight problems like the operand maps, and a map that failed to encode
 *    never replaces a cached one. */
#ifndef GEMM07_SM90A_CUH
#define GEMM07_SM90A_CUH

#include <string.h>

#include "tensor_map.h"

static inline const CUtensorMap *gemm07_scale_map_for(const float *scale_a, int M, int K,
                                                      unsigned box_rows, char *err, size_t len) {
    static struct {
        const float *p;
        int M, K;
        unsigned rows;
        CUtensorMap map;
    } cache[8];
    static int used, next;
    for (int i = 0; i < used; i++)
        if (cache[i].p == scale_a && cache[i].M == M && cache[i].K == K && cache[i].rows == box_rows)
            return &cache[i].map;
    tensor_map_desc d;
    memset(&d, 0, sizeof d);
    d.base = scale_a;
    d.type = TMAP_F32;
    d.rank = 2;
    d.dims[0] = (uint64_t)M;
    d.dims[1] = (uint64_t)((K + 127) / 128);
    d.strides[0] = (uint64_t)M * 4;
    d.box[0] = box_rows;
    d.box[1] = 1;
    d.swizzle = TMAP_SWIZZLE_NONE;
    d.fill = TMAP_FILL_ZERO;
    CUtensorMap map;
    if (tensor_map_encode(&map, &d, err, len) != TENSOR_MAP_OK) return NULL;
    const int slot = next;
    cache[slot].map = map;
    cache[slot].p = scale_a, cache[slot].M = M, cache[slot].K = K, cache[slot].rows = box_rows;
    next = (next + 1) % 8;
    if (used < 8) used++;
    return &cache[slot].map;
}

#endif
