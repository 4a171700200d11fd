/* Exact tests of the halo decomposition, placement and off-node counts. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decomp.h"
#include "jb_parse.h"

static halo_layout layout(int ntasks, int px, int tpn, int placement, int periodic)
{
    char err[JB_ERRLEN];
    halo_layout L = {.px = px, .tpn = tpn, .placement = placement, .periodic = periodic};
    CHECK(halo_layout_setup(&L, ntasks, err) == 0);
    return L;
}

static int off_node(const halo_layout *L)
{
    int max;
    double mean;
    halo_off_node_per_node(L, &max, &mean);
    return max;
}

/* Placement is a bijection onto the grid, node_of inverts it, and the
 * neighbour relation is symmetric. */
static void check_consistent(const halo_layout *L)
{
    int n = L->px * L->py;
    char *seen = calloc((size_t)n, 1);
    int ok = 1;
    for (int node = 0; node < n / L->tpn; node++)
        for (int local = 0; local < L->tpn; local++) {
            int g = halo_grid_index(L, node, local);
            ok &= g >= 0 && g < n && !seen[g] && halo_node_of(L, g) == node;
            if (g >= 0 && g < n)
                seen[g] = 1;
        }
    static const int opposite[NDIRS] = {SOUTH, NORTH, WEST, EAST};
    for (int g = 0; g < n; g++) {
        int nb[NDIRS], back[NDIRS];
        halo_neighbours(L, g, nb);
        for (int d = 0; d < NDIRS; d++) {
            if (nb[d] < 0)
                continue;
            halo_neighbours(L, nb[d], back);
            ok &= back[opposite[d]] == g;
        }
    }
    CHECK(ok);
    free(seen);
}

