/* fp16, bf16 and fp8 (e4m3) conversions on the host, for references and checks. They are
 * written out rather than taken from the toolkit because the toolkit's versions are C++. */
#include <string.h>

#include "harness.h"

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int exp = (h >> 10) & 0x1F;
    uint32_t man = h & 0x3FF;
    if (exp == 0x1F) return float_of(sign | 0x7F800000u | (man << 13)); /* Inf, NaN */
    if (exp == 0) {                                                      /* zero, subnormal */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return float_of(sign | ((uint32_t)(exp - 15 + 127) << 23) | (man << 13));
}

uint16_t f32_to_f16(float f) {
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t absu = u & 0x7FFFFFFFu;
    if (absu > 0x7F800000u) return sign | 0x7E00; /* NaN */
    if (absu >= 0x477FF000u) return sign | 0x7C00; /* rounds to >= 65520: Inf */
    if (absu < 0x38800000u) {                      /* below 2^-14: subnormal or zero */
        /* value / 2^-24, rounded to nearest even, is the subnormal's mantissa */
        float a = float_of(absu) * 0x1p24f;
        float r = a + 0x1p23f - 0x1p23f;          /* rounds to an integer, ties to even */
        return sign | (uint16_t)r;
    }
    uint32_t exp = (absu >> 23) - 127 + 15;
    uint32_t man = absu & 0x7FFFFF;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* may carry into the exponent */
    return sign | (uint16_t)h;
}

float bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t f32_to_bf16(float f) {
    uint32_t u = bits_of(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* e4m3 (OCP FP8, "fn"): 1 sign, 4 exponent (bias 7), 3 mantissa; no Inf; S.1111.111 is NaN;
 * largest finite 448. */
float e4m3_to_f32(uint8_t v) {
    uint32_t sign = v & 0x80;
    int exp = (v >> 3) & 0xF;
    int man = v & 7;
    if (exp == 0xF && man == 7) return NAN;
    float r = exp == 0 ? (float)man * 0x1p-9f : ldexpf(1.0f + (float)man / 8.0f, exp - 7);
    return sign ? -r : r;
}

uint8_t f32_to_e4m3(float f) {
    if (isnan(f)) return 0x7F;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a >= 448.0f) return sign | 0x7E; /* saturate */
    if (a == 0.0f) return sign;
    /* Pick the exponent, then round the scaled mantissa to an integer (ties to even). */
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1 + 7;
    if (exp < 1) { /* subnormal: steps of 2^-9 */
        float q = a * 0x1p9f;
        float r = q + 0x1p23f - 0x1p23f;
        return sign | (uint8_t)r;
    }
    float q = ldexpf(a, -(e - 1)) * 8.0f; /* in [8, 16) */
    float r = q + 0x1p23f - 0x1p23f;
    int m = (int)r;
    if (m == 16) { /* rounded up into the next binade */
        m = 8;
        exp++;
    }
    if (exp > 15 || (exp == 15 && m - 8 == 7)) return sign | 0x7E;
    return sign | (uint8_t)((exp << 3) | (m - 8));
}
