/* setmaxnreg (sm_90a): a warpgroup (4 consecutive warps, 128 threads) changes its own register
 * budget while the kernel runs. In a warp-specialized kernel the producer warpgroup, which only
 * issues TMA copies, gives registers back (dec) and the consumer warpgroups, which hold the wgmma
 * accumulators, take them (inc): the launch allocates the same count to every thread, this
 * moves them to where the work is.
 *
 * PTX ISA 9.0, 9.7.19.5 "Miscellaneous Instructions: setmaxnreg" (setmaxnreg.{inc,dec}.sync
 * .aligned.u32), sm_90a only. SASS: USETMAXREG.TRY_ALLOC.CTAPOOL (inc),
 * USETMAXREG.DEALLOC.CTAPOOL (dec).
 *
 * Rules (ptxas ignores the instruction, with warning C7508, if it cannot prove them):
 *  - N is a multiple of 8 in 24 .. 256;
 *  - the kernel has __launch_bounds__(threads, 1), so that its register count is fixed;
 *  - every thread of the warpgroup executes it: branch on a warpgroup-uniform value
 *    (threadIdx.x / 128, or a __shfl_sync'ed one), never on the lane;
 *  - inc waits until enough registers have been released (by dec) in the SM's pool: the
 *    decreasing warpgroups must not wait on the increasing ones first. */
#ifndef PTX_SETMAXNREG_CUH
#define PTX_SETMAXNREG_CUH

#include <cuda_runtime.h>

template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: N in 24..256, a multiple of 8");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: N in 24..256, a multiple of 8");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

#endif
