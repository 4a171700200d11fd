/* Parsing of option values: sizes with K/M/G suffixes, lists, power-of-two
 * ranges, bounded integers, torus dimensions and name lists. */
#include "jb_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strtol and friends skip leading blanks and take a sign: options do not. */
static int starts_number(const char *text, int signed_)
{
    if (!text)
        return 0;
    if (signed_ && *text == '-')
        text++;
    return *text >= '0' && *text <= '9';
}

void jb_memory_add(jb_memory *m, const char *what, size_t count, size_t size)
{
    size_t bytes;
    if (jb_mul(count, size, &bytes) || jb_add(m->bytes, bytes, &m->bytes)) {
        m->overflow = 1;
        bytes = (size_t)-1;
    }
    if (bytes >= m->largest_bytes) {
        m->largest_bytes = bytes;
        snprintf(m->largest, sizeof m->largest, "%s", what);
    }
}

int jb_parse_size(const char *text, size_t *out, char *err)
{
    char *end;
    if (!starts_number(text, 0)) {
        snprintf(err, JB_ERRLEN, "'%s' is not a size (bytes, with an optional K, M or G)", text ? text : "");
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno) {
        snprintf(err, JB_ERRLEN, "'%s' is not a size (bytes, with an optional K, M or G)", text);
        return -1;
    }
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || (shift && v > (~0ULL >> shift))) {
        snprintf(err, JB_ERRLEN, "'%s' is not a size (bytes, with an optional K, M or G)", text);
        return -1;
    }
    *out = (size_t)(v << shift);
    return 0;
}

/* Splits text at commas and calls item() on each piece; stops at the first error. */
static int for_each_item(const char *text, const char *what, char *err,
                         int (*item)(const char *piece, void *ctx, char *err), void *ctx)
{
    if (!text || !*text) {
        snprintf(err, JB_ERRLEN, "empty %s", what);
        return -1;
    }
    char *copy = strdup(text), *save = NULL;
    int rc = 0;
    if (!copy) {
        snprintf(err, JB_ERRLEN, "out of memory for a %s", what);
        return -1;
    }
    if (text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,")) {
        snprintf(err, JB_ERRLEN, "'%s' has an empty item in its %s", text, what);
        rc = -1;
    }
    for (char *p = strtok_r(copy, ",", &save); p && rc == 0; p = strtok_r(NULL, ",", &save))
        rc = item(p, ctx, err);
    free(copy);
    return rc;
}

typedef struct { size_t *v; int n, cap; } size_vec;

/* Grows a vector of *cap elements of size bytes to hold one more; -1 when
 * memory or the int count runs out (lists come from the command line). */
static int grow(void **v, int n, int *cap, size_t size, char *err)
{
    if (n < *cap)
        return 0;
    size_t bytes;
    int want = *cap ? 2 * *cap : 8;
    void *p = want > 0 && !jb_mul((size_t)want, size, &bytes) ? realloc(*v, bytes) : NULL;
    if (!p) {
        snprintf(err, JB_ERRLEN, "out of memory for a list of %d items", n + 1);
        return -1;
    }
    *v = p;
    *cap = want;
    return 0;
}

static int size_push(size_vec *s, size_t x, char *err)
{
    if (grow((void **)&s->v, s->n, &s->cap, sizeof *s->v, err))
        return -1;
    s->v[s->n++] = x;
    return 0;
}

static int size_item(const char *piece, void *ctx, char *err)
{
    size_vec *s = ctx;
    const char *colon = strchr(piece, ':');
    if (!colon) {
        size_t x;
        if (jb_parse_size(piece, &x, err))
            return -1;
        return size_push(s, x, err);
    }
    char lo_text[64];
    size_t lo, hi, len = (size_t)(colon - piece);
    if (len >= sizeof lo_text) {
        snprintf(err, JB_ERRLEN, "'%s' is not a range LO:HI", piece);
        return -1;
    }
    memcpy(lo_text, piece, len);
    lo_text[len] = '\0';
    if (jb_parse_size(lo_text, &lo, err) || jb_parse_size(colon + 1, &hi, err))
        return -1;
    if (lo == 0 || hi < lo) {
        snprintf(err, JB_ERRLEN, "range '%s' must go up from a size of at least 1", piece);
        return -1;
    }
    for (size_t x = lo; x <= hi; x *= 2) {
        if (size_push(s, x, err))
            return -1;
        if (x > ((size_t)-1) / 2)
            break;
    }
    return 0;
}

int jb_parse_size_list(const char *text, size_t **out, int *count, char *err)
{
    size_vec s = {0};
    if (for_each_item(text, "size list", err, size_item, &s)) {
        free(s.v);
        return -1;
    }
    *out = s.v;
    *count = s.n;
    return 0;
}

