/*
 * pbs_prng.h - the seeded generator of the workloads' input: SplitMix64
 * (G. Steele, D. Lea, C. Flood, "Fast Splittable Pseudorandom Number Generators",
 * OOPSLA 2014). Deterministic for a given seed on every platform, so a run can be
 * repeated bit for bit.
 */
#ifndef PBS_PRNG_H
#define PBS_PRNG_H

#include <stdint.h>

typedef struct pbs_prng {
    uint64_t state;
} pbs_prng;

static inline void pbs_prng_seed(pbs_prng *g, uint64_t seed)
{
    g->state = seed;
}

static inline uint64_t pbs_prng_next(pbs_prng *g)
{
    uint64_t z = (g->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The same finaliser as a stateless 64-bit mixer (used for checksums). */
static inline uint64_t pbs_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif /* PBS_PRNG_H */
