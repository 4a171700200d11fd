/* Hop distances, dimension-ordered routes, topology files and the pairings
 * of the contention benchmarks, on known shapes: exact answers. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jb_parse.h"
#include "pairs.h"

static topo_shape shape(int ndims, const int *dims, const int *wrap)
{
    topo_shape t = {.ndims = ndims};
    memcpy(t.dims, dims, sizeof *dims * (size_t)ndims);
    memcpy(t.wrap, wrap, sizeof *wrap * (size_t)ndims);
    return t;
}

static int hops1(const topo_shape *t, int a, int b) { return topo_hops(t, &a, &b); }

static void test_hops(void)
{
    topo_shape ring6 = shape(1, (int[]){6}, (int[]){1}), line6 = shape(1, (int[]){6}, (int[]){0});
    int ring_expected[6] = {0, 1, 2, 3, 2, 1};
    for (int b = 0; b < 6; b++) {
        CHECK(hops1(&ring6, 0, b) == ring_expected[b]);
        CHECK(hops1(&line6, 0, b) == b);
        CHECK(hops1(&ring6, b, 0) == ring_expected[b]); /* symmetric */
    }
    CHECK(topo_max_hops(&ring6) == 3);
    CHECK(topo_max_hops(&line6) == 5);
    /* the tie (half way round) goes +; otherwise the shorter way */
    CHECK(topo_steps(&ring6, 0, 0, 3) == 3);
    CHECK(topo_steps(&ring6, 0, 3, 0) == 3);
    CHECK(topo_steps(&ring6, 0, 0, 4) == -2);
    CHECK(topo_steps(&ring6, 0, 5, 1) == 2);
    CHECK(topo_steps(&line6, 0, 5, 1) == -4);

    topo_shape t44 = shape(2, (int[]){4, 4}, (int[]){1, 1});
    CHECK(topo_hops(&t44, (int[]){0, 0}, (int[]){3, 3}) == 2);
    CHECK(topo_hops(&t44, (int[]){0, 0}, (int[]){2, 2}) == 4);
    CHECK(topo_max_hops(&t44) == 4);

    topo_shape bgp = shape(3, (int[]){8, 8, 8}, (int[]){1, 1, 1});
    CHECK(topo_hops(&bgp, (int[]){0, 0, 0}, (int[]){4, 4, 4}) == 12);
    CHECK(topo_hops(&bgp, (int[]){1, 7, 0}, (int[]){7, 1, 5}) == 2 + 2 + 3);
    CHECK(topo_max_hops(&bgp) == 12);
    /* a torus in x and y, a mesh in z */
    topo_shape mixed = shape(3, (int[]){4, 4, 8}, (int[]){1, 1, 0});
    CHECK(topo_hops(&mixed, (int[]){0, 0, 0}, (int[]){3, 3, 7}) == 1 + 1 + 7);
    CHECK(topo_max_hops(&mixed) == 2 + 2 + 7);

    /* index and coordinates: dimension 0 fastest, and back */
    int c[3];
    topo_coords(&mixed, 4 * 4 * 5 + 4 * 2 + 3, c);
    CHECK(c[0] == 3 && c[1] == 2 && c[2] == 5);
    for (long i = 0; i < topo_size(&mixed); i++) {
        topo_coords(&mixed, i, c);
        CHECK(topo_index(&mixed, c) == i);
    }
}

static int link_is(topo_link l, long from, int dim, int dir) { return l.from == from && l.dim == dim && l.dir == dir; }

static void test_routes(void)
{
    topo_link links[64];
    topo_shape ring6 = shape(1, (int[]){6}, (int[]){1});
    /* 0 -> 4 on a ring of 6: two links the - way round, 0->5 and 5->4 */
    CHECK(topo_route(&ring6, (int[]){0}, (int[]){4}, links) == 2);
    CHECK(link_is(links[0], 0, 0, -1) && link_is(links[1], 5, 0, -1));
    /* 0 -> 3: a tie, three links the + way */
    CHECK(topo_route(&ring6, (int[]){0}, (int[]){3}, links) == 3);
    CHECK(link_is(links[0], 0, 0, 1) && link_is(links[1], 1, 0, 1) && link_is(links[2], 2, 0, 1));
    CHECK(topo_route(&ring6, (int[]){2}, (int[]){2}, links) == 0);

    /* 4x4 torus, (3,0) -> (0,2): x first (3->0 across the wrap), then y (0->1->2) */
    topo_shape t44 = shape(2, (int[]){4, 4}, (int[]){1, 1});
    int a[2] = {3, 0}, b[2] = {0, 2};
    CHECK(topo_route(&t44, a, b, links) == 3);
    CHECK(link_is(links[0], 3, 0, 1));      /* (3,0) -> (0,0) */
    CHECK(link_is(links[1], 0, 1, 1));      /* (0,0) -> (0,1) */
    CHECK(link_is(links[2], 4, 1, 1));      /* (0,1) -> (0,2) */
    CHECK(topo_route_crosses(&t44, a, b, (topo_link){4, 1, 1}));
    CHECK(!topo_route_crosses(&t44, a, b, (topo_link){4, 1, -1}));
    CHECK(!topo_route_crosses(&t44, b, a, (topo_link){3, 0, 1})); /* the way back is other links */

    /* 3-D mesh in z: (0,0,6) -> (1,3,1) goes x+, y- (wrap), then z- five times */
    topo_shape mixed = shape(3, (int[]){4, 4, 8}, (int[]){1, 1, 0});
    int p[3] = {0, 0, 6}, q[3] = {1, 3, 1};
    CHECK(topo_route(&mixed, p, q, links) == topo_hops(&mixed, p, q));
    CHECK(topo_hops(&mixed, p, q) == 1 + 1 + 5);
    CHECK(links[0].dim == 0 && links[0].dir == 1 && links[1].dim == 1 && links[1].dir == -1);
    for (int i = 2; i < 7; i++)
        CHECK(links[i].dim == 2 && links[i].dir == -1);
    CHECK(links[6].from == topo_index(&mixed, (int[]){1, 3, 2}));
}

