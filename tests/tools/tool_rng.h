/* tool_rng.h: the random numbers of the test tools (genmodel, gendense,
 * randprot): splitmix64, so that a seed gives the same files everywhere. */
#ifndef HMMC_TOOL_RNG_H
#define HMMC_TOOL_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} Rng;

static inline uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* [0, 1), 53 random bits */
static inline double rng_uniform(Rng *r)
{
    return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

#endif
