/* One pairwise-exchange all-to-all, as Figure 2: in each round, one
 * MPI_Sendrecv of the message with the round's partner.  Before it a
 * zero-byte MPI_Sendrecv with the same partner: the time spent there is
 * the idle time, waiting for a partner still busy with a previous exchange;
 * the data exchange that follows is timed on its own. */
#include "exchange.h"

#include "schedule.h"

void alltoall_pairwise(alltoall_run *a, double *exchange_us, double *idle_us)
{
    for (int round = 0; round < a->rounds; round++) {
        int other = alltoall_partner(a->nprocs, round, a->me);
        exchange_us[round] = idle_us[round] = -1; /* sitting out */
        if (other < 0)
            continue;
        double t0 = MPI_Wtime();
        MPI_Sendrecv(NULL, 0, MPI_BYTE, other, 1, NULL, 0, MPI_BYTE, other, 1, a->comm, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        MPI_Sendrecv(a->send + (size_t)other * a->size, (int)a->size, MPI_BYTE, other, 0,
                     a->recv + (size_t)other * a->size, (int)a->size, MPI_BYTE, other, 0, a->comm, MPI_STATUS_IGNORE);
        exchange_us[round] = (MPI_Wtime() - t1) * 1e6;
        idle_us[round] = (t1 - t0) * 1e6;
    }
}

void alltoall_collective(alltoall_run *a)
{
    MPI_Alltoall(a->send, (int)a->size, MPI_BYTE, a->recv, (int)a->size, MPI_BYTE, a->comm);
}
