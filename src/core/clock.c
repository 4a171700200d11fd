/* Synchronised clocks and the start of each timed call.
 *
 * Each rank learns the offset of its MPI_Wtime to rank 0's, so times taken on
 * different ranks compare: the skew with which tasks leave the barrier that
 * starts a call (it bounds what a per-call MAX of a few microseconds can mean),
 * and window-based starts, where every task starts call c when the shared clock
 * reaches the call's window instead of at a barrier (ReproMPI's method, Hunold and
 * Carpen-Amarie, "On the Impact of Synchronizing Clocks and Processes on
 * Benchmarking MPI Collectives", EuroMPI 2015).
 *
 * The offsets, without a drift model, as the offset-only variant of their
 * hierarchical algorithm (HCA) does: over a binomial tree, ceil(log2 P) rounds; in
 * round k every rank r that is a multiple of 2^(k+1), its own offset known,
 * measures that of rank r + 2^k by SKaMPI's method: a few ping-pongs, keeping the
 * estimate of the one with the shortest round trip, whose half bounds its error.
 * Errors add up along the tree; each rank keeps its bound.  Drift is handled by
 * synchronising again at the start of every result (jb_calls_begin), which takes
 * log2 P round trips per sample. */
#include "jb_clock.h"

#include <math.h>
#include <stddef.h>

enum { SYNC_SAMPLES = 20, TAG_SYNC = 7301 };

const char *const jb_sync_names[] = {"barrier", "window", NULL};

/* Child's half: returns its offset (parent's global clock minus its own) and the
 * error bound, from the ping-pong with the shortest round trip. */
static void measure_offset(int parent, MPI_Comm comm, double *offset, double *bound)
{
    double best = INFINITY;
    for (int i = 0; i < SYNC_SAMPLES; i++) {
        double remote, t1 = MPI_Wtime();
        MPI_Send(&t1, 1, MPI_DOUBLE, parent, TAG_SYNC, comm);
        MPI_Recv(&remote, 1, MPI_DOUBLE, parent, TAG_SYNC, comm, MPI_STATUS_IGNORE);
        double t2 = MPI_Wtime();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *offset = remote - (t1 + t2) / 2;
        }
    }
    *bound = best / 2;
}

/* Parent's half: answers each ping with its time on the global clock. */
static void answer_offset(int child, MPI_Comm comm, double offset)
{
    for (int i = 0; i < SYNC_SAMPLES; i++) {
        double ping, now;
        MPI_Recv(&ping, 1, MPI_DOUBLE, child, TAG_SYNC, comm, MPI_STATUS_IGNORE);
        now = MPI_Wtime() + offset;
        MPI_Send(&now, 1, MPI_DOUBLE, child, TAG_SYNC, comm);
    }
}

void jb_sync_clocks(jb_clock *k, MPI_Comm comm)
{
    int rank, size, top = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    while (top < size)
        top *= 2;
    double bound = 0, offset = 0;
    /* top-down: a parent's offset is known before it serves a child */
    for (int stride = top / 2; stride >= 1; stride /= 2) {
        if (rank % (2 * stride) == 0 && rank + stride < size) {
            answer_offset(rank + stride, comm, offset);
            MPI_Send(&bound, 1, MPI_DOUBLE, rank + stride, TAG_SYNC + 1, comm);
        } else if (rank % (2 * stride) == stride) {
            double parent_bound;
            measure_offset(rank - stride, comm, &offset, &bound);
            MPI_Recv(&parent_bound, 1, MPI_DOUBLE, rank - stride, TAG_SYNC + 1, comm, MPI_STATUS_IGNORE);
            bound += parent_bound;
        }
    }
    k->offset = offset;
    MPI_Allreduce(&bound, &k->error_bound, 1, MPI_DOUBLE, MPI_MAX, comm);
}

double jb_global_time(const jb_clock *k) { return MPI_Wtime() + k->offset; }
