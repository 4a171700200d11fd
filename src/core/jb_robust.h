/* Robust statistics of values spread over the tasks of a communicator, each task holding
 * its own: a centre and a scale that a few outlying tasks do not move. */
#ifndef JB_ROBUST_H
#define JB_ROBUST_H

#include <mpi.h>
#include <stddef.h>

/* The centre of x (each task's x[0..n-1]): the median over tasks of each task's median, and
 * the scale: the median over tasks of each task's median absolute deviation from the centre,
 * x 1.4826 (the normal's sigma).  Collective over comm, the same on every task; rank 0 of comm
 * gathers two values a task into medians (comm's size of them; others pass NULL), never the
 * values.  work holds n values. */
void jb_robust_scale(MPI_Comm comm, const double *x, double *work, size_t n, double *medians, double *centre,
                     double *sigma);

#endif
