/* The eager-limit probe between two tasks. */
#ifndef EAGER_PROBE_H
#define EAGER_PROBE_H

#include <mpi.h>
#include <stddef.h>

typedef struct {
    MPI_Comm comm;     /* the pair: rank 0 sends, rank 1 receives */
    int me;            /* 0 or 1 */
    double delay_s;    /* how long the receiver waits before its receive */
    int repeats;       /* probes per size; the fastest decides */
    char *buf;
    size_t max_size;
} eager_pair;

/* Fastest time (s, on the sender; broadcast to both) of MPI_Send of size
 * bytes, over the repeats, to a receiver that posts its receive only after
 * delay_s. */
double eager_send_time(eager_pair *p, size_t size);
/* Largest size (bytes) that MPI_Send delivers eagerly: powers of two, then
 * bisection to 8 bytes.  log(size, seconds) is called for every size probed. */
size_t eager_limit(eager_pair *p, void (*log)(void *ctx, size_t size, double s), void *ctx);

#endif
