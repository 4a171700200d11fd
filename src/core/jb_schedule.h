/* The order of a run's variants (Hoefler & Belli, SC15: randomise the order of
 * experiments): which variant runs which of its timed calls when (no MPI,
 * unit-tested alone).
 *
 * A run sweeps V variants (sizes x patterns, methods, ...) of `calls` timed calls
 * each.  Shuffled, it runs R rounds; in round r every variant runs its share, calls
 * [r calls / R, (r + 1) calls / R), and the variants take their turns in an order
 * drawn afresh each round from the seed, so drift on the machine (a neighbour's
 * job, a slowing clock, a filling cache) hits every variant alike, and no variant
 * always runs after another.  Given, it runs one round in the variants' own order:
 * every variant's calls in a row, the nested loops of before.  A variant's warm-up
 * calls come before its first share only.  Every rank draws the same orders from
 * the same seed, so no message is needed to agree on them. */
#ifndef JB_SCHEDULE_H
#define JB_SCHEDULE_H

#include <stdint.h>

#include "jb_json.h"
#include "jb_rng.h"

typedef struct {
    int variants;
    long calls, warmup;
    long rounds;     /* the rounds run: --rounds, at most calls; 1 when given */
    int shuffled;    /* 0: --order given */
    uint64_t seed;
    jb_rng rng;
    int *order;      /* this round's order of the variants */
    long round;      /* the round being run */
    int at;          /* the turn in it; -1 before the first */
    /* the share being run: variant `variant` runs calls first - warm .. end - 1,
     * of which the ones below 0 (warm-up) are not timed */
    int variant;
    long first, end, warm;
    int round_start;        /* the share is its round's first */
    unsigned char *settled; /* per variant: it reached its stopping rule, it takes no more turns */
    int settled_count;
} jb_schedule;

/* 0, or -1 when out of memory (errno set).  rounds >= 1, calls >= 1. */
int jb_schedule_init(jb_schedule *s, int variants, long calls, long warmup, long rounds, int shuffled,
                     uint64_t seed);
/* Moves to the next share of a variant not settled; 0 when every round is done, or every
 * variant settled. */
int jb_schedule_next(jb_schedule *s);
/* Variant v takes no more turns (a stopping rule was met after its share). */
void jb_schedule_settle(jb_schedule *s, int v);
/* The first timed call of round r of a run of `calls` calls in `rounds` rounds. */
long jb_schedule_share_start(long calls, long rounds, long r);
/* Records the method, the seed, the rounds and every round's order (drawn again
 * from the seed) in j, as the object "order". */
void jb_schedule_record(const jb_schedule *s, jb_json *j);
void jb_schedule_free(jb_schedule *s);

#endif
