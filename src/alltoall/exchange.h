/* The all-to-all exchanges: pairwise (Figure 2) and MPI_Alltoall. */
#ifndef ALLTOALL_EXCHANGE_H
#define ALLTOALL_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>

#include "jb_core.h"

typedef struct {
    MPI_Comm comm;
    int nprocs, me, rounds;
    size_t size;             /* bytes to each other task */
    char *send, *recv;       /* nprocs blocks of size bytes */
    jb_noise *noise;         /* --inject: before each exchange, inside it */
    long injected;           /* exchanges this task delayed */
} alltoall_run;

/* What the pairwise all-to-all records of each round (NULL: nothing).  start and
 * end are the round's bounds on MPI_Wtime(), start < 0 in a round this task sits
 * out.  With handshake, a zero-byte MPI_Sendrecv with the partner comes first,
 * inside the timed region, and ready is its end. */
typedef struct {
    int handshake;
    double *start, *ready, *end;
} alltoall_times;

/* call_start: the call's own start (MPI_Wtime); with t, the caller closes the
 * call with alltoall_pairwise_end. */
void alltoall_pairwise(alltoall_run *a, alltoall_times *t, double call_start);
void alltoall_pairwise_end(alltoall_run *a, alltoall_times *t, double call_end);
void alltoall_collective(alltoall_run *a);
/* After a timestamped call, outside its timed region: each round's partner's
 * start, from its synchronised clock (clock_offset: this task's) to this one's. */
void alltoall_partner_starts(alltoall_run *a, const alltoall_times *t, double clock_offset, double *partner_start);

#endif
