/* The halo benchmark's 2-D decomposition and task placement, as pure
 * functions of the layout so that neighbour maps and off-node counts can be
 * checked exactly without MPI.
 *
 * Grid: px tasks east-west by py north-south; grid index g = y * px + x.
 * North is y - 1, south y + 1, east x + 1, west x - 1.
 * Placement maps (node, rank on node) to g:
 *   row:     g = node * k + local (row-major: a node holds a 1 x k strip of a
 *            row when k <= px, or k / px whole rows);
 *   bunched: a node holds a bx x by block (bx east-west, by north-south). */
#ifndef HALO_DECOMP_H
#define HALO_DECOMP_H

#include <stddef.h>

enum { NORTH, SOUTH, EAST, WEST, NDIRS };
enum { PLACE_ROW, PLACE_BUNCHED };

typedef struct {
    int px, py;      /* tasks east-west, north-south */
    int periodic;
    int self_messages; /* a wrap-around onto the task itself sends to itself (else no message) */
    int tpn;         /* tasks per node */
    int placement;   /* PLACE_ROW or PLACE_BUNCHED */
    int bx, by;      /* bunched block; 0 = choose the squarest that tiles */
} halo_layout;

/* The largest divisor of n that is at most want (the study's 16 when it divides). */
int halo_default_px(int n, int want);
/* Completes and checks the layout for ntasks tasks: py from px, the default
 * block; returns -1 with one line in err if it does not decompose. */
int halo_layout_setup(halo_layout *L, int ntasks, char *err);
int halo_grid_index(const halo_layout *L, int node, int local);
int halo_node_of(const halo_layout *L, int g);
/* Grid indices of the four neighbours, -1 beyond a non-periodic edge, and -1 where a
 * periodic dimension of extent 1 wraps onto the task itself (unless self_messages). */
void halo_neighbours(const halo_layout *L, int g, int nb[NDIRS]);
/* Messages one call sends, summed over the tasks, and the most one task sends. */
long halo_messages_per_call(const halo_layout *L, int *most_per_task);
/* Off-node send/recvs per call: the max and mean per node. */
void halo_off_node_per_node(const halo_layout *L, int *max_per_node, double *mean_per_node);
/* The most bytes one node's tasks send to other nodes in one call (O(tasks), no allocation). */
double halo_off_node_bytes_per_node(const halo_layout *L, size_t ns_bytes, size_t ew_bytes);

#endif
