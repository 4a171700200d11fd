/* 2-D decomposition, placement and neighbours of the halo benchmark. */
#include "decomp.h"

#include <stdio.h>
#include <stdlib.h>

#define ERRLEN 256 /* JB_ERRLEN */

int halo_default_px(int n, int want)
{
    for (int d = want < n ? want : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

static int block_tiles(const halo_layout *L, int bx, int by)
{
    return bx * by == L->tpn && L->px % bx == 0 && L->py % by == 0;
}

int halo_layout_setup(halo_layout *L, int ntasks, char *err)
{
    if (L->px < 1 || ntasks % L->px != 0) {
        snprintf(err, ERRLEN, "%d tasks do not decompose into %d east-west (px must divide the task count)",
                 ntasks, L->px);
        return -1;
    }
    L->py = ntasks / L->px;
    if (L->tpn < 1 || ntasks % L->tpn != 0) {
        snprintf(err, ERRLEN, "%d tasks do not fill nodes of %d tasks", ntasks, L->tpn);
        return -1;
    }
    if (L->placement != PLACE_BUNCHED)
        return 0;
    if (L->bx || L->by) {
        if (!block_tiles(L, L->bx, L->by)) {
            snprintf(err, ERRLEN, "a %dx%d block does not hold %d tasks per node or does not tile the %dx%d grid",
                     L->bx, L->by, L->tpn, L->px, L->py);
            return -1;
        }
        return 0;
    }
    /* The squarest block that tiles; on a tie the wider one (east-west).
     * One always exists: gcd(tpn, px) east-west by the rest north-south. */
    int best = -1;
    for (int bx = L->tpn; bx >= 1; bx--) {
        int by = L->tpn / bx;
        if (L->tpn % bx || !block_tiles(L, bx, by))
            continue;
        if (best < 0 || abs(bx - by) < abs(L->bx - L->by)) {
            L->bx = bx;
            L->by = by;
            best = 1;
        }
    }
    if (best < 0) {
        snprintf(err, ERRLEN, "no block of %d tasks tiles the %dx%d grid", L->tpn, L->px, L->py);
        return -1;
    }
    return 0;
}

int halo_grid_index(const halo_layout *L, int node, int local)
{
    if (L->placement == PLACE_ROW)
        return node * L->tpn + local;
    int blocks_x = L->px / L->bx;
    int x = (node % blocks_x) * L->bx + local % L->bx;
    int y = (node / blocks_x) * L->by + local / L->bx;
    return y * L->px + x;
}

int halo_node_of(const halo_layout *L, int g)
{
    if (L->placement == PLACE_ROW)
        return g / L->tpn;
    int x = g % L->px, y = g / L->px;
    return (y / L->by) * (L->px / L->bx) + x / L->bx;
}

static int step(int v, int delta, int n, int periodic)
{
    v += delta;
    if (v >= 0 && v < n)
        return v;
    return periodic ? (v + n) % n : -1;
}

void halo_neighbours(const halo_layout *L, int g, int nb[NDIRS])
{
    int x = g % L->px, y = g / L->px;
    int yn = step(y, -1, L->py, L->periodic), ys = step(y, +1, L->py, L->periodic);
    int xe = step(x, +1, L->px, L->periodic), xw = step(x, -1, L->px, L->periodic);
    nb[NORTH] = yn < 0 ? -1 : yn * L->px + x;
    nb[SOUTH] = ys < 0 ? -1 : ys * L->px + x;
    nb[EAST] = xe < 0 ? -1 : y * L->px + xe;
    nb[WEST] = xw < 0 ? -1 : y * L->px + xw;
    /* IMB Exchange and a real code send no halo to themselves: an extent of 1 has no neighbour */
    for (int d = 0; d < NDIRS; d++)
        if (nb[d] == g && !L->self_messages)
            nb[d] = -1;
}

long halo_messages_per_call(const halo_layout *L, int *most_per_task)
{
    long total = 0;
    *most_per_task = 0;
    for (int g = 0; g < L->px * L->py; g++) {
        int nb[NDIRS], mine = 0;
        halo_neighbours(L, g, nb);
        for (int d = 0; d < NDIRS; d++)
            mine += nb[d] >= 0;
        total += mine;
        *most_per_task = mine > *most_per_task ? mine : *most_per_task;
    }
    return total;
}

/* Off-node sends per call of node n's tasks: north/south ones in *ns, east/west ones in *ew. */
static void off_node_sends_of_node(const halo_layout *L, int n, long *ns, long *ew)
{
    *ns = *ew = 0;
    for (int l = 0; l < L->tpn; l++) {
        int nb[NDIRS];
        halo_neighbours(L, halo_grid_index(L, n, l), nb);
        for (int d = 0; d < NDIRS; d++)
            if (nb[d] >= 0 && halo_node_of(L, nb[d]) != n)
                *(d == NORTH || d == SOUTH ? ns : ew) += 1;
    }
}

void halo_off_node_per_node(const halo_layout *L, int *max_per_node, double *mean_per_node)
{
    int nnodes = L->px * L->py / L->tpn;
    long total = 0;
    *max_per_node = 0;
    for (int n = 0; n < nnodes; n++) {
        long ns, ew;
        off_node_sends_of_node(L, n, &ns, &ew);
        total += ns + ew;
        if (ns + ew > *max_per_node)
            *max_per_node = (int)(ns + ew);
    }
    *mean_per_node = (double)total / nnodes;
}

double halo_off_node_bytes_per_node(const halo_layout *L, size_t ns_bytes, size_t ew_bytes)
{
    int nnodes = L->px * L->py / L->tpn;
    double most = 0;
    for (int n = 0; n < nnodes; n++) {
        long ns, ew;
        off_node_sends_of_node(L, n, &ns, &ew);
        double bytes = (double)ns * (double)ns_bytes + (double)ew * (double)ew_bytes;
        if (bytes > most)
            most = bytes;
    }
    return most;
}
