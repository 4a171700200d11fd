/* Who exchanges with whom in the contention benchmarks (Bhatele & Kale,
 * IPDPS 2009).  The participants are the nodes of the job, each at its
 * coordinates of the topology; occupant[index] is the participant at a node
 * index, or -1 where the job has no node.  MPI-free, so ctest checks every
 * pairing exactly. */
#ifndef JB_PAIRS_H
#define JB_PAIRS_H

#include <stdint.h>

#include "topology.h"

typedef struct {
    long *partner;          /* per participant: its partner, or -1 (idle) */
    unsigned char *pinger;  /* per participant: 1 on the side that starts and times */
    long pairs;
} pairing;

int pairing_init(pairing *p, long participants); /* -1: out of memory */
void pairing_free(pairing *p);

/* Without contention: the root and the first participant (lowest number) at
 * exactly `hops` from it; every other participant idle.  Returns that
 * partner, or -1 when no participant is that far. */
long pairs_at_distance(const topo_shape *t, const int *coords, long participants, long root, int hops,
                       pairing *out);

/* With contention: every participant paired with the one n hops away along
 * dim, in blocks of 2n (coordinate c with c/n even pairs c + n), so up to n
 * routes share each link of the dimension.  Participants whose partner is
 * past the end or not in the job stay idle.  Needs 1 <= n <= dims[dim]/2. */
void pairs_along(const topo_shape *t, const int *coords, const long *occupant, long participants, int dim, int n,
                 pairing *out);

/* Controlled contention: k pairs, each `hops` apart along dim, whose routes
 * all cross one link: pair j runs from coordinate hops-1-j to 2 hops-1-j on
 * the line through `origin` (its other coordinates), and the shared link
 * leaves coordinate hops-1 the + way.  Needs 1 <= k <= hops <= dims[dim]/2.
 * Returns 0, or the index of a node the pairs need that the job lacks
 * (+1, negated). */
long pairs_sharing_link(const topo_shape *t, const int *origin, const long *occupant, long participants, int dim,
                        int k, int hops, pairing *out, topo_link *shared);

/* Random pairing for one call: a permutation of the participants, the same
 * on every rank for (seed, call); consecutive entries pair, the first of
 * each pair starts.  With an odd count the last stays idle.  perm has room
 * for every participant. */
void pairs_random(long participants, uint64_t seed, long call, long *perm, pairing *out);

#endif
