/* The halo exchange patterns of the Switch Jitter study. */
#ifndef HALO_EXCHANGE_H
#define HALO_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>

#include "decomp.h"

enum { PATTERN_TWO_PHASE, PATTERN_IRECV_ISEND, PATTERN_ISEND_RECV, PATTERN_SENDRECV, NPATTERNS };
extern const char *const halo_pattern_names[];   /* NULL-terminated */
extern const char *const halo_pattern_letters[]; /* "a".."d", as the issue and study number them */

typedef struct {
    MPI_Comm comm;          /* ranks in grid order: rank == grid index */
    int nb[NDIRS];          /* neighbour ranks, MPI_PROC_NULL beyond an edge */
    size_t bytes[NDIRS];    /* message size towards each neighbour */
    char *send[NDIRS], *recv[NDIRS];
} halo_exchange;

/* One exchange with every neighbour, in the given pattern. */
void halo_exchange_run(halo_exchange *h, int pattern);

#endif
