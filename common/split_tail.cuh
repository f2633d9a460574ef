/* Splitting a persistent kernel's last round across every worker (stream-K's idea, for the tail
 * only).
 *
 * A persistent grid of G workers (blocks, or clusters) that takes U equal work units in turn
 * needs ceil(U / G) rounds; when U is not a multiple of G the last round leaves workers idle:
 * 2048 units on 132 SMs take 16 rounds, the time of 2112. Measured on an H100 (chapters 06 and
 * 08): the same work per SM on 132 SMs instead of 128 ran 1.7% (GEMM at 8192^3) and 2.0%
 * (attention at 8 x 16 x 2048) more TFLOPS, not the 3.1% of the SM count: the clock drops as
 * more SMs draw power. (FP8 GEMM, already at the power limit, gained 0.5% or nothing.) That is
 * the most splitting can win, before its costs: chapter 08's stage 6 with its last round split
 * this way measured 3% slower at 8 x 16 x 2048 (D = 128) and 10% at 16 x 16 x 1024 (D = 64) on
 * an H100 (its README, "Splitting the last round": the merge code in its boundary turn alone
 * cost 3% at D = 64), and was not kept.
 *
 * The fix: the first floor(U / G) rounds stay whole units; the tail's units are cut along their
 * reduction dimension (K tiles of a GEMM, key tiles of attention) into W steps, laid end to end,
 * and worker b takes steps [b W / G, (b + 1) W / G): every worker the same share, within one
 * step. A unit cut between workers is a set of pieces, each a partial result (a GEMM's partial
 * sums; attention's unnormalized O with its row maxima and sums) of consecutive workers. Each
 * piece writes its partial to a workspace slot and counts itself on the unit's counter; the
 * piece that arrives last adds the others' partials to its own, in piece order (the sum does not
 * depend on which piece was last: the same bits every run), stores the result, and sets the
 * counter back to 0 for the next launch. Nobody waits for anybody: workers need not be resident
 * together, and a piece never blocks.
 *
 * Slots: only a worker's first and last pieces can be cut (the units between lie wholly inside
 * its range), so worker b has two: 2 b for the piece of the unit its range starts in, 2 b + 1
 * for the unit its range ends in (when that is another unit). A cut unit's counter is the slot
 * of its first piece (unique: see split_slot). The caller sizes a slot for its partial. */
#ifndef SPLIT_TAIL_CUH
#define SPLIT_TAIL_CUH

#include <cuda_runtime.h>

struct split_tail {
    int workers; /* G, at most W: every worker's range has a step (split_tail_make) */
    int work;    /* W: steps in the tail; 0 when nothing is split */
};
/* G workers for W steps: min(G, W) of them, so that no range is empty (an empty range would
 * still count among a unit's pieces, and no piece would ever arrive last). Workers from
 * min(G, W) on have no tail. W must fit an int. */
static __host__ __device__ __forceinline__ split_tail split_tail_make(int workers, int work) {
    return {work < workers ? (work > 0 ? work : 1) : workers, work};
}

/* Worker b's first step, floor(b W / G) (split_begin(s, G) = W), in 32-bit arithmetic: with
 * W = q G + r, b W / G = b q + b r / G and b r < G^2. (A 64-bit division is a subroutine call
 * whose registers a producer warp with 24 or 40 of them does not have: ptxas spills.) */
static __host__ __device__ __forceinline__ int split_begin(const split_tail &s, int b) {
    const int q = s.work / s.workers, r = s.work % s.workers;
    return b * q + b * r / s.workers;
}
/* The worker whose range holds step x: the largest b with b W / G <= x, i.e.
 * floor(((x + 1) G - 1) / W) (64-bit: only a cut piece's store asks). */
static __host__ __device__ __forceinline__ int split_owner(const split_tail &s, int x) {
    return (int)(((long long)(x + 1) * s.workers - 1) / s.work);
}
/* The slot of worker b's piece of the unit whose steps start at a. */
static __host__ __device__ __forceinline__ int split_slot(const split_tail &s, int b, int a) {
    return 2 * b + (split_begin(s, b) < a ? 1 : 0);
}

/* A cut unit, as one piece sees it: steps [a, a + len) of the tail; this piece is worker b's.
 * pieces(): the workers its steps span; index(): this piece's place among them (0 first). */
struct split_piece {
    int a;
    int len;
    int b;
    __device__ __forceinline__ int first(const split_tail &s) const { return split_owner(s, a); }
    __device__ __forceinline__ int pieces(const split_tail &s) const {
        return split_owner(s, a + len - 1) - first(s) + 1;
    }
    __device__ __forceinline__ int index(const split_tail &s) const { return b - first(s); }
    /* the slot of piece i (0 .. pieces - 1) */
    __device__ __forceinline__ int slot(const split_tail &s, int i) const {
        return split_slot(s, first(s) + i, a);
    }
    __device__ __forceinline__ int counter(const split_tail &s) const { return slot(s, 0); }
};

/* Called by a whole warp once each lane has written its share of the piece's partial (plain
 * stores to global memory). Returns, the same in every lane, whether this piece arrived last
 * of `pieces`; if so every other piece's partial is visible to this warp (read them with
 * __ldcg: L2, never a stale L1 line) and the counter is back at 0. The fence before the count
 * orders each lane's stores before it (the threadFenceReduction pattern); the one after orders
 * the last piece's reads after the other pieces' counts. */
static __device__ __forceinline__ bool split_arrive_last(int *counter, int pieces) {
    __threadfence();
    __syncwarp();
    int before = 0;
    if ((threadIdx.x & 31) == 0) before = atomicAdd(counter, 1);
    before = __shfl_sync(0xffffffffu, before, 0);
    const bool last = before == pieces - 1;
    if (last) {
        if ((threadIdx.x & 31) == 0) atomicExch(counter, 0);
        __threadfence();
    }
    return last;
}

/* Host: a device workspace of `bytes` for partials and `counters` zeroed ints, grown when a
 * launch needs more and kept for the process's lifetime (one per stage file: static). Returns
 * false, with the error cleared, if it cannot be had; the caller then runs without splitting.
 * Growing frees the old buffers, which waits for the work queued on them. */
struct split_workspace {
    void *partials;
    int *counters;
    size_t bytes, count;
};
static inline bool split_workspace_reserve(split_workspace *w, size_t bytes, size_t counters) {
    if (w->partials && w->bytes >= bytes && w->count >= counters) return true;
    if (w->partials) cudaFree(w->partials);
    if (w->counters) cudaFree(w->counters);
    *w = split_workspace{};
    void *p = nullptr, *c = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess ||
        cudaMalloc(&c, counters * sizeof(int)) != cudaSuccess ||
        cudaMemset(c, 0, counters * sizeof(int)) != cudaSuccess) {
        cudaGetLastError(); /* not sticky */
        if (p) cudaFree(p);
        if (c) cudaFree(c);
        return false;
    }
    *w = split_workspace{p, (int *)c, bytes, counters};
    return true;
}

#endif
