/* The canaries and congestors of GPCNeT (Chunduri et al., "GPCNeT: Designing a Benchmark Suite
 * for Inducing and Measuring Contention in HPC Networks", SC19), as its network_load_test runs
 * them: two-sided point-to-point and collectives, no RMA. */
#include "kernels.h"

const char *const canary_names[] = {"latency", "bandwidth", "allreduce", NULL};
const char *const congestor_names[] = {"alltoall", "incast", "bcast", NULL};

void ring_neighbours(const long *perm, long n, int me, int *left, int *right)
{
    for (long i = 0; i < n; i++)
        if (perm[i] == me) {
            *left = (int)perm[(i + n - 1) % n];
            *right = (int)perm[(i + 1) % n];
            return;
        }
}

void ring_exchange(MPI_Comm comm, int left, int right, char *send, char *recv, size_t size)
{
    MPI_Request req[4];
    MPI_Irecv(recv, (int)size, MPI_BYTE, left, 0, comm, &req[0]);
    MPI_Irecv(recv + size, (int)size, MPI_BYTE, right, 1, comm, &req[1]);
    MPI_Isend(send, (int)size, MPI_BYTE, right, 0, comm, &req[2]);
    MPI_Isend(send + size, (int)size, MPI_BYTE, left, 1, comm, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

void congestor_turn(int kind, MPI_Comm group, char *send, char *recv, size_t size, MPI_Request *req)
{
    int me, members;
    MPI_Comm_rank(group, &me);
    MPI_Comm_size(group, &members);
    switch (kind) {
    case CONGESTOR_ALLTOALL:
        MPI_Alltoall(send, (int)size, MPI_BYTE, recv, (int)size, MPI_BYTE, group);
        break;
    case CONGESTOR_INCAST: /* everyone at member 0 */
        if (me == 0) {
            for (int m = 1; m < members; m++)
                MPI_Irecv(recv + (size_t)m * size, (int)size, MPI_BYTE, m, 2, group, &req[m]);
            MPI_Waitall(members - 1, req + 1, MPI_STATUSES_IGNORE);
        } else {
            MPI_Send(send, (int)size, MPI_BYTE, 0, 2, group);
        }
        break;
    case CONGESTOR_BCAST: /* member 0 to everyone, point to point */
        if (me == 0) {
            for (int m = 1; m < members; m++)
                MPI_Isend(send + (size_t)m * size, (int)size, MPI_BYTE, m, 3, group, &req[m]);
            MPI_Waitall(members - 1, req + 1, MPI_STATUSES_IGNORE);
        } else {
            MPI_Recv(recv, (int)size, MPI_BYTE, 0, 3, group, MPI_STATUS_IGNORE);
        }
        break;
    }
}
