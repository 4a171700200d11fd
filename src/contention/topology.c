/* Torus and mesh topologies: hops, dimension-ordered routes, topology files. */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jb_parse.h"

long topo_size(const topo_shape *t)
{
    long n = 1;
    for (int d = 0; d < t->ndims; d++)
        n *= t->dims[d];
    return n;
}

void topo_coords(const topo_shape *t, long index, int *c)
{
    for (int d = 0; d < t->ndims; d++) {
        c[d] = (int)(index % t->dims[d]);
        index /= t->dims[d];
    }
}

long topo_index(const topo_shape *t, const int *c)
{
    long index = 0, stride = 1;
    for (int d = 0; d < t->ndims; d++) {
        index += c[d] * stride;
        stride *= t->dims[d];
    }
    return index;
}

int topo_steps(const topo_shape *t, int dim, int a, int b)
{
    int L = t->dims[dim], up = b - a;
    if (!t->wrap[dim])
        return up;
    up = ((up % L) + L) % L;          /* steps going + */
    return 2 * up <= L ? up : up - L; /* going - is shorter */
}

int topo_hops(const topo_shape *t, const int *a, const int *b)
{
    int hops = 0;
    for (int d = 0; d < t->ndims; d++)
        hops += abs(topo_steps(t, d, a[d], b[d]));
    return hops;
}

int topo_max_hops(const topo_shape *t)
{
    int hops = 0;
    for (int d = 0; d < t->ndims; d++)
        hops += t->wrap[d] ? t->dims[d] / 2 : t->dims[d] - 1;
    return hops;
}

/* Walks the dimension-ordered route from a to b, calling visit on each link
 * until it returns non-zero; returns the links visited. */
static int walk_route(const topo_shape *t, const int *a, const int *b,
                      int (*visit)(topo_link, void *), void *arg)
{
    int at[TOPO_MAXDIMS], n = 0;
    memcpy(at, a, sizeof at[0] * (size_t)t->ndims);
    for (int d = 0; d < t->ndims; d++) {
        int steps = topo_steps(t, d, a[d], b[d]), dir = steps > 0 ? 1 : -1;
        for (int s = 0; s < abs(steps); s++, n++) {
            if (visit((topo_link){topo_index(t, at), d, dir}, arg))
                return n + 1;
            at[d] = (at[d] + dir + t->dims[d]) % t->dims[d];
        }
    }
    return n;
}

static int append_link(topo_link l, void *arg)
{
    topo_link **out = arg;
    *(*out)++ = l;
    return 0;
}

int topo_route(const topo_shape *t, const int *a, const int *b, topo_link *links)
{
    return walk_route(t, a, b, append_link, &links);
}

struct link_search {
    topo_link want;
    int found;
};

static int same_link(topo_link l, void *arg)
{
    struct link_search *f = arg;
    f->found = l.from == f->want.from && l.dim == f->want.dim && l.dir == f->want.dir;
    return f->found;
}

int topo_route_crosses(const topo_shape *t, const int *a, const int *b, topo_link l)
{
    struct link_search f = {l, 0};
    walk_route(t, a, b, same_link, &f);
    return f.found;
}

static int parse_wrap_word(const char *w, int *wrap)
{
    if (!strcmp(w, "yes") || !strcmp(w, "torus") || !strcmp(w, "1"))
        *wrap = 1;
    else if (!strcmp(w, "no") || !strcmp(w, "mesh") || !strcmp(w, "0"))
        *wrap = 0;
    else
        return -1;
    return 0;
}

