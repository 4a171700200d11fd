/* Multi-ping-pong: n messages there, n back, in one of four send modes. */
#include "cycle.h"

const char *const send_mode_names[] = {"send", "isend", "ssend", "issend", NULL};

/* message k's buffer: its own, or the one every message shares */
static char *buffer(char **bufs, const pingpong *p, int k) { return bufs[p->one_buffer ? 0 : k]; }

/* n sends: blocking one by one, or non-blocking and one MPI_Waitall */
static void send_all(pingpong *p, int mode)
{
    for (int k = 0; k < p->n; k++) {
        void *buf = buffer(p->send, p, k);
        int count = (int)p->size;
        switch (mode) {
        case MODE_SEND: MPI_Send(buf, count, MPI_BYTE, p->partner, k, p->comm); break;
        case MODE_SSEND: MPI_Ssend(buf, count, MPI_BYTE, p->partner, k, p->comm); break;
        case MODE_ISEND: MPI_Isend(buf, count, MPI_BYTE, p->partner, k, p->comm, &p->req[k]); break;
        case MODE_ISSEND: MPI_Issend(buf, count, MPI_BYTE, p->partner, k, p->comm, &p->req[k]); break;
        }
    }
    if (mode == MODE_ISEND || mode == MODE_ISSEND)
        MPI_Waitall(p->n, p->req, MPI_STATUSES_IGNORE);
}

/* n MPI_Irecv, then one MPI_Waitall; one message: a blocking MPI_Recv, as osu_latency receives
 * (the same semantics, and one request's MPI_Irecv + MPI_Waitall cost Open MPI 4.1 and Intel MPI
 * 15-30 ns more per one-way trip at 8 B: docs/fidelity.md) */
static void receive_all(pingpong *p)
{
    if (p->n == 1) {
        MPI_Recv(buffer(p->recv, p, 0), (int)p->size, MPI_BYTE, p->partner, 0, p->comm, MPI_STATUS_IGNORE);
        return;
    }
    for (int k = 0; k < p->n; k++)
        MPI_Irecv(buffer(p->recv, p, k), (int)p->size, MPI_BYTE, p->partner, k, p->comm, &p->req[k]);
    MPI_Waitall(p->n, p->req, MPI_STATUSES_IGNORE);
}

void pingpong_window(pingpong *p)
{
    char ack = 0;
    if (p->pinger) {
        send_all(p, MODE_ISEND);
        MPI_Recv(&ack, 1, MPI_BYTE, p->partner, p->n, p->comm, MPI_STATUS_IGNORE);
    } else {
        receive_all(p);
        MPI_Send(&ack, 1, MPI_BYTE, p->partner, p->n, p->comm);
    }
}

void pingpong_cycle(pingpong *p, int mode)
{
    if (p->pinger) {
        send_all(p, mode);
        receive_all(p);
    } else {
        receive_all(p);
        send_all(p, mode);
    }
}
