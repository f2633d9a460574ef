/* SASS test of the PTX wrappers in common/ptx/ (all but wgmma.cuh, which has its own file).
 *
 * Each kernel uses one wrapper (or a small group that belongs together), with results that
 * depend on the inputs and land in global memory, so nothing compiles away. The line before
 * each kernel,  // sass: NAME OPCODE...,  lists SASS opcode prefixes that must appear in that
 * kernel: the test driver compiles this file for sm_90a (warnings are errors) and checks them
 * with cuobjdump -sass. The kernels are only compiled, never launched, but each is written as it
 * would be used, so that it also reads as an example of its wrapper. */
#include <cuda.h>
#include <cuda_runtime.h>

#include "ptx/elect.cuh"
#include "ptx/cluster.cuh"
#include "ptx/ex2.cuh"
#include "ptx/fence.cuh"
#include "ptx/ld_global.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mma.cuh"
#include "ptx/mov.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/smem.cuh"
#include "ptx/stmatrix.cuh"
#include "ptx/tma.cuh"

/* 02_reduce's streaming load: 16 bytes, no L1 allocation, 256-byte L2 fetches. */
// sass: ptx_check_ld_global LDG.E.NA.LTC256B.128.CONSTANT
extern "C" __global__ void ptx_check_ld_global(const float4 *__restrict__ in,
                                               float *__restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = ld_global_nc_noalloc_l2_256(in + i);
        out[i] = v.x + v.y + v.z + v.w;
    }
}

/* A CTA-wide exchange through shared memory on an mbarrier instead of __syncthreads(): every
 * thread writes, arrives (release.cta) and waits on phase 0 (acquire.cta). */
// sass: ptx_check_mbarrier SYNCS.EXCH.64 SYNCS.ARRIVE.TRANS64.A1T0 SYNCS.PHASECHK.TRANS64.TRYWAIT
extern "C" __global__ void ptx_check_mbarrier(const float *__restrict__ in,
                                              float *__restrict__ out) {
    __shared__ unsigned long long bar;
    __shared__ float vals[1024];
    const unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) mbarrier_init(b, blockDim.x);
    __syncthreads();
    vals[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    mbarrier_arrive(b);
    mbarrier_wait_parity(b, 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = vals[(threadIdx.x + 1) % blockDim.x];
}

/* A 2-D TMA tile load: prefetch the map, arm the barrier with the box's bytes (the one arrival
 * of the phase), load, wait, and copy the tile out. */
// sass: ptx_check_tma_load_2d UTMACCTL.PF SYNCS.EXCH.64 SYNCS.ARRIVE.TRANS64 UTMALDG.2D SYNCS.PHASECHK.TRANS64.TRYWAIT
extern "C" __global__ void ptx_check_tma_load_2d(const __grid_constant__ CUtensorMap map,
                                                 float *__restrict__ out, int c0, int c1) {
    __shared__ alignas(128) float tile[64 * 32];
    __shared__ unsigned long long bar;
    const unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) {
        tma_prefetch_map(&map);
        mbarrier_init(b, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(b, sizeof tile);
        tma_load_2d(smem_addr(tile), &map, b, c0, c1);
    }
    mbarrier_wait_parity(b, 0);
    for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) out[blockIdx.x * 64 * 32 + i] = tile[i];
}

/* A 3-D TMA load whose barrier counts every thread's arrival: the issuing thread announces the
 * bytes with expect_tx alone (an arrive of count 0 in the SASS), then arrives like the others.
 * (Right before an arrive.expect_tx of the same thread and barrier, ptxas fuses an expect_tx
 * into it, and its own opcode would not show.) */
// sass: ptx_check_tma_load_3d SYNCS.ARRIVE.TRANS64.RED.A0TR UTMALDG.3D SYNCS.ARRIVE.TRANS64.A1T0 SYNCS.PHASECHK.TRANS64.TRYWAIT
extern "C" __global__ void ptx_check_tma_load_3d(const __grid_constant__ CUtensorMap map,
                                                 float *__restrict__ out, int c0, int c1, int c2) {
    __shared__ alignas(128) float tile[16 * 16 * 4];
    __shared__ unsigned long long bar;
    const unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) mbarrier_init(b, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) {
        mbarrier_expect_tx(b, sizeof tile);
        tma_load_3d(smem_addr(tile), &map, b, c0, c1, blockIdx.x + c2);
    }
    mbarrier_arrive(b);
    mbarrier_wait_parity(b, 0);
    for (int i = threadIdx.x; i < 16 * 16 * 4; i += blockDim.x)
        out[blockIdx.x * 16 * 16 * 4 + i] = tile[i];
}

/* A multicast load in a cluster: CTA 0 reads the tile once and it lands in every CTA's shared
 * memory. Each CTA arms its own barrier; the init is made visible to the cluster first (fence +
 * cluster barrier), since CTA 0's copy completes bytes on the other CTAs' barriers. */