int jb_parse_long(const char *text, long lo, long hi, long *out, char *err)
{
    char *end;
    errno = 0;
    long v = starts_number(text, 1) ? strtol(text, &end, 10) : 0;
    if (!starts_number(text, 1) || end == text || *end || errno) {
        snprintf(err, JB_ERRLEN, "'%s' is not a whole number", text ? text : "");
        return -1;
    }
    if (v < lo || v > hi) {
        snprintf(err, JB_ERRLEN, "%ld is out of range (%ld to %ld)", v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int jb_parse_double(const char *text, double lo, double hi, double *out, char *err)
{
    char *end;
    double v = 0;
    if (starts_number(text, 1)) {
        errno = 0;
        v = strtod(text, &end);
    }
    /* starts_number keeps out "inf", "nan" and " 1"; isfinite the overflow to HUGE_VAL */
    if (!starts_number(text, 1) || *end || errno || !isfinite(v)) {
        snprintf(err, JB_ERRLEN, "'%s' is not a finite number", text ? text : "");
        return -1;
    }
    if (v < lo || v > hi) {
        snprintf(err, JB_ERRLEN, "%g is out of range (%g to %g)", v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct { long *v; int n, cap; long lo, hi; } long_vec;

static int long_item(const char *piece, void *ctx, char *err)
{
    long_vec *s = ctx;
    long x;
    if (jb_parse_long(piece, s->lo, s->hi, &x, err))
        return -1;
    if (grow((void **)&s->v, s->n, &s->cap, sizeof *s->v, err))
        return -1;
    s->v[s->n++] = x;
    return 0;
}

int jb_parse_long_list(const char *text, long lo, long hi, long **out, int *count, char *err)
{
    long_vec s = {.lo = lo, .hi = hi};
    if (for_each_item(text, "list", err, long_item, &s)) {
        free(s.v);
        return -1;
    }
    *out = s.v;
    *count = s.n;
    return 0;
}

size_t jb_largest(const size_t *v, int n)
{
    size_t most = 0;
    for (int i = 0; i < n; i++)
        most = v[i] > most ? v[i] : most;
    return most;
}

int jb_parse_dims(const char *text, int maxdims, int *dims, int *ndims, char *err)
{
    const char *p = text;
    int n = 0;
    size_t product = 1;
    while (p && *p) {
        char *end = (char *)p;
        errno = 0;
        long d = starts_number(p, 0) ? strtol(p, &end, 10) : 0;
        if (end == p || errno || d < 1 || d > 1L << 20 || n == maxdims || (*end && *end != 'x')) {
            snprintf(err, JB_ERRLEN, "'%s' is not a shape AxB (up to %d positive dimensions)", text, maxdims);
            return -1;
        }
        dims[n++] = (int)d;
        if (jb_mul(product, (size_t)d, &product) || product > 0x7fffffff) {
            snprintf(err, JB_ERRLEN, "shape '%s' has more than 2^31 - 1 points", text);
            return -1;
        }
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            snprintf(err, JB_ERRLEN, "'%s' is not a shape AxB (up to %d positive dimensions)", text, maxdims);
            return -1;
        }
    }
    if (n == 0) {
        snprintf(err, JB_ERRLEN, "empty shape");
        return -1;
    }
    *ndims = n;
    return 0;
}

int jb_lookup(const char *text, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

typedef struct { const char *const *names, *const *aliases; int *selected; } name_ctx;

static int name_item(const char *piece, void *ctx, char *err)
{
    name_ctx *c = ctx;
    if (strcmp(piece, "all") == 0) {
        for (int i = 0; c->names[i]; i++)
            c->selected[i] = 1;
        return 0;
    }
    int i = jb_lookup(piece, c->names);
    if (i < 0 && c->aliases)
        i = jb_lookup(piece, c->aliases);
    if (i < 0) {
        int len = snprintf(err, JB_ERRLEN, "unknown name '%s' (choose from", piece);
        for (int k = 0; c->names[k] && len < JB_ERRLEN; k++)
            len += snprintf(err + len, (size_t)(JB_ERRLEN - len), " %s", c->names[k]);
        if (len < JB_ERRLEN)
            snprintf(err + len, (size_t)(JB_ERRLEN - len), ", all)");
        return -1;
    }
    c->selected[i] = 1;
    return 0;
}

int jb_parse_name_list(const char *text, const char *const *names, const char *const *aliases,
                       int *selected, char *err)
{
    int n = 0;
    while (names[n])
        n++;
    memset(selected, 0, (size_t)n * sizeof *selected);
    name_ctx c = {names, aliases, selected};
    return for_each_item(text, "name list", err, name_item, &c);
}
