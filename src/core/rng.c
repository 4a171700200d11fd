/* The random streams: splitmix64, and the shuffles and variates drawn from it. */
#include "jb_rng.h"

#include <math.h>

void jb_rng_seed(jb_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = seed ^ (stream * 0xD1B54A32D192ED03ULL);
    jb_rng_next(r);
}

uint64_t jb_rng_next(jb_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double jb_rng_uniform(jb_rng *r) { return (double)(jb_rng_next(r) >> 11) * 0x1.0p-53; }

void jb_rng_shuffle(jb_rng *r, long *perm, long n)
{
    for (long i = 0; i < n; i++)
        perm[i] = i;
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(jb_rng_next(r) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static double rng_normal(jb_rng *r) /* Box and Muller */
{
    double u = 1.0 - jb_rng_uniform(r), v = jb_rng_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Marsaglia and Tsang, "A simple method for generating gamma variables" (2000),
 * for shape k >= 1; below 1, their boost: gamma(k + 1) U^(1/k). */
static double rng_gamma_shape(jb_rng *r, double k)
{
    if (k < 1.0)
        return rng_gamma_shape(r, k + 1.0) * pow(1.0 - jb_rng_uniform(r), 1.0 / k);
    double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = rng_normal(r), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = 1.0 - jb_rng_uniform(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

double jb_rng_gamma(jb_rng *r, double mean, double sd)
{
    if (!(sd > 0))
        return mean;
    double shape = (mean / sd) * (mean / sd);
    return rng_gamma_shape(r, shape) * sd * sd / mean;
}