// sass: ptx_check_tma_multicast SYNCS.EXCH.64 UCGABAR_ARV UCGABAR_WAIT SYNCS.ARRIVE.TRANS64 UTMALDG.2D.MULTICAST SYNCS.PHASECHK.TRANS64.TRYWAIT CCTL.IVALL
extern "C" __global__ void ptx_check_tma_multicast(const __grid_constant__ CUtensorMap map,
                                                   float *__restrict__ out, int c0, int c1) {
    __shared__ alignas(128) float tile[64 * 32];
    __shared__ unsigned long long bar;
    const unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) {
        mbarrier_init(b, 1);
        fence_mbarrier_init_cluster();
    }
    __syncthreads();
    cluster_sync();
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(b, sizeof tile);
        if (cluster_ctarank() == 0)
            tma_load_2d_multicast(smem_addr(tile), &map, b, c0, c1,
                                  (unsigned short)((1u << cluster_nctarank()) - 1));
    }
    mbarrier_wait_parity_cluster(b, 0);
    for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) out[blockIdx.x * 64 * 32 + i] = tile[i];
    cluster_sync(); /* no CTA exits while the copy may still write into another */
}

/* The stores' source: block b's 64 x 32 floats of `in`, doubled, written by all threads and
 * fenced into the async proxy, then a barrier (one thread stores next). */
static __device__ void fill_store_tile(float (&tile)[64 * 32], const float *__restrict__ in) {
    for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x)
        tile[i] = 2.0f * in[blockIdx.x * 64 * 32 + i];
    fence_proxy_async_shared();
    __syncthreads();
}

/* elect.sync: exactly one lane of each warp is elected; every lane writes whether it was. */
// sass: ptx_check_elect ELECT
extern "C" __global__ void ptx_check_elect(int *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = elect_one_sync() ? 1 : 0;
}

/* A 2-D TMA store: the threads write the tile, fence it into the async proxy, and one thread
 * stores it, commits and waits until the tile has been read. */
