/* GPCNeT's canaries and congestors (Chunduri et al., SC19), one call each. */
#ifndef CONGESTION_KERNELS_H
#define CONGESTION_KERNELS_H

#include <mpi.h>
#include <stddef.h>

/* The canaries: random-ring latency and bandwidth, and a small allreduce. */
enum { CANARY_LATENCY, CANARY_BANDWIDTH, CANARY_ALLREDUCE, NCANARIES };
extern const char *const canary_names[];

/* A random ring's exchange: with the left and right neighbours of this task in the ring, one
 * message of size bytes each way to each (2 MPI_Irecv, 2 MPI_Isend, one MPI_Waitall). */
void ring_exchange(MPI_Comm comm, int left, int right, char *send, char *recv, size_t size);
/* The neighbours of rank me in the ring perm[0..n-1] (a permutation of the ranks). */
void ring_neighbours(const long *perm, long n, int me, int *left, int *right);

/* The congestors, each an endless loop's one turn over its group's communicator. */
enum { CONGESTOR_ALLTOALL, CONGESTOR_INCAST, CONGESTOR_BCAST, NCONGESTORS };
extern const char *const congestor_names[];
/* alltoall: MPI_Alltoall of size bytes to every member.  incast: every member sends size bytes to
 * member 0, which receives them all.  bcast: member 0 sends size bytes to every member.  send and
 * recv hold members x size bytes. */
void congestor_turn(int kind, MPI_Comm group, char *send, char *recv, size_t size, MPI_Request *req);

#endif
