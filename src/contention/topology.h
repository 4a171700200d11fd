/* Torus and mesh topologies: coordinates, hop distance, dimension-ordered
 * routes, and the topology file that maps host names to coordinates.
 * MPI-free, so ctest checks it on known shapes. */
#ifndef JB_TOPOLOGY_H
#define JB_TOPOLOGY_H

#define TOPO_MAXDIMS 6

typedef struct {
    int ndims;
    int dims[TOPO_MAXDIMS];
    int wrap[TOPO_MAXDIMS]; /* 1: torus in this dimension (wrap-around link), 0: mesh */
} topo_shape;

/* A directed link: from node `from` (index) one step along `dim`, dir +1 or -1. */
typedef struct {
    long from;
    int dim, dir;
} topo_link;

long topo_size(const topo_shape *t);
/* Node index <-> coordinates; dimension 0 varies fastest. */
void topo_coords(const topo_shape *t, long index, int *c);
long topo_index(const topo_shape *t, const int *c);
/* Signed steps from a to b along dim: the shorter way round on a torus, a
 * tie (exactly half way) going the + way. */
int topo_steps(const topo_shape *t, int dim, int a, int b);
/* Manhattan distance, with wrap-around where the dimension has it. */
int topo_hops(const topo_shape *t, const int *a, const int *b);
/* The largest hop distance in the shape. */
int topo_max_hops(const topo_shape *t);
/* The links a message from a to b crosses, dimension-ordered routing (all of
 * dimension 0 first, then 1, ...); at most topo_max_hops() of them.  Returns
 * the count. */
int topo_route(const topo_shape *t, const int *a, const int *b, topo_link *links);
/* Does the route from a to b cross link l? */
int topo_route_crosses(const topo_shape *t, const int *a, const int *b, topo_link l);

/* "yes,no,yes" (or space-separated; yes/no, torus/mesh, 1/0): one per dimension. */
int topo_parse_wrap(const char *text, topo_shape *t, char *err);

/* The topology file, how a site describes its machine:
 *     # comment
 *     dims 8x8x8
 *     wrap yes yes yes          (optional: a torus in every dimension by default)
 *     <hostname> <x> <y> <z>    one line per node
 * Every host and every coordinate at most once; coordinates in range. */
typedef struct {
    topo_shape shape;
    long nhosts;
    char **hosts;
    int *coords; /* nhosts x ndims */
} topo_file;

/* Returns 0, or -1 with err naming the line and the problem. */
int topo_file_parse(const char *text, topo_file *f, char *err);
/* The coordinates of host, or NULL; a name also matches up to its first dot
 * (node12.site.org finds node12). */
const int *topo_file_lookup(const topo_file *f, const char *host);
void topo_file_free(topo_file *f);

/* "x,y,z", for output */
void topo_format(const topo_shape *t, const int *c, char *buf, int len);

#endif
