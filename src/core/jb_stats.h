/* Statistics of one array and log-binned histograms that merge across ranks
 * (no MPI, unit-tested alone). */
#ifndef JB_STATS_H
#define JB_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- statistics on one array -------------------------------------------- */
typedef struct {
    size_t n;
    double mean, stddev, min, max;
    double p50, p90, p99, p999;
} jb_summary;

/* Percentile q in [0, 100] of sorted[0..n-1], linear interpolation between
 * closest ranks (numpy's default, Hyndman & Fan type 7). */
double jb_percentile_sorted(const double *sorted, size_t n, double q);
/* The distribution-free 95 % interval of the median of n values (order statistics):
 * [x(k), x(n + 1 - k)] with k (1-based) the largest such that 2 P(Bin(n, 1/2) <= k - 1)
 * <= 0.05, exact up to 1000 values, from the normal approximation above; 0 when n < 6
 * (no interval reaches 95 %). */
long jb_median_ci_rank(size_t n);
/* That interval's half-width relative to the median of sorted[0..n-1]; +inf when there is
 * no interval or the median is not positive. */
double jb_median_ci_halfwidth(const double *sorted, size_t n);
/* P(X >= k) for X ~ Binomial(n, p): the one-sided test of k successes against a fair
 * share p.  Exact (a sum of terms from k up, each from lgamma, until they no longer
 * count); 1 when k <= n p, where the count is not above its share. */
double jb_binomial_upper(long n, long k, double p);
/* Holm's step-down over a family of `family` hypotheses of which `count` have the p-values
 * p[0..count-1] (the rest: 1, never rejected): sets rejected[i] to 1 for each p[i] the
 * procedure rejects at family-wise rate alpha, else 0; returns how many.  order holds
 * count indices of working space. */
long jb_holm(const double *p, long count, long family, double alpha, size_t *order, int *rejected);
/* Summary of x (not modified; a sorted copy is made). */
void jb_summarize(const double *x, size_t n, jb_summary *s);
/* qsort's ascending order of doubles (a NaN compares equal to every value: keep them out). */
int jb_compare_doubles(const void *a, const void *b);
/* The median of x[0..n-1], sorting x in place; NaN for none. */
double jb_median(double *x, size_t n);
/* z with P(Z > z) = a for a standard normal Z, a in (0, 1/2]: by bisection on erfc. */
double jb_normal_upper_quantile(double a);

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

#endif
