/* One pairwise-exchange all-to-all, as Figure 2: in each round, one
 * MPI_Sendrecv of the message with the round's partner.  With --inject a task
 * may wait first (spin or sleep), inside the exchange: the slow exchanges of the study. */
#include "exchange.h"

#include "schedule.h"

/* With t, the rounds are timed by their boundaries only: a round starts when the
 * previous one ended (or the call started) and the last ends with the call, whose
 * bounds the caller reads anyway.  So the timed region gains one clock read per
 * round but the last: none at all on 2 tasks. */
void alltoall_pairwise(alltoall_run *a, alltoall_times *t, double call_start)
{
    double boundary = call_start;
    for (int round = 0; round < a->rounds; round++) {
        int other = alltoall_partner(a->nprocs, round, a->me);
        if (t)
            t->start[round] = other < 0 ? -1 : boundary; /* -1: sitting out */
        if (other < 0)
            continue;
        if (t && t->handshake) { /* instrumentation: waits for the partner with a message of its own */
            MPI_Sendrecv(NULL, 0, MPI_BYTE, other, 1, NULL, 0, MPI_BYTE, other, 1, a->comm, MPI_STATUS_IGNORE);
            t->ready[round] = MPI_Wtime();
        }
        a->injected += jb_noise_maybe(a->noise);
        MPI_Sendrecv(a->send + (size_t)other * a->size, (int)a->size, MPI_BYTE, other, 0,
                     a->recv + (size_t)other * a->size, (int)a->size, MPI_BYTE, other, 0, a->comm, MPI_STATUS_IGNORE);
        if (t && round < a->rounds - 1)
            boundary = t->end[round] = MPI_Wtime();
    }
}

void alltoall_pairwise_end(alltoall_run *a, alltoall_times *t, double call_end)
{
    t->end[a->rounds - 1] = call_end;
}

void alltoall_collective(alltoall_run *a)
{
    MPI_Alltoall(a->send, (int)a->size, MPI_BYTE, a->recv, (int)a->size, MPI_BYTE, a->comm);
}

void alltoall_partner_starts(alltoall_run *a, const alltoall_times *t, double clock_offset, double *partner_start)
{
    for (int round = 0; round < a->rounds; round++) {
        int other = alltoall_partner(a->nprocs, round, a->me);
        if (other < 0)
            continue;
        double mine = t->start[round] + clock_offset, theirs;
        MPI_Sendrecv(&mine, 1, MPI_DOUBLE, other, 2, &theirs, 1, MPI_DOUBLE, other, 2, a->comm, MPI_STATUS_IGNORE);
        partner_start[round] = theirs - clock_offset;
    }
}
