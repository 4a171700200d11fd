/* The four exchange patterns, written as the study lists them.  A message
 * travelling in direction d carries tag d, so a task receives from its north
 * neighbour the message that travels south. */
#include "exchange.h"

const char *const halo_pattern_names[] = {"two-phase", "irecv-isend", "isend-recv", "sendrecv", NULL};
const char *const halo_pattern_letters[] = {"a", "b", "c", "d", NULL};

static const int opposite[NDIRS] = {SOUTH, NORTH, WEST, EAST};

static void isend(halo_exchange *h, int d, MPI_Request *r)
{
    MPI_Isend(h->send[d], (int)h->bytes[d], MPI_BYTE, h->nb[d], d, h->comm, r);
}

static void irecv(halo_exchange *h, int d, MPI_Request *r)
{
    MPI_Irecv(h->recv[d], (int)h->bytes[d], MPI_BYTE, h->nb[d], opposite[d], h->comm, r);
}

static void recv(halo_exchange *h, int d)
{
    MPI_Recv(h->recv[d], (int)h->bytes[d], MPI_BYTE, h->nb[d], opposite[d], h->comm, MPI_STATUS_IGNORE);
}

/* send towards d, receive from the opposite side what travels towards d */
static void sendrecv(halo_exchange *h, int d)
{
    int from = opposite[d];
    MPI_Sendrecv(h->send[d], (int)h->bytes[d], MPI_BYTE, h->nb[d], d,
                 h->recv[from], (int)h->bytes[from], MPI_BYTE, h->nb[from], d,
                 h->comm, MPI_STATUS_IGNORE);
}

/* (a) irecv N, irecv S, isend N, isend S, wait; then the same east/west */
static void two_phase(halo_exchange *h)
{
    MPI_Request r[4];
    irecv(h, NORTH, &r[0]); irecv(h, SOUTH, &r[1]); isend(h, NORTH, &r[2]); isend(h, SOUTH, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    irecv(h, EAST, &r[0]); irecv(h, WEST, &r[1]); isend(h, EAST, &r[2]); isend(h, WEST, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

/* (b) irecv x4, isend x4, wait */
static void irecv_isend(halo_exchange *h)
{
    MPI_Request r[8];
    for (int d = 0; d < NDIRS; d++)
        irecv(h, d, &r[d]);
    for (int d = 0; d < NDIRS; d++)
        isend(h, d, &r[NDIRS + d]);
    MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
}

/* (c) isend x4, blocking recv x4, wait on the sends */
static void isend_recv(halo_exchange *h)
{
    MPI_Request r[4];
    for (int d = 0; d < NDIRS; d++)
        isend(h, d, &r[d]);
    for (int d = 0; d < NDIRS; d++)
        recv(h, d);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

/* (d) four MPI_Sendrecv: the Jacobi baseline (Hein, Booth, Bull, section 8) */
static void four_sendrecv(halo_exchange *h)
{
    for (int d = 0; d < NDIRS; d++)
        sendrecv(h, d);
}

void halo_exchange_run(halo_exchange *h, int pattern)
{
    switch (pattern) {
    case PATTERN_TWO_PHASE: two_phase(h); break;
    case PATTERN_IRECV_ISEND: irecv_isend(h); break;
    case PATTERN_ISEND_RECV: isend_recv(h); break;
    case PATTERN_SENDRECV: four_sendrecv(h); break;
    }
}
