/* The Jacobi inverter of section 8 of Hein, Booth and Bull, "Exchanging
 * multiple messages via MPI": a lattice Laplacian in two dimensions, split
 * over a periodic px x py grid of tasks, its halos exchanged by 4 x
 * MPI_Sendrecv or by 4 x MPI_Irecv, 4 x MPI_Isend and one MPI_Waitall(8). */
#ifndef JACOBI_H
#define JACOBI_H

#include <mpi.h>
#include <stddef.h>

enum { HALO_SENDRECV, HALO_WAITALL, NHALOS };
extern const char *const jacobi_halo_names[]; /* NULL-terminated */

/* Directions a halo travels in; tag d on the wire. */
enum { X_DOWN, X_UP, Y_DOWN, Y_UP };

/* A task's part: lx x ly points, stored with a ghost layer as (lx + 2) rows of
 * ly + 2 floats.  The halo to an x neighbour is a boundary row, ly + 2 floats;
 * to a y neighbour a boundary column, lx + 2 floats: both with the two corner
 * points, as the study's 1016 and 848 bytes (252 + 2 and 210 + 2 floats) are.
 * Each goes through a buffer of its own, so no receive writes what a send reads. */
typedef struct {
    MPI_Comm comm;             /* the periodic 2-D Cartesian grid */
    int lx, ly;
    int x0, y0;                /* global coordinates of the first owned point */
    int nb[4];                 /* the neighbour each direction leads to */
    float *send[4], *recv[4];  /* halo buffers, max(lx, ly) + 2 floats each */
    float *u, *next, *f;       /* the field, the next iterate, the source */
} jacobi;

#define JACOBI_AT(j, a, i, k) ((a)[(size_t)(i) * ((size_t)(j)->ly + 2) + (size_t)(k)])

/* Floats in the halo that travels in direction d. */
int jacobi_halo_floats(const jacobi *j, int d);
/* Fills the ghost layer of u from the four neighbours. */
void jacobi_halo(jacobi *j, int method);
/* One sweep: next = (the four neighbours of u + f) / 4 at every owned point; then u and next swap. */
void jacobi_sweep(jacobi *j);

#endif