int topo_parse_wrap(const char *text, topo_shape *t, char *err)
{
    char buf[256], *save = NULL;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *w = strtok_r(buf, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
        if (n == t->ndims) {
            snprintf(err, JB_ERRLEN, "wrap '%s' names more than the %d dimension(s)", text, t->ndims);
            return -1;
        }
        if (parse_wrap_word(w, &t->wrap[n++]) != 0) {
            snprintf(err, JB_ERRLEN, "wrap '%s': '%s' is not yes or no", text, w);
            return -1;
        }
    }
    if (n != t->ndims) {
        snprintf(err, JB_ERRLEN, "wrap '%s' names %d of the %d dimension(s)", text, n, t->ndims);
        return -1;
    }
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A host listed twice (sorted, so O(n log n) for the largest machines) */
static int repeated_host(const topo_file *f, char *err)
{
    char **names = malloc((size_t)f->nhosts * sizeof *names);
    memcpy(names, f->hosts, (size_t)f->nhosts * sizeof *names);
    qsort(names, (size_t)f->nhosts, sizeof *names, by_name);
    int rc = 0;
    for (long i = 1; i < f->nhosts && rc == 0; i++)
        if (!strcmp(names[i - 1], names[i])) {
            snprintf(err, JB_ERRLEN, "host '%s' is listed twice", names[i]);
            rc = -1;
        }
    free(names);
    return rc;
}

static int fail_line(char *err, long line, const char *what, const char *detail)
{
    snprintf(err, JB_ERRLEN, "line %ld: %.180s%.60s", line, what, detail);
    return -1;
}

int topo_file_parse(const char *text, topo_file *f, char *err)
{
    memset(f, 0, sizeof *f);
    char *copy = strdup(text);
    unsigned char *taken = NULL;
    long lineno = 0, cap = 0;
    int rc = -1, have_wrap = 0;
    for (char *line = copy, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *words[2 + TOPO_MAXDIMS], *save = NULL;
        int nw = 0;
        for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save))
            if (nw < 2 + TOPO_MAXDIMS)
                words[nw++] = w;
            else {
                fail_line(err, lineno, "too many fields", "");
                goto out;
            }
        if (nw == 0)
            continue;
        char msg[JB_ERRLEN];
        if (!strcmp(words[0], "dims")) {
            if (f->shape.ndims || nw != 2) {
                fail_line(err, lineno, "expected one 'dims AxBxC' line, e.g. dims 8x8x8", "");
                goto out;
            }
            if (jb_parse_dims(words[1], TOPO_MAXDIMS, f->shape.dims, &f->shape.ndims, msg) != 0) {
                fail_line(err, lineno, msg, "");
                goto out;
            }
            for (int d = 0; d < f->shape.ndims; d++)
                f->shape.wrap[d] = 1;
            long size = topo_size(&f->shape);
            if (size > 1L << 24) {
                fail_line(err, lineno, "more than 2^24 nodes", "");
                goto out;
            }
            taken = calloc((size_t)size, 1);
            if (!taken) {
                fail_line(err, lineno, "out of memory for the nodes of the 'dims' line", "");
                goto out;
            }
            continue;
        }
        if (!f->shape.ndims) {
            fail_line(err, lineno, "the 'dims' line must come first, not ", words[0]);
            goto out;
        }
        if (!strcmp(words[0], "wrap")) {
            char joined[256] = "";
            for (int i = 1; i < nw; i++)
                snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i > 1 ? " " : "", words[i]);
            if (have_wrap || f->nhosts || topo_parse_wrap(joined, &f->shape, msg) != 0) {
                fail_line(err, lineno, have_wrap || f->nhosts ? "'wrap' must come once, before the hosts" : msg, "");
                goto out;
            }
            have_wrap = 1;
            continue;
        }
        if (nw != 1 + f->shape.ndims) {
            snprintf(msg, sizeof msg, "host '%s' needs %d coordinate(s)", words[0], f->shape.ndims);
            fail_line(err, lineno, msg, "");
            goto out;
        }
        int c[TOPO_MAXDIMS];
        for (int d = 0; d < f->shape.ndims; d++) {
            char *end;
            long v = strtol(words[1 + d], &end, 10);
            if (*end || end == words[1 + d] || v < 0 || v >= f->shape.dims[d]) {
                snprintf(msg, sizeof msg, "host '%s': coordinate '%s' is not in 0..%d", words[0], words[1 + d],
                         f->shape.dims[d] - 1);
                fail_line(err, lineno, msg, "");
                goto out;
            }
            c[d] = (int)v;
        }
        long index = topo_index(&f->shape, c);
        if (taken[index]) {
            snprintf(msg, sizeof msg, "host '%s': its coordinates belong to another host already", words[0]);
            fail_line(err, lineno, msg, "");
            goto out;
        }
        taken[index] = 1;
        if (f->nhosts == cap) {
            /* each pointer is kept the moment it is valid, so topo_file_free frees each once */
            int want = cap ? 2 * cap : 64;
            char **hosts = realloc(f->hosts, (size_t)want * sizeof *f->hosts);
            if (hosts)
                f->hosts = hosts;
            int *coords = hosts ? realloc(f->coords, (size_t)want * TOPO_MAXDIMS * sizeof *f->coords) : NULL;
            if (coords)
                f->coords = coords;
            if (!coords) {
                fail_line(err, lineno, "out of memory for the hosts", "");
                goto out;
            }
            cap = want;
        }
        if (!(f->hosts[f->nhosts] = strdup(words[0]))) {
            fail_line(err, lineno, "out of memory for the hosts", "");
            goto out;
        }
        memcpy(f->coords + f->nhosts * f->shape.ndims, c, sizeof c[0] * (size_t)f->shape.ndims);
        f->nhosts++;
    }
    if (!f->shape.ndims)
        snprintf(err, JB_ERRLEN, "no 'dims' line");
    else if (!f->nhosts)
        snprintf(err, JB_ERRLEN, "no hosts");
    else if (repeated_host(f, err) == 0)
        rc = 0;
out:
    free(copy);
    free(taken);
    if (rc != 0)
        topo_file_free(f);
    return rc;
}

const int *topo_file_lookup(const topo_file *f, const char *host)
{
    size_t short_len = strcspn(host, ".");
    for (long i = 0; i < f->nhosts; i++)
        if (!strcmp(f->hosts[i], host) || (strlen(f->hosts[i]) == short_len && !strncmp(f->hosts[i], host, short_len)))
            return f->coords + i * f->shape.ndims;
    return NULL;
}

void topo_file_free(topo_file *f)
{
    for (long i = 0; i < f->nhosts; i++)
        free(f->hosts[i]);
    free(f->hosts);
    free(f->coords);
    memset(f, 0, sizeof *f);
}

void topo_format(const topo_shape *t, const int *c, char *buf, int len)
{
    int at = 0;
    buf[0] = '\0';
    for (int d = 0; d < t->ndims && at < len; d++)
        at += snprintf(buf + at, (size_t)(len - at), "%s%d", d ? "," : "", c[d]);
}
