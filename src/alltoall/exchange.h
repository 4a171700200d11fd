/* The all-to-all exchanges: pairwise (Figure 2) and MPI_Alltoall. */
#ifndef ALLTOALL_EXCHANGE_H
#define ALLTOALL_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>

typedef struct {
    MPI_Comm comm;
    int nprocs, me, rounds;
    size_t size;             /* bytes to each other task */
    char *send, *recv;       /* nprocs blocks of size bytes */
} alltoall_run;

/* Per round: the data exchange's time and the idle time before it, in us
 * (-1 in a round this task sits out). */
void alltoall_pairwise(alltoall_run *a, double *exchange_us, double *idle_us);
void alltoall_collective(alltoall_run *a);

#endif
