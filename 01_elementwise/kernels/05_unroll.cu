/* Stage 5 — more independent loads in flight per thread (unrolled), for fp32, fp16 and bf16.
 *
 * Change from stages 3/4: each loop trip a thread issues UNROLL 16-byte loads from each input
 * before it uses any of them, then UNROLL adds and UNROLL stores. The loads of one trip are
 * independent, so they are all in flight together.
 *
 * Why it can be faster: DRAM latency is ~600-800 ns, and by Little's law the bytes in flight
 * must cover bandwidth x latency (about 3 MB on an H200, ~24 KB per SM) to reach full
 * bandwidth. In stages 3/4 a thread has one pair of loads outstanding and then waits; here it
 * has UNROLL pairs, so fewer resident warps are enough to hide the latency.
 * What the H100 measured: no gain here (96.2% of the copy against float4's 97.0% at 2^28),
 * because at full occupancy stage 3 already keeps enough bytes in flight. The technique pays
 * when few threads are resident: keep it for kernels with big register or shared-memory
 * footprints (the reductions of chapter 02 use it).
 *
 * One kernel serves the three element types: it moves raw 16-byte packs and calls the pack's
 * add, chosen at compile time. In the SASS, look for UNROLL LDG.E.128 in a row before the
 * first FADD / HADD2. */
#include "stage.h"
#include "elementwise.h"

#define UNROLL 4
#define THREADS 256

enum { KIND_F32, KIND_F16, KIND_BF16 };

typedef union {
    uint4 raw;
    float4 f4;
    __half2 h2[4];
    __nv_bfloat162 b2[4];
} pack16;

template <int KIND> __device__ __forceinline__ uint4 add_pack(uint4 xr, uint4 yr) {
    pack16 x, y, z;
    x.raw = xr;
    y.raw = yr;
    if (KIND == KIND_F32) {
        z.f4 = make_float4(x.f4.x + y.f4.x, x.f4.y + y.f4.y, x.f4.z + y.f4.z, x.f4.w + y.f4.w);
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (KIND == KIND_F16) z.h2[k] = __hadd2(x.h2[k], y.h2[k]);
            else z.b2[k] = __hadd2(x.b2[k], y.b2[k]);
        }
    }
    return z.raw;
}

/* Element i of the last, partial pack, added on its own. */
template <int KIND>
__device__ __forceinline__ void add_one(const void *a, const void *b, void *c, long i) {
    if (KIND == KIND_F32) ((float *)c)[i] = ((const float *)a)[i] + ((const float *)b)[i];
    else if (KIND == KIND_F16)
        ((__half *)c)[i] = __hadd(((const __half *)a)[i], ((const __half *)b)[i]);
    else
        ((__nv_bfloat16 *)c)[i] =
            __hadd(((const __nv_bfloat16 *)a)[i], ((const __nv_bfloat16 *)b)[i]);
}

template <int KIND>
static __global__ void __launch_bounds__(THREADS)
    add_unroll_kernel(const uint4 *__restrict__ a, const uint4 *__restrict__ b,
                      uint4 *__restrict__ c, long npack, long n, int per_pack) {
    /* A chunk is UNROLL x blockDim packs; thread t takes packs t, t + blockDim, ... of it, so
     * each of its UNROLL loads is coalesced across the warp. */
    const long chunk = (long)UNROLL * THREADS;
    const long nchunks = npack / chunk;
    for (long ch = blockIdx.x; ch < nchunks; ch += gridDim.x) {
        long base = ch * chunk + threadIdx.x;
        uint4 x[UNROLL], y[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            x[u] = a[base + u * THREADS];
            y[u] = b[base + u * THREADS];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) c[base + u * THREADS] = add_pack<KIND>(x[u], y[u]);
    }
    /* Packs after the last whole chunk, then elements after the last whole pack. */
    long tid = blockIdx.x * (long)THREADS + threadIdx.x, stride = (long)gridDim.x * THREADS;
    for (long i = nchunks * chunk + tid; i < npack; i += stride) c[i] = add_pack<KIND>(a[i], b[i]);
    for (long i = npack * per_pack + tid; i < n; i += stride) add_one<KIND>(a, b, c, i);
}

template <int KIND>
static void launch_unroll(const void *a, const void *b, void *c, long n, int elem_bytes,
                          cudaStream_t stream) {
    static unsigned int grid;
    if (!grid) grid = resident_blocks((const void *)add_unroll_kernel<KIND>, THREADS, 0);
    int per_pack = 16 / elem_bytes;
    long npack = (aligned16(a) && aligned16(b) && aligned16(c)) ? n / per_pack : 0;
    unsigned int needed = blocks_for(npack ? npack / UNROLL + 1 : n, THREADS);
    add_unroll_kernel<KIND><<<needed < grid ? needed : grid, THREADS, 0, stream>>>(
        (const uint4 *)a, (const uint4 *)b, (uint4 *)c, npack, n, per_pack);
}

extern "C" int STAGE(add_f32_unroll)(const float *a, const float *b, float *c, long n,
                                     cudaStream_t stream) {
    launch_unroll<KIND_F32>(a, b, c, n, 4, stream);
    return LAUNCH_OK;
}

extern "C" int STAGE(add_f16_unroll)(const f16_t *a, const f16_t *b, f16_t *c, long n,
                                     cudaStream_t stream) {
    launch_unroll<KIND_F16>(a, b, c, n, 2, stream);
    return LAUNCH_OK;
}

extern "C" int STAGE(add_bf16_unroll)(const bf16_t *a, const bf16_t *b, bf16_t *c, long n,
                                      cudaStream_t stream) {
    launch_unroll<KIND_BF16>(a, b, c, n, 2, stream);
    return LAUNCH_OK;
}
