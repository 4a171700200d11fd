/* Statistics on known arrays and log-binned histograms. */
#include "jb_stats.h"
#include "jb_parse.h" /* jb_mul */

#include <math.h>
#include <stdlib.h>
#include <string.h>

int jb_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double jb_percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q / 100.0 * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n)
        return sorted[n - 1];
    double frac = pos - (double)i;
    return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

long jb_median_ci_rank(size_t n)
{
    if (n < 6)
        return 0;
    if (n > 1000) { /* Conover's normal approximation; the exact sum would cost n steps */
        long k = (long)floor(((double)n - 1.959964 * sqrt((double)n)) / 2.0);
        return k >= 1 ? k : 1;
    }
    double log_pmf_base = lgamma((double)n + 1) + (double)n * log(0.5), cdf = 0;
    long k = 0;
    for (long j = 0; j < (long)n; j++) {
        double pmf = exp(log_pmf_base - lgamma((double)j + 1) - lgamma((double)n - (double)j + 1));
        if (2 * (cdf + pmf) > 0.05)
            break;
        cdf += pmf;
        k = j + 1;
    }
    return k;
}

double jb_median_ci_halfwidth(const double *sorted, size_t n)
{
    long k = jb_median_ci_rank(n);
    double median = n ? jb_percentile_sorted(sorted, n, 50.0) : 0;
    if (k == 0 || !(median > 0))
        return HUGE_VAL;
    return (sorted[n - (size_t)k] - sorted[k - 1]) / 2 / median;
}

double jb_binomial_upper(long n, long k, double p)
{
    if (k <= 0)
        return 1;
    if (k > n || !(p > 0))
        return 0;
    if (!(p < 1) || (double)k <= (double)n * p)
        return 1;
    /* past the mode the terms fall: ratio (n - j) / (j + 1) x p / (1 - p) < 1 */
    double base = lgamma((double)n + 1), lp = log(p), lq = log1p(-p), sum = 0;
    for (long j = k; j <= n; j++) {
        double term = exp(base - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) + (double)j * lp +
                          (double)(n - j) * lq);
        sum += term;
        if (term < sum * 1e-17)
            break;
    }
    return sum < 1 ? sum : 1;
}

static const double *holm_p; /* qsort has no context argument */
static int by_holm_p(const void *a, const void *b)
{
    double x = holm_p[*(const size_t *)a], y = holm_p[*(const size_t *)b];
    return (x > y) - (x < y);
}

long jb_holm(const double *p, long count, long family, double alpha, size_t *order, int *rejected)
{
    for (long i = 0; i < count; i++) {
        order[i] = (size_t)i;
        rejected[i] = 0;
    }
    holm_p = p;
    qsort(order, (size_t)count, sizeof *order, by_holm_p);
    long named = 0;
    for (; named < count && p[order[named]] <= alpha / (double)(family - named); named++)
        rejected[order[named]] = 1;
    return named;
}

void jb_summarize(const double *x, size_t n, jb_summary *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    size_t bytes;
    double *sorted = n && !jb_mul(n, sizeof *sorted, &bytes) ? malloc(bytes) : NULL;
    if (!sorted) { /* nothing to summarize, or no memory for it: every statistic unknown */
        s->mean = s->stddev = s->min = s->max = NAN;
        s->p50 = s->p90 = s->p99 = s->p999 = NAN;
        return;
    }
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, jb_compare_doubles);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    s->mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (sorted[i] - s->mean) * (sorted[i] - s->mean);
    s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->p50 = jb_percentile_sorted(sorted, n, 50.0);
    s->p90 = jb_percentile_sorted(sorted, n, 90.0);
    s->p99 = jb_percentile_sorted(sorted, n, 99.0);
    s->p999 = jb_percentile_sorted(sorted, n, 99.9);
    free(sorted);
}

double jb_median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, jb_compare_doubles);
    return n ? jb_percentile_sorted(x, n, 50) : NAN;
}

double jb_normal_upper_quantile(double a)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / sqrt(2)) > a)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

void jb_hist_clear(jb_hist *h) { memset(h, 0, sizeof *h); }

int jb_hist_bin(double us)
{
    if (!(us >= JB_HIST_LO_US)) /* also catches NaN */
        return 0;
    int b = 1 + (int)floor(log10(us / JB_HIST_LO_US) * JB_HIST_BINS_PER_DECADE);
    return b >= JB_HIST_NBINS ? JB_HIST_NBINS - 1 : b;
}

void jb_hist_add(jb_hist *h, double us) { h->count[jb_hist_bin(us)]++; }

double jb_hist_lower(int bin)
{
    return bin == 0 ? 0.0 : JB_HIST_LO_US * pow(10.0, (double)(bin - 1) / JB_HIST_BINS_PER_DECADE);
}

double jb_hist_upper(int bin)
{
    return bin == JB_HIST_NBINS - 1 ? INFINITY
                                    : JB_HIST_LO_US * pow(10.0, (double)bin / JB_HIST_BINS_PER_DECADE);
}

uint64_t jb_hist_total(const jb_hist *h)
{
    uint64_t t = 0;
    for (int i = 0; i < JB_HIST_NBINS; i++)
        t += h->count[i];
    return t;
}

double jb_hist_percentile(const jb_hist *h, double q)
{
    uint64_t total = jb_hist_total(h);
    if (total == 0)
        return NAN;
    /* the rank of the q-th percentile sample, 1-based (nearest rank) */
    uint64_t want = (uint64_t)ceil(q / 100.0 * (double)total);
    if (want < 1)
        want = 1;
    uint64_t seen = 0;
    for (int i = 0; i < JB_HIST_NBINS; i++) {
        seen += h->count[i];
        if (seen >= want) {
            if (i == 0)
                return jb_hist_upper(0);
            if (i == JB_HIST_NBINS - 1)
                return jb_hist_lower(i);
            return sqrt(jb_hist_lower(i) * jb_hist_upper(i));
        }
    }
    return NAN;
}
