/* Section 8's kernel: the halo exchange, either way, then one Jacobi sweep. */
#include "jacobi.h"

const char *const jacobi_halo_names[] = {"sendrecv", "waitall", NULL};

static int opposite(int d) { return d ^ 1; }

int jacobi_halo_floats(const jacobi *j, int d) { return (d < Y_DOWN ? j->ly : j->lx) + 2; }

/* The boundary line that leaves in direction d (row 1 or lx, column 1 or ly), and the
 * ghost line that what arrives travelling in direction d fills (the opposite side). */
static void pack(jacobi *j, int d)
{
    int i = d == X_DOWN ? 1 : j->lx, k = d == Y_DOWN ? 1 : j->ly;
    for (int n = 0; n < jacobi_halo_floats(j, d); n++)
        j->send[d][n] = d < Y_DOWN ? JACOBI_AT(j, j->u, i, n) : JACOBI_AT(j, j->u, n, k);
}

static void unpack(jacobi *j, int d) /* the owned part of the line; its corners stay */
{
    int i = d == X_DOWN ? j->lx + 1 : 0, k = d == Y_DOWN ? j->ly + 1 : 0;
    for (int n = 1; n < jacobi_halo_floats(j, d) - 1; n++) {
        if (d < Y_DOWN)
            JACOBI_AT(j, j->u, i, n) = j->recv[d][n];
        else
            JACOBI_AT(j, j->u, n, k) = j->recv[d][n];
    }
}

void jacobi_halo(jacobi *j, int method)
{
    for (int d = X_DOWN; d <= Y_UP; d++)
        pack(j, d);
    if (method == HALO_SENDRECV) { /* 4 x MPI_Sendrecv */
        for (int d = X_DOWN; d <= Y_UP; d++)
            MPI_Sendrecv(j->send[d], jacobi_halo_floats(j, d), MPI_FLOAT, j->nb[d], d, j->recv[d],
                         jacobi_halo_floats(j, d), MPI_FLOAT, j->nb[opposite(d)], d, j->comm, MPI_STATUS_IGNORE);
    } else { /* 4 x MPI_Irecv, 4 x MPI_Isend, MPI_Waitall(8) */
        MPI_Request req[8];
        for (int d = X_DOWN; d <= Y_UP; d++)
            MPI_Irecv(j->recv[d], jacobi_halo_floats(j, d), MPI_FLOAT, j->nb[opposite(d)], d, j->comm, &req[d]);
        for (int d = X_DOWN; d <= Y_UP; d++)
            MPI_Isend(j->send[d], jacobi_halo_floats(j, d), MPI_FLOAT, j->nb[d], d, j->comm, &req[4 + d]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    }
    for (int d = X_DOWN; d <= Y_UP; d++)
        unpack(j, d);
}

void jacobi_sweep(jacobi *j)
{
    for (int i = 1; i <= j->lx; i++)
        for (int k = 1; k <= j->ly; k++)
            JACOBI_AT(j, j->next, i, k) = 0.25f * (JACOBI_AT(j, j->u, i - 1, k) + JACOBI_AT(j, j->u, i + 1, k) +
                                                   JACOBI_AT(j, j->u, i, k - 1) + JACOBI_AT(j, j->u, i, k + 1) +
                                                   JACOBI_AT(j, j->f, i, k));
    float *t = j->u;
    j->u = j->next;
    j->next = t;
}
