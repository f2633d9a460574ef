/* Tensor maps for TMA (sm_90+), host side, in C11. A tensor map (CUtensorMap, 128 opaque bytes)
 * describes a tensor in global memory and the box (tile) that one TMA instruction copies; the
 * kernel receives it as a `const __grid_constant__ CUtensorMap` parameter (common/ptx/tma.cuh).
 * The driver builds it (cuTensorMapEncodeTiled), but answers a wrong field with nothing more than
 * CUDA_ERROR_INVALID_VALUE; tensor_map_check() applies the driver's documented rules first and
 * names the field that breaks one.
 *
 * Dimensions go innermost first, as TMA counts them: for a row-major M x K matrix (K contiguous),
 * dims = {K, M} and strides = {bytes from one row to the next}. A GEMM operand tile of 128 rows
 * by 64 bf16, swizzled for wgmma:
 *
 *     tensor_map_desc a = {.base = A, .type = TMAP_BF16, .rank = 2, .dims = {K, M},
 *                          .strides = {K * 2}, .box = {64, 128}, .swizzle = TMAP_SWIZZLE_128B};
 *     CUtensorMap map;
 *     if (tensor_map_encode(&map, &a, err, sizeof err)) { fprintf(stderr, "%s\n", err); ... }
 *
 * The rules checked (CUDA driver API, cuTensorMapEncodeTiled; rank limited to 2..3 here):
 *   base     16-byte aligned, not NULL
 *   dims     1 .. 2^32 elements each
 *   strides  the rank - 1 outer strides, in bytes: multiples of 16, below 2^40, and each at least
 *            the extent of the dimension inside it (rows may be padded, never overlap)
 *   box      1 .. 256 elements each; box[0] * element size a multiple of 16 bytes, and at most
 *            the swizzle span (32, 64 or 128 bytes) when the box is swizzled
 *   fill     NaN fill only for floating-point types
 * Fixed here: element strides 1, no interleave, L2 promotion to 128 bytes (the L2 line). */
#ifndef TENSOR_MAP_H
#define TENSOR_MAP_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types as TMA sees them. fp8 (e4m3, e5m2) travels as TMAP_U8: TMA moves bytes.
 * 0 is "not set", so a descriptor that forgets its type fails the check. */
typedef enum { TMAP_TYPE_UNSET = 0, TMAP_U8, TMAP_F16, TMAP_BF16, TMAP_F32 } tensor_map_type;

/* The shared-memory swizzle: the 16-byte chunks of each span of 32, 64 or 128 bytes are
 * permuted by an XOR with address bits above the span (with 128-byte box rows and the 128-byte
 * swizzle: chunk c of row r lands at chunk c ^ (r % 8)). It is the layout that wgmma's swizzled
 * descriptors read, and it spreads a column of the tile over all the banks. */
typedef enum {
    TMAP_SWIZZLE_NONE = 0,
    TMAP_SWIZZLE_32B,
    TMAP_SWIZZLE_64B,
    TMAP_SWIZZLE_128B
} tensor_map_swizzle;

/* What a load returns for elements outside the tensor (box at an edge): zeros, or (float types
 * only) a NaN, which makes a tile read past the edge by mistake visible in the result. */
typedef enum { TMAP_FILL_ZERO = 0, TMAP_FILL_NAN } tensor_map_fill;

typedef struct {
    const void *base;           /* the tensor's first element, in device memory */
    tensor_map_type type;
    int rank;                   /* 2 or 3 */
    uint64_t dims[3];           /* elements, innermost first */
    uint64_t strides[2];        /* bytes, of dims[1] and dims[2] (dims[0] is contiguous) */
    uint32_t box[3];            /* elements per copy, innermost first */
    tensor_map_swizzle swizzle;
    tensor_map_fill fill;
} tensor_map_desc;

enum { TENSOR_MAP_OK = 0, TENSOR_MAP_BAD_FIELD = 1, TENSOR_MAP_DRIVER_ERROR = 2 };

/* Bytes per element of a type, and its name ("bf16"); 0 and "?" for an unknown value. */
size_t tensor_map_type_size(tensor_map_type t);
const char *tensor_map_type_name(tensor_map_type t);

/* The checks above, with no CUDA call (unit-testable without a GPU or driver). Returns
 * TENSOR_MAP_OK, or TENSOR_MAP_BAD_FIELD with a message naming the first failing field and its
 * value in err ("tensor map: box[0] = 128 bf16 = 256 bytes, more than the 128-byte swizzle
 * span"). */
int tensor_map_check(const tensor_map_desc *d, char *err, size_t errlen);

/* Checks d, then encodes it into *map through the driver's cuTensorMapEncodeTiled, found once
 * with cudaGetDriverEntryPointByVersion (nothing links against libcuda; -lcudart is needed).
 * Call it once the runtime is up (base comes from cudaMalloc, so it is). Returns TENSOR_MAP_OK,
 * TENSOR_MAP_BAD_FIELD, or TENSOR_MAP_DRIVER_ERROR (entry point missing, or the driver refused
 * d) with a message in err. */
int tensor_map_encode(CUtensorMap *map, const tensor_map_desc *d, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
