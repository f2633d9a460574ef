/* A counter-based generator: value i of a fill depends on (seed, i) alone, on host and device
 * alike, so fills are reproducible from the printed seed whatever the launch shape. */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

#ifdef __CUDACC__
#define RNG_HD __host__ __device__ __forceinline__
#else
#define RNG_HD static inline
#endif

/* splitmix64's finalizer: a bijection on 64 bits with good avalanche. */
RNG_HD uint64_t rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi), 24 random bits. */
RNG_HD float rng_uniform(uint64_t seed, uint64_t i, float lo, float hi) {
    uint64_t r = rng_mix(seed * 0x9E3779B97F4A7C15ull + rng_mix(i + 0x632BE59BD9B4E019ull));
    float u = (float)(r >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

#endif
