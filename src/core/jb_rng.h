/* The random streams: splitmix64, tiny, seedable and the same on every platform, so
 * every rank draws the same numbers from the same seed and stream without a message
 * (no MPI, unit-tested alone).  A user keeps a stream of its own (the order of the
 * variants, --inject's noise, the shuffled peers), so one never shifts another's. */
#ifndef JB_RNG_H
#define JB_RNG_H

#include <stdint.h>

typedef struct { uint64_t state; } jb_rng;
void jb_rng_seed(jb_rng *r, uint64_t seed, uint64_t stream);
uint64_t jb_rng_next(jb_rng *r);
double jb_rng_uniform(jb_rng *r); /* in [0, 1) */
/* perm[0..n-1]: a random permutation of 0..n-1 (Fisher-Yates) */
void jb_rng_shuffle(jb_rng *r, long *perm, long n);
/* A gamma variate of this mean and standard deviation (shape (mean/sd)^2):
 * right-skewed like the exchange times of Tabe et al.'s Figure 3.  sd 0: mean. */
double jb_rng_gamma(jb_rng *r, double mean, double sd);

#endif
