/* The selfish-detour probe of a core's noise. */
#ifndef NOISE_DETOUR_H
#define NOISE_DETOUR_H

typedef struct {
    double *start, *length; /* s, since the probe began; at most max of them */
    long max, count, missed; /* missed: detours past max (counted, not kept) */
    double lost;             /* s, every detour's length summed, kept or not */
    double quickest;         /* s, the shortest step between two clock reads */
} detour_trace;

/* Spins reading the clock for duration_s; every step between two reads longer
 * than threshold_s is a detour: the core was busy with something else. */
void detour_probe(detour_trace *t, double duration_s, double threshold_s);

#endif