static const char good_file[] =
    "# a 2x3 torus, y a mesh\n"
    "dims 2x3\n"
    "wrap yes no\n"
    "n00 0 0\n"
    "n10 1 0   # trailing comment\n"
    "\n"
    "n01 0 1\n"
    "n11 1 1\n"
    "n02 0 2\n";

static void expect_file_error(const char *text, const char *needle)
{
    topo_file f;
    char err[JB_ERRLEN] = "";
    CHECK(topo_file_parse(text, &f, err) == -1);
    CHECK(strstr(err, needle) != NULL);
    if (!strstr(err, needle))
        fprintf(stderr, "  error was: %s (expected '%s')\n", err, needle);
}

static void test_file(void)
{
    topo_file f;
    char err[JB_ERRLEN] = "";
    CHECK(topo_file_parse(good_file, &f, err) == 0);
    CHECK(f.shape.ndims == 2 && f.shape.dims[0] == 2 && f.shape.dims[1] == 3);
    CHECK(f.shape.wrap[0] == 1 && f.shape.wrap[1] == 0);
    CHECK(f.nhosts == 5);
    const int *c = topo_file_lookup(&f, "n11");
    CHECK(c && c[0] == 1 && c[1] == 1);
    c = topo_file_lookup(&f, "n02.cluster.example.org"); /* a full name finds its short name */
    CHECK(c && c[0] == 0 && c[1] == 2);
    CHECK(topo_file_lookup(&f, "n12") == NULL);
    CHECK(topo_file_lookup(&f, "n0") == NULL);
    topo_file_free(&f);

    expect_file_error("n00 0 0\n", "line 1: the 'dims' line must come first");
    expect_file_error("dims 2x3\nn00 0 0\nn01 0\n", "line 3: host 'n01' needs 2 coordinate(s)");
    expect_file_error("dims 2x3\nn00 0 3\n", "line 2: host 'n00': coordinate '3' is not in 0..2");
    expect_file_error("dims 2x3\nn00 0 x\n", "coordinate 'x'");
    expect_file_error("dims 2x3\nn00 0 1\nn01 0 1\n", "line 3: host 'n01': its coordinates belong to another host");
    expect_file_error("dims 2x3\nn00 0 1\nn00 1 1\n", "host 'n00' is listed twice");
    expect_file_error("dims 2x3\nwrap yes\nn00 0 1\n", "names 1 of the 2 dimension(s)");
    expect_file_error("dims 2x3\nwrap yes maybe\n", "'maybe' is not yes or no");
    expect_file_error("dims 2x3\nn00 0 1\nwrap yes yes\n", "line 3: 'wrap' must come once, before the hosts");
    expect_file_error("dims 2x0\n", "line 1: '2x0' is not a shape");
    /* a product that wraps a 64-bit count to 0 once passed the 2^24 check */
    expect_file_error("dims 65536x65536x65536x65536\n", "more than 2^31 - 1 points");
    expect_file_error("# nothing\n", "no 'dims' line");
    expect_file_error("dims 4\n", "no hosts");
}

/* every participant of a shape fully occupied: participant i at index i */
static void occupy_all(const topo_shape *t, int *coords, long *occupant)
{
    for (long i = 0; i < topo_size(t); i++) {
        topo_coords(t, i, coords + i * t->ndims);
        occupant[i] = i;
    }
}

static void check_pairing_consistent(const pairing *p, long n)
{
    long pairs = 0;
    for (long i = 0; i < n; i++) {
        if (p->partner[i] < 0) {
            CHECK(!p->pinger[i]);
            continue;
        }
        CHECK(p->partner[p->partner[i]] == i);              /* once, and mutual */
        CHECK(p->pinger[i] + p->pinger[p->partner[i]] == 1); /* exactly one side starts */
        pairs += p->pinger[i];
    }
    CHECK(pairs == p->pairs);
}

