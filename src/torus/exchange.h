/* Sending around a ring and a torus (Hein, Booth, Bull, sections 6, 7, 9). */
#ifndef TORUS_EXCHANGE_H
#define TORUS_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>

#define TORUS_MAXDIMS 8

enum { PATTERN_PHASES, PATTERN_SENDRECV, PATTERN_ISEND, PATTERN_ISSEND, PATTERN_IBSEND, NPATTERNS };
extern const char *const torus_pattern_names[]; /* NULL-terminated */

/* Direction 2k travels down dimension k ("left"), 2k + 1 up it ("right"). */
typedef struct {
    MPI_Comm comm;
    int ndims;
    int nb[2 * TORUS_MAXDIMS];    /* the neighbour each direction leads to */
    size_t size;
    char *send[2 * TORUS_MAXDIMS], *recv[2 * TORUS_MAXDIMS];
    MPI_Request req[4 * TORUS_MAXDIMS];
    void (*work)(void *ctx);      /* independent work, or NULL */
    void *work_ctx;
    int work_before_wait;         /* 1: before the final MPI_Waitall (overlapped) */
} torus_exchange;

/* One exchange with both neighbours in every dimension. */
void torus_exchange_run(torus_exchange *t, int pattern);

#endif
