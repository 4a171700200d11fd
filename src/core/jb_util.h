/* jitterbench shared core, MPI-free part: option-value parsing, statistics,
 * log-binned histograms, a seedable RNG and a JSON builder.  Kept free of
 * MPI so that ctest can check it on known inputs without a launcher. */
#ifndef JB_UTIL_H
#define JB_UTIL_H

#include <stddef.h>
#include <stdint.h>

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

/* ---- statistics on one array -------------------------------------------- */
typedef struct {
    size_t n;
    double mean, stddev, min, max;
    double p50, p90, p99, p999;
} jb_summary;

/* Percentile q in [0, 100] of sorted[0..n-1], linear interpolation between
 * closest ranks (numpy's default, Hyndman & Fan type 7). */
double jb_percentile_sorted(const double *sorted, size_t n, double q);
/* Summary of x (not modified; a sorted copy is made). */
void jb_summarize(const double *x, size_t n, jb_summary *s);

/* ---- log-binned histogram ------------------------------------------------
 * Fixed bin edges, identical on every rank, so histograms merge across ranks
 * by summing counts (one MPI_Reduce of JB_HIST_NBINS counters). */
#define JB_HIST_BINS_PER_DECADE 20
#define JB_HIST_LO_US 1e-3   /* lower edge of bin 1; bin 0 holds smaller values */
#define JB_HIST_DECADES 11   /* up to 1e8 us = 100 s; the last bin holds larger */
#define JB_HIST_NBINS (JB_HIST_BINS_PER_DECADE * JB_HIST_DECADES + 2)
typedef struct {
    uint64_t count[JB_HIST_NBINS];
} jb_hist;

void jb_hist_clear(jb_hist *h);
void jb_hist_add(jb_hist *h, double us);
int jb_hist_bin(double us);
double jb_hist_lower(int bin); /* 0 for bin 0 */
double jb_hist_upper(int bin); /* +inf for the last bin */
uint64_t jb_hist_total(const jb_hist *h);
/* Percentile estimated from the histogram: the geometric middle of the bin
 * holding the q-th percentile sample (within 6 % of the true value, given 20
 * bins per decade). */
double jb_hist_percentile(const jb_hist *h, double q);

/* ---- random numbers (splitmix64: tiny, seedable, same on every platform) */
typedef struct { uint64_t state; } jb_rng;
void jb_rng_seed(jb_rng *r, uint64_t seed, uint64_t stream);
uint64_t jb_rng_next(jb_rng *r);
double jb_rng_uniform(jb_rng *r); /* in [0, 1) */
/* A gamma variate of this mean and standard deviation (shape (mean/sd)^2):
 * right-skewed like the exchange times of Tabe et al.'s Figure 3.  sd 0: mean. */
double jb_rng_gamma(jb_rng *r, double mean, double sd);

/* ---- JSON builder --------------------------------------------------------
 * Appends to a growing buffer; keys are NULL inside arrays.  Non-finite
 * numbers become null (JSON has no NaN).  When memory runs out the builder
 * stops appending and sets failed; the writer refuses such a document. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;              /* out of memory: the document is incomplete */
    int depth;
    unsigned char first[64]; /* no element written yet at this depth */
    char closer[64];         /* the bracket that closes this depth */
} jb_json;

void jb_json_init(jb_json *j);
void jb_json_free(jb_json *j);
void jb_json_object(jb_json *j, const char *key);
void jb_json_array(jb_json *j, const char *key);
void jb_json_end(jb_json *j); /* closes the innermost object or array */
void jb_json_str(jb_json *j, const char *key, const char *value);
void jb_json_num(jb_json *j, const char *key, double value);
void jb_json_int(jb_json *j, const char *key, long long value);
void jb_json_bool(jb_json *j, const char *key, int value);
void jb_json_nums(jb_json *j, const char *key, const double *v, size_t n);
void jb_json_raw(jb_json *j, const char *key, const char *json_text);
void jb_json_hist(jb_json *j, const char *key, const jb_hist *h);

#endif
