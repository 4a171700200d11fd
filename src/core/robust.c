/* Robust statistics over the tasks of a communicator: medians of each task's medians. */
#include "jb_robust.h"

#include <math.h>
#include <string.h>

#include "jb_stats.h"

void jb_robust_scale(MPI_Comm comm, const double *x, double *work, size_t n, double *medians, double *centre,
                     double *sigma)
{
    int size, me;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    memcpy(work, x, n * sizeof *work);
    double mine = jb_median(work, n);
    MPI_Gather(&mine, 1, MPI_DOUBLE, medians, 1, MPI_DOUBLE, 0, comm);
    if (me == 0)
        *centre = jb_median(medians, (size_t)size);
    MPI_Bcast(centre, 1, MPI_DOUBLE, 0, comm);
    for (size_t i = 0; i < n; i++)
        work[i] = fabs(x[i] - *centre);
    mine = jb_median(work, n);
    MPI_Gather(&mine, 1, MPI_DOUBLE, medians, 1, MPI_DOUBLE, 0, comm);
    if (me == 0)
        *sigma = 1.4826 * jb_median(medians, (size_t)size);
    MPI_Bcast(sigma, 1, MPI_DOUBLE, 0, comm);
}
