/* Checked arithmetic, a run's memory sum and option-value parsing: the
 * bottom of the core (no MPI, unit-tested alone). */
#ifndef JB_PARSE_H
#define JB_PARSE_H

#include <stddef.h>

#define JB_ERRLEN 256

/* ---- checked arithmetic ---------------------------------------------------
 * Every size, count and product that decides an allocation or a message goes
 * through these: 0 with the result, or -1 on overflow (out untouched). */
static inline int jb_mul(size_t a, size_t b, size_t *out)
{
    if (b && a > (size_t)-1 / b)
        return -1;
    *out = a * b;
    return 0;
}

static inline int jb_add(size_t a, size_t b, size_t *out)
{
    if (a > (size_t)-1 - b)
        return -1;
    *out = a + b;
    return 0;
}

/* Memory a run will hold per task, summed before anything is allocated: each
 * term is count x size bytes, named after the options that decide it, so a
 * run that cannot fit is refused naming them (jb_memory_check). */
typedef struct {
    size_t bytes;
    int overflow;
    char largest[128]; /* the biggest term's name */
    size_t largest_bytes;
} jb_memory;

void jb_memory_add(jb_memory *m, const char *what, size_t count, size_t size);

/* ---- option values ------------------------------------------------------
 * Each parser returns 0 on success, or -1 with a one-line message in err.
 * Numbers are strict: no leading blanks or '+', no trailing text. */

/* "4096", "4K", "1M", "2G" (binary multiples, as message sizes are). */
int jb_parse_size(const char *text, size_t *out, char *err);
/* "8,1K,64K", or a power-of-two range "8:1M" (8, 16, ..., 1M), or a mix. */
int jb_parse_size_list(const char *text, size_t **out, int *count, char *err);
/* A whole number in [lo, hi]. */
int jb_parse_long(const char *text, long lo, long hi, long *out, char *err);
/* A comma-separated list of whole numbers in [lo, hi]. */
int jb_parse_long_list(const char *text, long lo, long hi, long **out, int *count, char *err);
/* A finite number in [lo, hi] (no inf, no nan). */
int jb_parse_double(const char *text, double lo, double hi, double *out, char *err);
/* The largest of n sizes (0 when n is 0): what a run's buffers must hold. */
size_t jb_largest(const size_t *v, int n);
/* "AxB" or "AxBxC": positive dimensions, at most maxdims of them, whose
 * product fits an int (a task count). */
int jb_parse_dims(const char *text, int maxdims, int *dims, int *ndims, char *err);
/* Index of text in a NULL-terminated name table (case-sensitive), or -1. */
int jb_lookup(const char *text, const char *const *names);
/* A comma-separated list of names from the table ("all" selects every one);
 * selected[i] is set for each name given.  aliases (or NULL) is a second
 * table of the same length whose entries select the same items. */
int jb_parse_name_list(const char *text, const char *const *names, const char *const *aliases,
                       int *selected, char *err);

#endif
