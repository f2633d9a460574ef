/* The host's e4m3 conversions (common/convert.c) against the CUDA toolkit's own (cuda_fp8.h,
 * whose host code is the software rounding that sm_80 also runs; sm_89 and later have an
 * instruction for it). Chapter 07's quantize check compares the GPU's bytes with
 * f32_to_e4m3's, bit for bit, so the two must round alike: to nearest even, saturating to
 * +-448 (__NV_SATFINITE). No GPU needed; C++ because cuda_fp8.h is. Prints PASS/FAIL lines for
 * tests/run.sh.
 *
 * Every positive fp32 value in [2^-11, 2^9): every e4m3 rounding boundary, subnormal and
 * normal, the ties, and the saturation from 448 up; every 7th of their negatives; then every
 * 251st bit pattern of the rest (zeros, tiny values, huge values, infinities). NaNs are left
 * out (both sides give a NaN byte, with signs that need not agree). About 2 s. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cuda_fp8.h>

#include "harness.h"

static uint8_t toolkit(float f) {
    return (uint8_t)__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main() {
    const uint32_t lo = 116u << 23, hi = 136u << 23; /* 2^-11 and 2^9 as bit patterns */
    long checked = 0, wrong = 0;
    uint32_t first = 0;
    for (uint32_t sign = 0; sign <= 1; sign++)
        for (uint32_t u = lo; u < hi; u += sign ? 7 : 1) {
            const float f = float_of(u | sign << 31);
            checked++;
            if (f32_to_e4m3(f) != toolkit(f) && wrong++ == 0) first = u | sign << 31;
        }
    for (uint64_t u = 0; u < (1ull << 32); u += 251) {
        const uint32_t mag = (uint32_t)u & 0x7FFFFFFFu;
        const float f = float_of((uint32_t)u);
        if ((mag >= lo && mag < hi) || std::isnan(f)) continue;
        checked++;
        if (f32_to_e4m3(f) != toolkit(f) && wrong++ == 0) first = (uint32_t)u;
    }
    if (wrong)
        printf("FAIL host: f32_to_e4m3 against cuda_fp8.h's __nv_cvt_float_to_fp8 (satfinite): %ld "
               "of %ld differ, first 0x%08x (%g): ours 0x%02x, toolkit 0x%02x\n",
               wrong, checked, first, (double)float_of(first), f32_to_e4m3(float_of(first)),
               toolkit(float_of(first)));
    else
        printf("PASS host: f32_to_e4m3 rounds like cuda_fp8.h's __nv_cvt_float_to_fp8 (satfinite) "
               "on %ld fp32 values (every one in [2^-11, 2^9))\n",
               checked);

    int bad = 0;
    for (int v = 0; v < 256; v++) {
        const __half h(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)v, __NV_E4M3));
        const float want = __half2float(h), got = e4m3_to_f32((uint8_t)v);
        if (!(got == want || (std::isnan(got) && std::isnan(want)))) bad++;
    }
    if (bad) printf("FAIL host: e4m3_to_f32 differs from cuda_fp8.h on %d of 256 bytes\n", bad);
    else printf("PASS host: e4m3_to_f32 decodes all 256 bytes as cuda_fp8.h does\n");
    return wrong || bad ? 1 : 0;
}