// sass: ptx_check_tma_store_2d MEMBAR.ALL.CTA FENCE.VIEW.ASYNC.S UTMASTG.2D UTMACMDFLUSH DEPBAR.LE
extern "C" __global__ void ptx_check_tma_store_2d(const __grid_constant__ CUtensorMap map,
                                                  const float *__restrict__ in, int c0, int c1) {
    __shared__ alignas(128) float tile[64 * 32];
    fill_store_tile(tile, in);
    if (threadIdx.x == 0) {
        tma_store_2d(&map, smem_addr(tile), c0, c1 + 32 * blockIdx.x);
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads(); /* the tile may be reused only after the wait */
}

/* A 3-D TMA store (chapter 08's O: {D, n, pairs}), as the 2-D one: box (c0, c1, blockIdx.x). */
// sass: ptx_check_tma_store_3d FENCE.VIEW.ASYNC.S UTMASTG.3D UTMACMDFLUSH DEPBAR.LE
extern "C" __global__ void ptx_check_tma_store_3d(const __grid_constant__ CUtensorMap map,
                                                  const float *__restrict__ in, int c0, int c1) {
    __shared__ alignas(128) float tile[64 * 32];
    fill_store_tile(tile, in);
    if (threadIdx.x == 0) {
        tma_store_3d(&map, smem_addr(tile), c0, c1, blockIdx.x);
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads();
}

/* The same store by a predicate inside the asm: every thread runs the store, the commit and the
 * wait, and only thread 0's store happens (no branch around it). */
// sass: ptx_check_tma_store_2d_if FENCE.VIEW.ASYNC.S UTMASTG.2D UTMACMDFLUSH DEPBAR.LE
extern "C" __global__ void ptx_check_tma_store_2d_if(const __grid_constant__ CUtensorMap map,
                                                     const float *__restrict__ in, int c0,
                                                     int c1) {
    __shared__ alignas(128) float tile[64 * 32];
    fill_store_tile(tile, in);
    tma_store_2d_if(&map, smem_addr(tile), c0, c1 + 32 * blockIdx.x, threadIdx.x == 0);
    tma_store_commit();
    tma_store_wait<0>();
    __syncthreads();
}

/* The push exchange of 03_softmax's cluster stage: each CTA sends its pair into slot `rank` of
 * every CTA's shared memory with st.async, counted on that CTA's mbarrier; then each CTA frees
 * its right neighbour with a remote arrive (release.cluster) and waits for its left one.
 * cluster_ctarank, cluster_nctarank and mapa_shared have no opcode of their own (S2R of
 * SR_CgaCtaId, a constant-bank load, and the PRMT that puts the rank in the address's top
 * byte), nor has fence_mbarrier_init_cluster; the releasing cluster_arrive and remote arrive
 * show their MEMBAR.ALL.GPU, the cluster-scope acquires their CCTL.IVALL. */
// sass: ptx_check_cluster SYNCS.EXCH.64 UCGABAR_ARV UCGABAR_WAIT SYNCS.ARRIVE.TRANS64 PRMT STAS.64 SYNCS.PHASECHK.TRANS64.TRYWAIT CCTL.IVALL MEMBAR.ALL.GPU CGAERRBAR SYNCS.ARRIVE.TRANS64.RED.A1T0
extern "C" __global__ void ptx_check_cluster(const float2 *__restrict__ in,
                                             float *__restrict__ out) {
    __shared__ float2 pairs[16];
    __shared__ unsigned long long bar, freed;
    const unsigned rank = cluster_ctarank(), n = cluster_nctarank();
    const unsigned b = smem_addr(&bar), f = smem_addr(&freed);
    if (threadIdx.x == 0) {
        mbarrier_init(b, 1);
        mbarrier_init(f, 1);
        fence_mbarrier_init_cluster();
    }
    __syncthreads();
    cluster_arrive_relaxed();
    const float2 mine = in[blockIdx.x];
    cluster_wait();
    if (threadIdx.x == 0) mbarrier_arrive_expect_tx(b, n * 8);
    if (threadIdx.x < n)
        st_async_v2_f32(mapa_shared(smem_addr(&pairs[rank]), threadIdx.x), mine.x, mine.y,
                        mapa_shared(b, threadIdx.x));
    mbarrier_wait_parity_cluster(b, 0);
    float s = 0.0f;
    for (unsigned i = 0; i < n; i++) s += pairs[i].x * pairs[i].y;
    if (threadIdx.x == 0) mbarrier_arrive_cluster(mapa_shared(f, (rank + 1) % n));
    mbarrier_wait_parity_cluster(f, 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    cluster_arrive();
    cluster_wait();
}

/* The CTA-scope remote arrival: the same SYNCS.ARRIVE.TRANS64.RED.A1T0 (here without CGAERRBAR), and
 * no MEMBAR (06_wgmma_tma/sass_checks.sh checks stage 6 has none). */
// sass: ptx_check_arrive_remote SYNCS.EXCH.64 SYNCS.ARRIVE.TRANS64.RED.A1T0
extern "C" __global__ void ptx_check_arrive_remote(float *__restrict__ out) {
    __shared__ unsigned long long freed;
    const unsigned rank = cluster_ctarank(), n = cluster_nctarank();
    const unsigned f = smem_addr(&freed);
    if (threadIdx.x == 0) {
        mbarrier_init(f, 1);
        fence_mbarrier_init_cluster();
    }
    cluster_arrive_relaxed();
    cluster_wait();
    if (threadIdx.x == 0) mbarrier_arrive_remote(mapa_shared(f, (rank + 1) % n));
    mbarrier_wait_parity_cluster(f, 0);
    out[blockIdx.x] = (float)rank;
    cluster_arrive_relaxed();
    cluster_wait();
}

/* An epilogue's store of a 16-bit tile: x1, x2, x4 and their transposed forms, each lane giving
 * its row address, then the tile is copied out. */
// sass: ptx_check_stmatrix STSM.16.M88 STSM.16.M88.2 STSM.16.M88.4 STSM.16.MT88 STSM.16.MT88.2 STSM.16.MT88.4
extern "C" __global__ void ptx_check_stmatrix(const unsigned *__restrict__ in,
                                              unsigned *__restrict__ out) {
    __shared__ alignas(16) unsigned short tile[6][4][8][8]; /* [store][matrix][row][col] */
    const unsigned lane = threadIdx.x & 31;
    const unsigned *r = in + 4 * lane;
    const unsigned m = lane / 8, row = lane % 8; /* the matrix and row this lane addresses */
    stmatrix_x1(smem_addr(&tile[0][0][row][0]), r[0]);
    stmatrix_x2(smem_addr(&tile[1][m % 2][row][0]), r[0], r[1]);
    stmatrix_x4(smem_addr(&tile[2][m][row][0]), r[0], r[1], r[2], r[3]);
    stmatrix_x1_trans(smem_addr(&tile[3][0][row][0]), r[0]);
    stmatrix_x2_trans(smem_addr(&tile[4][m % 2][row][0]), r[0], r[1]);
    stmatrix_x4_trans(smem_addr(&tile[5][m][row][0]), r[0], r[1], r[2], r[3]);
    __syncwarp();
    const unsigned *words = (const unsigned *)tile;
    for (unsigned i = lane; i < sizeof tile / 4; i += 32) out[i] = words[i];
}

/* Warp specialization's register split: warpgroup 0 (the producer) gives registers back,
 * warpgroup 1 (the consumer) takes them. __launch_bounds__(256, 1) and the warpgroup-uniform
 * branch are what let ptxas honour setmaxnreg (else warning C7508, an error here). */
// sass: ptx_check_setmaxnreg USETMAXREG.DEALLOC.CTAPOOL USETMAXREG.TRY_ALLOC.CTAPOOL
extern "C" __global__ void __launch_bounds__(256, 1)
    ptx_check_setmaxnreg(const float *__restrict__ in, float *__restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x / 128 == 0) {
        setmaxnreg_dec<40>();
        out[i] = in[i] + 1.0f;
    } else {
        setmaxnreg_inc<232>();
        out[i] = in[i] * 2.0f;
    }
}

/* A named barrier per warpgroup: each 128-thread half of the block exchanges values through
 * shared memory and synchronizes on its own id (1 or 2) without the other half. */
// sass: ptx_check_named_barrier BAR.SYNC
extern "C" __global__ void __launch_bounds__(256)
    ptx_check_named_barrier(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float vals[256];
    const unsigned wg = threadIdx.x / 128;
    vals[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    named_barrier_sync(1 + wg, 128);
    out[blockIdx.x * 256 + threadIdx.x] = vals[wg * 128 + (threadIdx.x + 1) % 128];
}

/* The ping-pong's signal (08's stage 6): warpgroup 0 writes, arrives on barrier 1 and goes on;
 * warpgroup 1 waits there (256 threads: its 128 and the 128 that arrive) and reads what the
 * other wrote. */
// sass: ptx_check_named_barrier_arrive BAR.ARV BAR.SYNC
extern "C" __global__ void __launch_bounds__(256)
    ptx_check_named_barrier_arrive(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float vals[128];
    const unsigned wg = threadIdx.x / 128, t = threadIdx.x % 128;
    if (wg == 0) {
        vals[t] = in[blockIdx.x * 128 + t];
        named_barrier_arrive(1, 256);
    } else {
        named_barrier_sync(1, 256);
        out[blockIdx.x * 128 + t] = vals[(t + 1) % 128];
    }
}

/* One arrival a warp, by lane 0, the predicate inside the asm (08's stage 6 hands slots back so
 * while a wgmma is in flight): the barrier counts warps. */
// sass: ptx_check_mbarrier_arrive_if SYNCS.EXCH.64 SYNCS.ARRIVE.TRANS64.A1T0 SYNCS.PHASECHK.TRANS64.TRYWAIT
extern "C" __global__ void ptx_check_mbarrier_arrive_if(const float *__restrict__ in,
                                                        float *__restrict__ out) {
    __shared__ unsigned long long bar;
    __shared__ float vals[1024];
    const unsigned b = smem_addr(&bar);
    if (threadIdx.x == 0) mbarrier_init(b, blockDim.x / 32);
    __syncthreads();
    vals[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncwarp();
    mbarrier_arrive_if(b, threadIdx.x % 32 == 0);
    mbarrier_wait_parity(b, 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = vals[(threadIdx.x + 1) % blockDim.x];
}

/* The bf16 tensor-core product (08's bf16 rows): one m16n8k16 on fragments read from global
 * memory, the fp32 accumulator written back. */
// sass: ptx_check_mma_bf16 HMMA.16816.F32.BF16
extern "C" __global__ void ptx_check_mma_bf16(const unsigned *__restrict__ in,
                                              float *__restrict__ out) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned a[4] = {in[lane], in[32 + lane], in[64 + lane], in[96 + lane]};
    const unsigned b[2] = {in[128 + lane], in[160 + lane]};
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    mma_m16n8k16_bf16_f32(d, a, b);
    for (int i = 0; i < 4; i++) out[4 * lane + i] = d[i];
}

/* 08 stage 4's softmax exponential: 2^x, one MUFU.EX2 per element. */
// sass: ptx_check_ex2 MUFU.EX2
extern "C" __global__ void ptx_check_ex2(const float *__restrict__ in, float *__restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = ex2_approx(in[i]);
}

/* 07 stage 5's A scales read beside the ring: ld.shared at a 32-bit shared address, one LDS. */
// sass: ptx_check_ld_shared LDS
extern "C" __global__ void ptx_check_ld_shared(const float *__restrict__ in,
                                               float *__restrict__ out) {
    __shared__ float vals[1024];
    vals[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    const unsigned next = smem_addr(&vals[(threadIdx.x + 1) % blockDim.x]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = ld_shared_f32(next);
}

/* 08 stage 6's opaque address: the compiler cannot see that the divisor is 7, so the division
 * stays a division (the reciprocal on the MUFU and its correction), not a multiply by a magic
 * number as in[i] / 7u would be. */
// sass: ptx_check_opaque I2F.U32.RP MUFU.RCP
extern "C" __global__ void ptx_check_opaque(const unsigned *__restrict__ in,
                                            unsigned *__restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] / opaque_u32(7u);
}
