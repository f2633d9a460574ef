/* Tensor maps: the checks of cuTensorMapEncodeTiled's documented rules, then the driver call
 * through an entry point fetched once from the runtime (see tensor_map.h). */
#include "tensor_map.h"

#include <stdarg.h>
#include <stdio.h>

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

size_t tensor_map_type_size(tensor_map_type t) {
    switch (t) {
    case TMAP_U8: return 1;
    case TMAP_F16:
    case TMAP_BF16: return 2;
    case TMAP_F32: return 4;
    default: return 0;
    }
}

const char *tensor_map_type_name(tensor_map_type t) {
    switch (t) {
    case TMAP_U8: return "u8";
    case TMAP_F16: return "f16";
    case TMAP_BF16: return "bf16";
    case TMAP_F32: return "f32";
    default: return "?";
    }
}

/* Span in bytes of a swizzle mode; 0 for none, -1 for a value that is not a mode. */
static int swizzle_span(tensor_map_swizzle s) {
    switch (s) {
    case TMAP_SWIZZLE_NONE: return 0;
    case TMAP_SWIZZLE_32B: return 32;
    case TMAP_SWIZZLE_64B: return 64;
    case TMAP_SWIZZLE_128B: return 128;
    default: return -1;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(int code, char *err, size_t errlen, const char *fmt, ...) {
    int n = snprintf(err, errlen, "tensor map: ");
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

#define BAD(...) fail(TENSOR_MAP_BAD_FIELD, err, errlen, __VA_ARGS__)

int tensor_map_check(const tensor_map_desc *d, char *err, size_t errlen) {
    typedef unsigned long long ull;
    size_t esize = tensor_map_type_size(d->type);
    const char *tname = tensor_map_type_name(d->type);
    if (d->type == TMAP_TYPE_UNSET) return BAD("type is not set");
    if (esize == 0)
        return BAD("type = %d, not one of TMAP_U8, TMAP_F16, TMAP_BF16, TMAP_F32", (int)d->type);
    if (d->rank < 2 || d->rank > 3) return BAD("rank = %d, must be 2 or 3", d->rank);
    if (d->base == NULL) return BAD("base is NULL");
    if ((uintptr_t)d->base % 16 != 0) return BAD("base = %p, not 16-byte aligned", d->base);

    for (int i = 0; i < d->rank; i++)
        if (d->dims[i] < 1 || d->dims[i] > (1ull << 32))
            return BAD("dims[%d] = %llu, must be 1 .. 2^32", i, (ull)d->dims[i]);

    /* strides[i] is the distance between consecutive indices of dims[i + 1]. */
    for (int i = 0; i < d->rank - 1; i++) {
        ull s = d->strides[i];
        if (s % 16 != 0) return BAD("strides[%d] = %llu bytes, not a multiple of 16", i, s);
        if (s >= (1ull << 40)) return BAD("strides[%d] = %llu bytes, must be less than 2^40", i, s);
    }
    ull row = (ull)d->dims[0] * esize;
    if (d->strides[0] < row)
        return BAD("strides[0] = %llu bytes, less than one row of dims[0] = %llu %s = %llu bytes",
                   (ull)d->strides[0], (ull)d->dims[0], tname, row);
    /* strides[1] >= dims[1] * strides[0], by division: the product may not fit in 64 bits. */
    if (d->rank == 3 && d->strides[1] / d->strides[0] < d->dims[1])
        return BAD(
            "strides[1] = %llu bytes, less than dims[1] = %llu rows of strides[0] = %llu bytes",
            (ull)d->strides[1], (ull)d->dims[1], (ull)d->strides[0]);

    int span = swizzle_span(d->swizzle);
    if (span < 0) return BAD("swizzle = %d, not a TMAP_SWIZZLE_ value", (int)d->swizzle);
    for (int i = 0; i < d->rank; i++)
        if (d->box[i] < 1 || d->box[i] > 256)
            return BAD("box[%d] = %u, must be 1 .. 256", i, (unsigned)d->box[i]);
    unsigned box_bytes = d->box[0] * (unsigned)esize;
    if (box_bytes % 16 != 0)
        return BAD("box[0] = %u %s = %u bytes, not a multiple of 16 bytes", (unsigned)d->box[0],
                   tname, box_bytes);
    if (span > 0 && box_bytes > (unsigned)span)
        return BAD("box[0] = %u %s = %u bytes, more than the %d-byte swizzle span",
                   (unsigned)d->box[0], tname, box_bytes, span);

    if (d->fill != TMAP_FILL_ZERO && d->fill != TMAP_FILL_NAN)
        return BAD("fill = %d, not TMAP_FILL_ZERO or TMAP_FILL_NAN", (int)d->fill);
    if (d->fill == TMAP_FILL_NAN && d->type == TMAP_U8)
        return BAD("fill = TMAP_FILL_NAN needs a floating-point type; u8 is not one");
    return TENSOR_MAP_OK;
}

/* The driver's functions, looked up on first use. */
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;
static PFN_cuGetErrorName_v6000 error_name;

int tensor_map_encode(CUtensorMap *map, const tensor_map_desc *d, char *err, size_t errlen) {
    int rc = tensor_map_check(d, err, errlen);
    if (rc != TENSOR_MAP_OK) return rc;
    if ((uintptr_t)map % 64 != 0)
        return BAD("the CUtensorMap at %p is not 64-byte aligned", (void *)map);

    if (encode_tiled == NULL) {
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPointByVersion(
            "cuTensorMapEncodeTiled", (void **)&encode_tiled, 12000, cudaEnableDefault, &q);
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || encode_tiled == NULL) {
            encode_tiled = NULL;
            return fail(TENSOR_MAP_DRIVER_ERROR, err, errlen,
                        "cuTensorMapEncodeTiled not found in the driver (%s, query result %d)",
                        cudaGetErrorString(e), (int)q);
        }
        /* Only for messages; a missing one is no error. */
        if (cudaGetDriverEntryPointByVersion("cuGetErrorName", (void **)&error_name, 6000,
                                             cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            error_name = NULL;
    }

    static const CUtensorMapDataType types[] = {[TMAP_U8] = CU_TENSOR_MAP_DATA_TYPE_UINT8,
                                                [TMAP_F16] = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                                [TMAP_BF16] = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                                [TMAP_F32] = CU_TENSOR_MAP_DATA_TYPE_FLOAT32};
    static const CUtensorMapSwizzle swizzles[] = {[TMAP_SWIZZLE_NONE] = CU_TENSOR_MAP_SWIZZLE_NONE,
                                                  [TMAP_SWIZZLE_32B] = CU_TENSOR_MAP_SWIZZLE_32B,
                                                  [TMAP_SWIZZLE_64B] = CU_TENSOR_MAP_SWIZZLE_64B,
                                                  [TMAP_SWIZZLE_128B] = CU_TENSOR_MAP_SWIZZLE_128B};
    cuuint64_t dims[3], strides[2];
    cuuint32_t box[3], element_strides[3] = {1, 1, 1};
    for (int i = 0; i < d->rank; i++) {
        dims[i] = d->dims[i];
        box[i] = d->box[i];
        if (i < d->rank - 1) strides[i] = d->strides[i];
    }
    CUresult r =
        encode_tiled(map, types[d->type], (cuuint32_t)d->rank, (void *)d->base, dims, strides, box,
                     element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[d->swizzle],
                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                     d->fill == TMAP_FILL_NAN ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                              : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        if (error_name == NULL || error_name(r, &name) != CUDA_SUCCESS || name == NULL) name = "?";
        return fail(
            TENSOR_MAP_DRIVER_ERROR, err, errlen,
            "cuTensorMapEncodeTiled returned %s (%d) for %s, rank %d, dims {%llu, %llu, %llu}, "
            "strides {%llu, %llu}, box {%u, %u, %u}, swizzle %d",
            name, (int)r, tensor_map_type_name(d->type), d->rank, (unsigned long long)d->dims[0],
            (unsigned long long)d->dims[1], (unsigned long long)d->dims[2],
            (unsigned long long)d->strides[0], (unsigned long long)d->strides[1],
            (unsigned)d->box[0], (unsigned)d->box[1], (unsigned)d->box[2],
            swizzle_span(d->swizzle));
    }
    return TENSOR_MAP_OK;
}
