/* The selfish-detour probe (Beckman, Iskra, Yoshii, Coghlan, "The Influence of
 * Operating Systems on the Performance of Collective Operations at Extreme
 * Scale", Cluster 2006): a task that does nothing but read the clock notices
 * every moment the core is taken from it, as a step between two reads far
 * longer than the loop's own. */
#include "detour.h"

#include <mpi.h>

void detour_probe(detour_trace *t, double duration_s, double threshold_s)
{
    double begin = MPI_Wtime(), last = begin, end = begin + duration_s;
    t->count = t->missed = 0;
    t->lost = 0;
    t->quickest = duration_s;
    while (last < end) {
        double now = MPI_Wtime(), step = now - last;
        if (step > threshold_s) {
            t->lost += step;
            if (t->count < t->max) {
                t->start[t->count] = last - begin;
                t->length[t->count++] = step;
            } else
                t->missed++;
        } else if (step > 0 && step < t->quickest)
            t->quickest = step;
        last = now;
    }
}
