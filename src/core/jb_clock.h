/* The synchronised clock: every rank's MPI_Wtime offset to rank 0's, and how
 * a timed call starts on it (clock.c says how the offsets are measured). */
#ifndef JB_CLOCK_H
#define JB_CLOCK_H

#include <mpi.h>

/* How a timed call starts: after a barrier, or when its window opens on the
 * synchronised clock (jb_call_start). */
enum { JB_SYNC_BARRIER, JB_SYNC_WINDOW };
extern const char *const jb_sync_names[];

/* This rank's MPI_Wtime against rank 0's (jb_sync_clocks). */
typedef struct {
    double offset;       /* rank 0's clock minus this one's, s */
    double error_bound;  /* the largest error of any rank's offset, s */
} jb_clock;

/* Measures every rank's clock offset to comm's rank 0's into k (collective over comm: the
 * job's ctx->world). */
void jb_sync_clocks(jb_clock *k, MPI_Comm comm);
/* Now on rank 0's clock, s. */
double jb_global_time(const jb_clock *k);

#endif
