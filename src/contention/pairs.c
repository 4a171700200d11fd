/* Pair selection for the contention benchmarks. */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

#include "jb_rng.h"

int pairing_init(pairing *p, long participants)
{
    p->partner = calloc((size_t)participants, sizeof *p->partner);
    p->pinger = calloc((size_t)participants, 1);
    p->pairs = 0;
    return p->partner && p->pinger ? 0 : -1;
}

void pairing_free(pairing *p)
{
    free(p->partner);
    free(p->pinger);
    memset(p, 0, sizeof *p);
}

static void clear(pairing *p, long participants)
{
    for (long i = 0; i < participants; i++)
        p->partner[i] = -1;
    memset(p->pinger, 0, (size_t)participants);
    p->pairs = 0;
}

static void pair(pairing *p, long a, long b) /* a starts */
{
    p->partner[a] = b;
    p->partner[b] = a;
    p->pinger[a] = 1;
    p->pairs++;
}

long pairs_at_distance(const topo_shape *t, const int *coords, long participants, long root, int hops,
                       pairing *out)
{
    clear(out, participants);
    const int *at = coords + root * t->ndims;
    for (long i = 0; i < participants; i++)
        if (topo_hops(t, at, coords + i * t->ndims) == hops) {
            pair(out, root, i);
            return i;
        }
    return -1;
}

void pairs_along(const topo_shape *t, const int *coords, const long *occupant, long participants, int dim, int n,
                 pairing *out)
{
    clear(out, participants);
    for (long i = 0; i < participants; i++) {
        int c[TOPO_MAXDIMS];
        memcpy(c, coords + i * t->ndims, sizeof c[0] * (size_t)t->ndims);
        if (c[dim] / n % 2 || c[dim] + n >= t->dims[dim])
            continue; /* the other side of a block, or a block cut short by the end */
        c[dim] += n;
        long j = occupant[topo_index(t, c)];
        if (j >= 0)
            pair(out, i, j);
    }
}

long pairs_sharing_link(const topo_shape *t, const int *origin, const long *occupant, long participants, int dim,
                        int k, int hops, pairing *out, topo_link *shared)
{
    clear(out, participants);
    int c[TOPO_MAXDIMS];
    memcpy(c, origin, sizeof c[0] * (size_t)t->ndims);
    c[dim] = hops - 1;
    *shared = (topo_link){topo_index(t, c), dim, +1};
    for (int j = 0; j < k; j++) {
        int from[TOPO_MAXDIMS], to[TOPO_MAXDIMS];
        memcpy(from, c, sizeof from);
        memcpy(to, c, sizeof to);
        from[dim] = hops - 1 - j;
        to[dim] = 2 * hops - 1 - j;
        long a = occupant[topo_index(t, from)], b = occupant[topo_index(t, to)];
        if (a < 0 || b < 0)
            return -(topo_index(t, a < 0 ? from : to) + 1);
        pair(out, a, b);
    }
    return 0;
}

void pairs_random(long participants, uint64_t seed, long call, long *perm, pairing *out)
{
    clear(out, participants);
    jb_rng rng;
    jb_rng_seed(&rng, seed, (uint64_t)call);
    jb_rng_shuffle(&rng, perm, participants);
    for (long i = 0; i + 1 < participants; i += 2)
        pair(out, perm[i], perm[i + 1]);
}
