/* The five ring patterns of section 6, and their torus generalisations of
 * section 7: patterns 1 and 2 finish one dimension (and one direction) at a
 * time; patterns 3 to 5 post every receive, then every send, then wait once.
 * A message travelling in direction d carries tag d. */
#include "exchange.h"

const char *const torus_pattern_names[] = {"phases", "sendrecv", "isend", "issend", "ibsend", NULL};

static int left(int k) { return 2 * k; }
static int right(int k) { return 2 * k + 1; }
static int opposite(int d) { return d ^ 1; }

/* receive what travels in direction d: it comes from the neighbour behind */
static void irecv(torus_exchange *t, int d, MPI_Request *r)
{
    int from = opposite(d);
    MPI_Irecv(t->recv[from], (int)t->size, MPI_BYTE, t->nb[from], d, t->comm, r);
}

static void post_send(torus_exchange *t, int pattern, int d, MPI_Request *r)
{
    void *buf = t->send[d];
    int count = (int)t->size;
    switch (pattern) {
    case PATTERN_ISSEND: MPI_Issend(buf, count, MPI_BYTE, t->nb[d], d, t->comm, r); break;
    case PATTERN_IBSEND: MPI_Ibsend(buf, count, MPI_BYTE, t->nb[d], d, t->comm, r); break;
    default: MPI_Isend(buf, count, MPI_BYTE, t->nb[d], d, t->comm, r); break;
    }
}

static void work_then_wait(torus_exchange *t, int count, int last)
{
    if (last && t->work && t->work_before_wait)
        t->work(t->work_ctx);
    MPI_Waitall(count, t->req, MPI_STATUSES_IGNORE);
}

/* Pattern 1: Irecv from right, Isend to left, Waitall; then Irecv from left,
 * Isend to right, Waitall; one dimension after the other. */
static void phases(torus_exchange *t)
{
    for (int k = 0; k < t->ndims; k++) {
        irecv(t, left(k), &t->req[0]);
        post_send(t, PATTERN_ISEND, left(k), &t->req[1]);
        work_then_wait(t, 2, 0);
        irecv(t, right(k), &t->req[0]);
        post_send(t, PATTERN_ISEND, right(k), &t->req[1]);
        work_then_wait(t, 2, k == t->ndims - 1);
    }
}

/* Pattern 2: MPI_Sendrecv to the left from the right, then to the right from the left. */
static void sendrecv(torus_exchange *t)
{
    for (int k = 0; k < t->ndims; k++)
        for (int d = left(k); d <= right(k); d++)
            MPI_Sendrecv(t->send[d], (int)t->size, MPI_BYTE, t->nb[d], d, t->recv[opposite(d)], (int)t->size,
                         MPI_BYTE, t->nb[opposite(d)], d, t->comm, MPI_STATUS_IGNORE);
}

/* Patterns 3, 4, 5: every Irecv, then every Isend / Issend / Ibsend, then one Waitall. */
static void all_at_once(torus_exchange *t, int pattern)
{
    int n = 2 * t->ndims;
    for (int d = 0; d < n; d++)
        irecv(t, d, &t->req[d]);
    for (int d = 0; d < n; d++)
        post_send(t, pattern, d, &t->req[n + d]);
    work_then_wait(t, 2 * n, 1);
}

void torus_exchange_run(torus_exchange *t, int pattern)
{
    if (pattern == PATTERN_PHASES)
        phases(t);
    else if (pattern == PATTERN_SENDRECV)
        sendrecv(t);
    else
        all_at_once(t, pattern);
    if (t->work && !t->work_before_wait)
        t->work(t->work_ctx);
}