static void test_pairs(void)
{
    topo_shape t = shape(2, (int[]){8, 4}, (int[]){1, 1});
    long n = topo_size(&t), occupant[32];
    int coords[32 * 2];
    occupy_all(&t, coords, occupant);
    pairing p;
    pairing_init(&p, n);

    /* without contention: the root and the first participant h hops away */
    for (int h = 1; h <= topo_max_hops(&t); h++) {
        long partner = pairs_at_distance(&t, coords, n, 0, h, &p);
        CHECK(partner >= 0 && p.pairs == 1 && p.pinger[0] && p.partner[0] == partner);
        CHECK(topo_hops(&t, coords, coords + partner * 2) == h);
        for (long i = 1; i < partner; i++) /* the first one that far */
            CHECK(topo_hops(&t, coords, coords + i * 2) != h);
    }
    CHECK(pairs_at_distance(&t, coords, n, 0, topo_max_hops(&t) + 1, &p) == -1 && p.pairs == 0);

    /* with contention, along x (8 long): n = 1..4, every task paired once, n hops apart along x only */
    for (int hops = 1; hops <= 4; hops++) {
        pairs_along(&t, coords, occupant, n, 0, hops, &p);
        check_pairing_consistent(&p, n);
        long idle = 0;
        for (long i = 0; i < n; i++) {
            if (p.partner[i] < 0) {
                idle++;
                continue;
            }
            const int *a = coords + i * 2, *b = coords + p.partner[i] * 2;
            CHECK(topo_hops(&t, a, b) == hops && a[1] == b[1]);
        }
        /* blocks of 2n along a line of 8: all paired for n = 1, 2, 4; for n = 3, x = 6, 7 stay idle */
        CHECK(idle == (hops == 3 ? 2 * 4 : 0));
        /* each link of a line carries at most n routes, the busiest exactly n */
        int busiest = 0;
        for (long l = 0; l < n; l++) {
            int load = 0;
            for (long i = 0; i < n; i++)
                if (p.pinger[i])
                    load += topo_route_crosses(&t, coords + i * 2, coords + p.partner[i] * 2, (topo_link){l, 0, 1});
            busiest = load > busiest ? load : busiest;
        }
        CHECK(busiest == hops);
    }
    /* a node the job lacks: whoever it would pair with stays idle */
    occupant[3] = -1;
    pairs_along(&t, coords, occupant, n, 0, 1, &p);
    CHECK(p.partner[2] == -1 && p.pairs == 15);
    occupant[3] = 3;

    /* controlled contention on x: k pairs, all H hops apart, all across the link H-1 -> H */
    for (int H = 3; H <= 4; H++)
        for (int k = 1; k <= H; k++) {
            topo_link shared;
            CHECK(pairs_sharing_link(&t, coords + 9 * 2, occupant, n, 0, k, H, &p, &shared) == 0);
            check_pairing_consistent(&p, n);
            CHECK(p.pairs == k);
            CHECK(link_is(shared, topo_index(&t, (int[]){H - 1, 1}), 0, 1)); /* on the line y = 1 of the origin */
            topo_link back = {topo_index(&t, (int[]){H, 1}), 0, -1};
            for (long i = 0; i < n; i++)
                if (p.pinger[i]) {
                    CHECK(topo_hops(&t, coords + i * 2, coords + p.partner[i] * 2) == H);
                    CHECK(topo_route_crosses(&t, coords + i * 2, coords + p.partner[i] * 2, shared));
                    /* the way back shares the reverse link, unless half way round (a tie goes +) */
                    CHECK(topo_route_crosses(&t, coords + p.partner[i] * 2, coords + i * 2, back) == (2 * H < 8));
                }
        }
    topo_link shared;
    occupant[topo_index(&t, (int[]){6, 0})] = -1;
    CHECK(pairs_sharing_link(&t, coords, occupant, n, 0, 2, 4, &p, &shared) == -(topo_index(&t, (int[]){6, 0}) + 1));
    occupant[topo_index(&t, (int[]){6, 0})] = topo_index(&t, (int[]){6, 0});

    /* random: every participant once per call, the same draw for the same (seed, call), a new one next call */
    long perm[32], first[32];
    pairs_random(n, 7, 0, perm, &p);
    check_pairing_consistent(&p, n);
    CHECK(p.pairs == n / 2);
    memcpy(first, p.partner, sizeof first);
    pairs_random(n, 7, 0, perm, &p);
    CHECK(memcmp(first, p.partner, sizeof first) == 0);
    pairs_random(n, 7, 1, perm, &p);
    CHECK(memcmp(first, p.partner, sizeof first) != 0);
    pairs_random(5, 7, 3, perm, &p); /* odd: one idle */
    check_pairing_consistent(&p, 5);
    CHECK(p.pairs == 2);
    pairing_free(&p);
}

int main(void)
{
    test_hops();
    test_routes();
    test_file();
    test_pairs();
    return check_summary();
}