int main(void)
{
    char err[JB_ERRLEN];

    CHECK(halo_default_px(64, 16) == 16);
    CHECK(halo_default_px(24, 16) == 12);
    CHECK(halo_default_px(13, 16) == 13);
    CHECK(halo_default_px(17, 16) == 1);
    CHECK(halo_default_px(4, 16) == 4);

    /* The study: 16 tasks per node, 16 east-west.  Row placement puts a whole
     * row on a node: 16 tasks x north and south = 32 off-node send/recvs. */
    halo_layout row = layout(128, 16, 16, PLACE_ROW, 1);
    CHECK(off_node(&row) == 32);
    check_consistent(&row);
    /* Bunched 4x4 blocks: the block's perimeter, 16, once the grid is taller
     * than a block (here 16x8). */
    halo_layout bunched = layout(128, 16, 16, PLACE_BUNCHED, 1);
    CHECK(bunched.bx == 4 && bunched.by == 4);
    CHECK(off_node(&bunched) == 16);
    check_consistent(&bunched);
    /* 64 tasks are a 16x4 grid: a 4x4 block spans all four rows, so with
     * wrap-around its north and south halos stay on the node: 4 + 4 = 8. */
    halo_layout b64 = layout(64, 16, 16, PLACE_BUNCHED, 1);
    CHECK(off_node(&b64) == 8);
    halo_layout r64 = layout(64, 16, 16, PLACE_ROW, 1);
    CHECK(off_node(&r64) == 32);
    /* Non-periodic: the edge rows of the 16x4 grid have one off-node side. */
    halo_layout r64np = layout(64, 16, 16, PLACE_ROW, 0);
    int max;
    double mean;
    halo_off_node_per_node(&r64np, &max, &mean);
    CHECK(max == 32 && mean == 24.0); /* (16 + 32 + 32 + 16) / 4 */
    /* bytes: a row node sends only north and south off-node (its east/west wrap stays on it) */
    CHECK(halo_off_node_bytes_per_node(&r64, 4096, 1000) == 32 * 4096.0);
    CHECK(halo_off_node_bytes_per_node(&r64np, 4096, 1000) == 32 * 4096.0);
    /* a 4x4 block of the 16x4 grid: 4 off-node sends east-west each way, none north-south */
    CHECK(halo_off_node_bytes_per_node(&b64, 4096, 1000) == 8 * 1000.0);
    int nb[NDIRS];
    halo_neighbours(&r64np, 0, nb);
    CHECK(nb[NORTH] == -1 && nb[WEST] == -1 && nb[SOUTH] == 16 && nb[EAST] == 1);
    halo_neighbours(&r64, 0, nb);
    CHECK(nb[NORTH] == 48 && nb[WEST] == 15 && nb[SOUTH] == 16 && nb[EAST] == 1);

    /* P6 "c1a": 32 tasks per node; row placement holds two rows. */
    halo_layout p6 = layout(512, 16, 32, PLACE_ROW, 1);
    CHECK(off_node(&p6) == 32);
    halo_layout p6b = layout(512, 16, 32, PLACE_BUNCHED, 1);
    CHECK(p6b.bx == 8 && p6b.by == 4 && off_node(&p6b) == 24);
    check_consistent(&p6b);

    /* A strip shorter than a row: 4 tasks per node, 1x4 strips of a 16-wide row. */
    halo_layout strip = layout(64, 16, 4, PLACE_ROW, 1);
    CHECK(off_node(&strip) == 4 * 2 + 2);
    halo_layout block = layout(64, 16, 4, PLACE_BUNCHED, 1);
    CHECK(block.bx == 2 && block.by == 2 && off_node(&block) == 8);
    check_consistent(&block);

    /* An explicit block, and blocks that do not fit. */
    halo_layout wide = {.px = 16, .tpn = 16, .placement = PLACE_BUNCHED, .periodic = 1, .bx = 8, .by = 2};
    CHECK(halo_layout_setup(&wide, 128, err) == 0 && off_node(&wide) == 2 * 8 + 2 * 2);
    check_consistent(&wide);
    halo_layout bad = {.px = 16, .tpn = 16, .placement = PLACE_BUNCHED, .bx = 3, .by = 5};
    CHECK(halo_layout_setup(&bad, 128, err) == -1 && strstr(err, "3x5"));
    /* A default block always exists: gcd(tpn, px) east-west tiles. */
    halo_layout odd = layout(36, 9, 6, PLACE_BUNCHED, 1);
    CHECK(odd.bx == 3 && odd.by == 2);
    check_consistent(&odd);
    halo_layout indivisible = {.px = 16, .tpn = 1};
    CHECK(halo_layout_setup(&indivisible, 24, err) == -1 && strstr(err, "24 tasks"));

    /* Degenerate grids: one column, whose east and west wrap onto the task itself: no
     * message there, unless self_messages asks for them */
    halo_layout col = layout(7, 1, 1, PLACE_ROW, 1);
    halo_neighbours(&col, 3, nb);
    CHECK(nb[EAST] == -1 && nb[WEST] == -1 && nb[NORTH] == 2 && nb[SOUTH] == 4);
    CHECK(off_node(&col) == 2);
    int most;
    CHECK(halo_messages_per_call(&col, &most) == 7 * 2 && most == 2);
    col.self_messages = 1;
    halo_neighbours(&col, 3, nb);
    CHECK(nb[EAST] == 3 && nb[WEST] == 3);
    CHECK(halo_messages_per_call(&col, &most) == 7 * 4 && most == 4);
    /* IMB Exchange's ring: 2 or 4 tasks are one periodic row; each task sends east and west
     * (on 2 tasks both to the other task, as IMB does), none north-south */
    for (int n = 2; n <= 4; n += 2) {
        halo_layout ring = layout(n, halo_default_px(n, 16), 1, PLACE_ROW, 1);
        CHECK(ring.py == 1 && halo_messages_per_call(&ring, &most) == 2L * n && most == 2);
        halo_neighbours(&ring, 0, nb);
        CHECK(nb[NORTH] == -1 && nb[SOUTH] == -1 && nb[EAST] == 1 && nb[WEST] == n - 1);
        check_consistent(&ring);
    }
    /* the 16x4 grid sends four messages a task; without wrap-around its edges send fewer */
    CHECK(halo_messages_per_call(&r64, &most) == 64 * 4 && most == 4);
    CHECK(halo_messages_per_call(&r64np, &most) == 64 * 4 - 2 * 16 - 2 * 4 && most == 4);
    /* one task: nothing to exchange, unless it sends to itself */
    halo_layout one = layout(1, 1, 1, PLACE_ROW, 1);
    CHECK(halo_messages_per_call(&one, &most) == 0 && most == 0);
    return check_summary();
}
