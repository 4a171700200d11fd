/* An eager send returns once the data is on its way; a rendezvous send waits
 * until the receiver has posted the matching receive.  So: the receiver
 * waits D before posting its receive and the sender times MPI_Send.  Eager
 * returns in microseconds, rendezvous after about D: three orders of
 * magnitude apart, so "returned in under D/2" separates them (D = 50 ms by
 * default: well above a scheduler time slice).  The fastest
 * of the repeats decides: noise (the sender losing its core) only adds time,
 * and no rendezvous send can return before the receiver posts its receive.
 *
 * While it waits, the receiver keeps its MPI progressing (MPI_Iprobe for a
 * tag nobody sends) without matching the message: many MPIs (Open MPI's
 * shared memory above 256 bytes, for one) free an eager sender only once
 * the receiving side has drained the fragment, which takes progress, not a
 * posted receive.  A receiver that made no MPI calls would make every
 * message look like rendezvous. */
#include "probe.h"

#include "jb_core.h"

#define UNUSED_TAG 99

double eager_send_time(eager_pair *p, size_t size)
{
    double t[64];
    int n = p->repeats < 64 ? p->repeats : 64;
    for (int r = 0; r < n; r++) {
        MPI_Barrier(p->comm);
        if (p->me == 0) {
            double t0 = MPI_Wtime();
            MPI_Send(p->buf, (int)size, MPI_BYTE, 1, 0, p->comm);
            t[r] = MPI_Wtime() - t0;
        } else {
            double end = MPI_Wtime() + p->delay_s;
            int flag;
            while (MPI_Wtime() < end)
                MPI_Iprobe(0, UNUSED_TAG, p->comm, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(p->buf, (int)size, MPI_BYTE, 0, 0, p->comm, MPI_STATUS_IGNORE);
        }
    }
    double fastest = 0;
    for (int r = 0; p->me == 0 && r < n; r++)
        fastest = r == 0 || t[r] < fastest ? t[r] : fastest;
    MPI_Bcast(&fastest, 1, MPI_DOUBLE, 0, p->comm);
    return fastest;
}

static int is_eager(eager_pair *p, size_t size, void (*log)(void *, size_t, double), void *ctx)
{
    double s = eager_send_time(p, size);
    if (log)
        log(ctx, size, s);
    return s < p->delay_s / 2;
}

size_t eager_limit(eager_pair *p, void (*log)(void *ctx, size_t size, double s), void *ctx)
{
    /* largest eager power of two, and the first one that is not */
    size_t eager = 0, rendezvous = 1;
    while (rendezvous <= p->max_size && is_eager(p, rendezvous, log, ctx)) {
        eager = rendezvous;
        rendezvous *= 2;
    }
    if (rendezvous > p->max_size)
        return eager; /* eager up to the largest size probed */
    /* bisect between them, to 8 bytes */
    while (rendezvous - eager > 8) {
        size_t mid = eager + (rendezvous - eager) / 2;
        if (is_eager(p, mid, log, ctx))
            eager = mid;
        else
            rendezvous = mid;
    }
    return eager;
}
