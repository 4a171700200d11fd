/* Unit tests of the MPI-free core: parsing, statistics, histograms, RNG, JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "jb_hardware.h"
#include "jb_json.h"
#include "jb_parse.h"
#include "jb_rng.h"
#include "jb_schedule.h"
#include "jb_stats.h"

static void test_sizes(void)
{
    char err[JB_ERRLEN];
    size_t v;
    CHECK(jb_parse_size("4096", &v, err) == 0 && v == 4096);
    CHECK(jb_parse_size("4K", &v, err) == 0 && v == 4096);
    CHECK(jb_parse_size("1m", &v, err) == 0 && v == 1048576);
    CHECK(jb_parse_size("2G", &v, err) == 0 && v == 2147483648UL);
    CHECK(jb_parse_size("64KB", &v, err) == 0 && v == 65536);
    CHECK(jb_parse_size("0", &v, err) == 0 && v == 0);
    CHECK(jb_parse_size("4X", &v, err) == -1 && strstr(err, "'4X'"));
    CHECK(jb_parse_size("-1", &v, err) == -1);
    CHECK(jb_parse_size("", &v, err) == -1);
    CHECK(jb_parse_size("K", &v, err) == -1);

    size_t *list;
    int n;
    CHECK(jb_parse_size_list("8:64", &list, &n, err) == 0 && n == 4 && list[0] == 8 && list[3] == 64);
    free(list);
    CHECK(jb_parse_size_list("848,1K,2:8", &list, &n, err) == 0 && n == 5 && list[0] == 848 &&
          list[1] == 1024 && list[2] == 2 && list[3] == 4 && list[4] == 8);
    free(list);
    CHECK(jb_parse_size_list("8:6", &list, &n, err) == -1);
    CHECK(jb_parse_size_list("0:8", &list, &n, err) == -1);
    CHECK(jb_parse_size_list("8,,16", &list, &n, err) == -1);
    CHECK(jb_parse_size_list("8,", &list, &n, err) == -1);
}

static void test_numbers_and_names(void)
{
    char err[JB_ERRLEN];
    long v, *list;
    int n, dims[3], nd;
    CHECK(jb_parse_long("12", 1, 20, &v, err) == 0 && v == 12);
    CHECK(jb_parse_long("21", 1, 20, &v, err) == -1 && strstr(err, "out of range"));
    CHECK(jb_parse_long("1.5", 1, 20, &v, err) == -1);
    CHECK(jb_parse_long_list("0,5,9", 0, 9, &list, &n, err) == 0 && n == 3 && list[2] == 9);
    free(list);
    CHECK(jb_parse_long_list("0,10", 0, 9, &list, &n, err) == -1);
    CHECK(jb_parse_dims("4x4", 3, dims, &nd, err) == 0 && nd == 2 && dims[0] == 4 && dims[1] == 4);
    CHECK(jb_parse_dims("2x3x4", 3, dims, &nd, err) == 0 && nd == 3 && dims[2] == 4);
    CHECK(jb_parse_dims("2x3x4x5", 3, dims, &nd, err) == -1);
    CHECK(jb_parse_dims("4x", 3, dims, &nd, err) == -1);
    CHECK(jb_parse_dims("0x4", 3, dims, &nd, err) == -1);
    /* products that wrap an int or a 64-bit count are refused, not wrapped */
    CHECK(jb_parse_dims("65536x65536", 3, dims, &nd, err) == -1 && strstr(err, "more than 2^31 - 1 points"));
    CHECK(jb_parse_dims("1048576x1048576x1048576", 3, dims, &nd, err) == -1);
    CHECK(jb_parse_dims("46340x46340", 3, dims, &nd, err) == 0 && dims[0] == 46340);

    static const char *const names[] = {"two-phase", "irecv-isend", "isend-recv", "sendrecv", NULL};
    static const char *const letters[] = {"a", "b", "c", "d", NULL};
    int sel[4];
    CHECK(jb_parse_name_list("a,sendrecv", names, letters, sel, err) == 0 && sel[0] && !sel[1] && !sel[2] && sel[3]);
    CHECK(jb_parse_name_list("all", names, NULL, sel, err) == 0 && sel[0] && sel[1] && sel[2] && sel[3]);
    CHECK(jb_parse_name_list("e", names, letters, sel, err) == -1 && strstr(err, "unknown name 'e'"));
}

/* Options are strict: what strtol and strtod would skip or accept is an error. */
static void test_strict_numbers(void)
{
    char err[JB_ERRLEN];
    long v;
    size_t z;
    double d;
    CHECK(jb_parse_long(" 5", 1, 20, &v, err) == -1 && strstr(err, "' 5' is not a whole number"));
    CHECK(jb_parse_long("5 ", 1, 20, &v, err) == -1);
    CHECK(jb_parse_long("+5", 1, 20, &v, err) == -1);
    CHECK(jb_parse_long("-5", -9, 20, &v, err) == 0 && v == -5);
    CHECK(jb_parse_long("99999999999999999999", 1, 20, &v, err) == -1);
    CHECK(jb_parse_long(NULL, 1, 20, &v, err) == -1);
    CHECK(jb_parse_size(" -1", &z, err) == -1 && strstr(err, "is not a size"));
    CHECK(jb_parse_size(" 4", &z, err) == -1);
    CHECK(jb_parse_size("18446744073709551616", &z, err) == -1);
    CHECK(jb_parse_size("17179869184G", &z, err) == -1); /* 2^34 G wraps 64 bits */
    CHECK(jb_parse_double("0.25", 0, 1, &d, err) == 0 && d == 0.25);
    CHECK(jb_parse_double("1e3", 0, 1e7, &d, err) == 0 && d == 1000);
    CHECK(jb_parse_double("inf", 0, 1e7, &d, err) == -1 && strstr(err, "'inf' is not a finite number"));
    CHECK(jb_parse_double("nan", 0, 1, &d, err) == -1);
    CHECK(jb_parse_double("-inf", -1e9, 1, &d, err) == -1);
    CHECK(jb_parse_double("1e999", 0, 1e300, &d, err) == -1);
    CHECK(jb_parse_double(" 1", 0, 2, &d, err) == -1);
    CHECK(jb_parse_double("1x", 0, 2, &d, err) == -1);
    CHECK(jb_parse_double("2", 0, 1, &d, err) == -1 && strstr(err, "out of range"));
}

static void test_checked_arithmetic(void)
{
    size_t r = 7;
    CHECK(jb_mul(1 << 20, 1 << 20, &r) == 0 && r == (size_t)1 << 40);
    CHECK(jb_mul((size_t)1 << 32, (size_t)1 << 32, &r) == -1 && r == (size_t)1 << 40); /* untouched */
    CHECK(jb_mul(0, (size_t)-1, &r) == 0 && r == 0);
    CHECK(jb_add((size_t)-1, 1, &r) == -1);
    CHECK(jb_add((size_t)-2, 1, &r) == 0 && r == (size_t)-1);
    jb_memory m = {0};
    jb_memory_add(&m, "--size", 2, 4096);
    jb_memory_add(&m, "--calls", 1000, 8);
    CHECK(m.bytes == 16192 && !m.overflow && strcmp(m.largest, "--size") == 0 && m.largest_bytes == 8192);
    jb_memory_add(&m, "--work", (size_t)1 << 62, 8);
    CHECK(m.overflow && strcmp(m.largest, "--work") == 0);

}

static void test_summary(void)
{
    double x[10] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    jb_summary s;
    jb_summarize(x, 10, &s);
    CHECK(s.n == 10 && s.min == 1 && s.max == 10);
    CHECK_NEAR(s.mean, 5.5, 1e-12);
    CHECK_NEAR(s.stddev, 3.0276503540974917, 1e-12); /* sample standard deviation */
    CHECK_NEAR(s.p50, 5.5, 1e-12);                    /* numpy.percentile(range(1, 11), q) */
    CHECK_NEAR(s.p90, 9.1, 1e-12);
    CHECK_NEAR(s.p99, 9.91, 1e-12);
    CHECK_NEAR(s.p999, 9.991, 1e-12);
    CHECK(x[0] == 10); /* input untouched */
    double one = 42;
    jb_summarize(&one, 1, &s);
    CHECK(s.p50 == 42 && s.p999 == 42 && s.stddev == 0);
    jb_summarize(x, 0, &s);
    CHECK(isnan(s.mean));
}

static void test_histogram(void)
{
    jb_hist a, b;
    jb_hist_clear(&a);
    jb_hist_clear(&b);
    /* bin edges: 20 per decade from 1e-3 us */
    CHECK(jb_hist_bin(0.0) == 0);
    CHECK(jb_hist_bin(NAN) == 0);
    CHECK(jb_hist_bin(1e-3) == 1);
    CHECK(jb_hist_bin(1.0) == 1 + 3 * JB_HIST_BINS_PER_DECADE);
    CHECK(jb_hist_bin(1e12) == JB_HIST_NBINS - 1);
    for (int bin = 1; bin < JB_HIST_NBINS - 1; bin++) {
        double mid = sqrt(jb_hist_lower(bin) * jb_hist_upper(bin));
        CHECK(jb_hist_bin(mid) == bin);
    }
    for (int i = 0; i < 99; i++)
        jb_hist_add(&a, 10.0);
    jb_hist_add(&b, 1000.0);
    /* merging is summing counts (what MPI_Reduce with MPI_SUM does) */
    for (int i = 0; i < JB_HIST_NBINS; i++)
        a.count[i] += b.count[i];
    CHECK(jb_hist_total(&a) == 100);
    CHECK(fabs(jb_hist_percentile(&a, 50) / 10.0 - 1) < 0.06);
    CHECK(fabs(jb_hist_percentile(&a, 99) / 10.0 - 1) < 0.06);   /* 99th of 100: still 10 */
    CHECK(fabs(jb_hist_percentile(&a, 100) / 1000.0 - 1) < 0.06);
}

static void test_rng(void)
{
    jb_rng a, b, c;
    jb_rng_seed(&a, 7, 3);
    jb_rng_seed(&b, 7, 3);
    jb_rng_seed(&c, 7, 4);
    int same = 1, differs = 0, in_range = 1, hits = 0;
    for (int i = 0; i < 100000; i++) {
        double u = jb_rng_uniform(&a);
        same &= u == jb_rng_uniform(&b);
        differs |= u != jb_rng_uniform(&c);
        in_range &= u >= 0 && u < 1;
        hits += u < 0.1;
    }
    CHECK(same && differs && in_range);
    CHECK(abs(hits - 10000) < 500); /* 5 standard deviations */
    /* a shuffle is a permutation, and each of 3! orders comes about 1/6 of the time */
    long perm[5], seen[6] = {0};
    int permutation = 1;
    for (int t = 0; t < 6000; t++) {
        jb_rng_shuffle(&a, perm, 3);
        permutation &= perm[0] + perm[1] + perm[2] == 3 && perm[0] != perm[1] && perm[1] != perm[2] &&
                       perm[0] != perm[2];
        seen[perm[0] * 2 + (perm[1] > perm[2])]++;
    }
    CHECK(permutation);
    for (int k = 0; k < 6; k++)
        CHECK(labs(seen[k] - 1000) < 150); /* 5 standard deviations of 1000 */
    jb_rng_shuffle(&a, perm, 1);
    CHECK(perm[0] == 0);
}

/* gamma variates: mean, sd and skewness (2 / sqrt(shape)) of 400000 draws, for Tabe's
 * profile (shape 8.9) and a shape below 1 (0.25, the boost); sd 0 is the mean itself */
static void test_gamma(void)
{
    const double cases[][2] = {{173, 58}, {10, 20}};
    for (int k = 0; k < 2; k++) {
        double mean = cases[k][0], sd = cases[k][1], n = 400000, s1 = 0, s2 = 0, s3 = 0;
        int positive = 1;
        jb_rng r;
        jb_rng_seed(&r, 1, (uint64_t)k);
        for (int i = 0; i < (int)n; i++) {
            double x = jb_rng_gamma(&r, mean, sd);
            positive &= x > 0;
            s1 += x;
            s2 += x * x;
            s3 += x * x * x;
        }
        double m = s1 / n, var = s2 / n - m * m, skew = (s3 / n - 3 * m * var - m * m * m) / pow(var, 1.5);
        CHECK(positive);
        CHECK_NEAR(m, mean, 0.01 * mean);
        CHECK_NEAR(sqrt(var), sd, 0.02 * sd);
        CHECK_NEAR(skew, 2 * sd / mean, 0.1 * 2 * sd / mean);
    }
    jb_rng r;
    jb_rng_seed(&r, 1, 0);
    CHECK(jb_rng_gamma(&r, 5, 0) == 5);
}

static void test_json(void)
{
    jb_json j;
    jb_json_init(&j);
    jb_json_object(&j, NULL);
    jb_json_str(&j, "name", "a\"b\\c\nd\x01");
    jb_json_num(&j, "nan", NAN);
    jb_json_int(&j, "n", -3);
    jb_json_array(&j, "empty");
    jb_json_end(&j);
    double v[2] = {1.5, INFINITY};
    jb_json_nums(&j, "v", v, 2);
    jb_json_end(&j);
    CHECK(strstr(j.buf, "\"name\": \"a\\\"b\\\\c\\nd\\u0001\"") != NULL);
    CHECK(strstr(j.buf, "\"nan\": null") != NULL);
    CHECK(strstr(j.buf, "\"empty\": []") != NULL);
    CHECK(strstr(j.buf, "\"v\": [1.5, null]") != NULL);
    CHECK(j.buf[0] == '{' && j.buf[j.len - 1] == '}' && j.depth == 0);
    jb_json_free(&j);
}

/* Runs a schedule to its end: every round's order must be a permutation of the variants,
 * each variant's shares must cover its calls 0 .. calls-1 once, in order, with its warm-up
 * before the first share only.  Returns the turns taken; orders[r * variants + i] the order. */
static long run_schedule(jb_schedule *s, int *orders, long *timed)
{
    long turns = 0, *next = calloc((size_t)s->variants, sizeof *next);
    int *seen = calloc((size_t)s->variants, sizeof *seen);
    for (int v = 0; v < s->variants; v++)
        timed[v] = 0;
    while (jb_schedule_next(s)) {
        int v = s->variant;
        if (s->at == 0)
            memset(seen, 0, (size_t)s->variants * sizeof *seen);
        CHECK(v >= 0 && v < s->variants && !seen[v]); /* once a round */
        seen[v] = 1;
        orders[s->round * s->variants + s->at] = v;
        CHECK(s->first == next[v]);                   /* its calls in order, none skipped */
        CHECK(s->warm == (s->round == 0 ? s->warmup : 0));
        for (long c = s->first - s->warm; c < s->end; c++)
            timed[v] += c >= 0;
        next[v] = s->end;
        turns++;
    }
    for (int v = 0; v < s->variants; v++)
        CHECK(next[v] == s->calls);
    free(next);
    free(seen);
    return turns;
}

static void test_schedule(void)
{
    enum { V = 7, CALLS = 103, ROUNDS = 10 };
    jb_schedule s;
    int orders[ROUNDS * V], again[ROUNDS * V], other[ROUNDS * V];
    long timed[V];

    /* shuffled: R rounds of V turns, each variant exactly CALLS timed calls */
    CHECK(jb_schedule_init(&s, V, CALLS, 5, ROUNDS, 1, 42) == 0);
    CHECK(run_schedule(&s, orders, timed) == (long)ROUNDS * V);
    for (int v = 0; v < V; v++)
        CHECK(timed[v] == CALLS);
    CHECK(jb_schedule_next(&s) == 0); /* stays done */
    jb_schedule_free(&s);
    /* the same seed gives the same orders; another seed others; not every round alike */
    CHECK(jb_schedule_init(&s, V, CALLS, 5, ROUNDS, 1, 42) == 0);
    run_schedule(&s, again, timed);
    jb_schedule_free(&s);
    CHECK(memcmp(orders, again, sizeof orders) == 0);
    CHECK(jb_schedule_init(&s, V, CALLS, 5, ROUNDS, 1, 43) == 0);
    run_schedule(&s, other, timed);
    jb_schedule_free(&s);
    CHECK(memcmp(orders, other, sizeof orders) != 0);
    int rounds_alike = 1;
    for (int r = 1; r < ROUNDS; r++)
        rounds_alike &= memcmp(orders, orders + r * V, V * sizeof *orders) == 0;
    CHECK(!rounds_alike);
    /* the shares' bounds: floor(calls r / R), so they differ by one call at most */
    CHECK(jb_schedule_share_start(CALLS, ROUNDS, 0) == 0 && jb_schedule_share_start(CALLS, ROUNDS, ROUNDS) == CALLS);
    CHECK(jb_schedule_share_start(CALLS, ROUNDS, 3) == 30);
    CHECK(jb_schedule_share_start(100000000, 1000000, 999999) == 99999900); /* no overflow at the limits */

    /* given: one round, the variants in their own order, each all its calls in a row */
    CHECK(jb_schedule_init(&s, V, CALLS, 5, ROUNDS, 0, 42) == 0);
    CHECK(s.rounds == 1 && run_schedule(&s, orders, timed) == V);
    for (int v = 0; v < V; v++)
        CHECK(orders[v] == v && timed[v] == CALLS);
    jb_schedule_free(&s);

    /* more rounds than calls: one call a round, no empty share */
    CHECK(jb_schedule_init(&s, 3, 4, 0, 1000, 1, 1) == 0);
    CHECK(s.rounds == 4 && run_schedule(&s, orders, timed) == 12);
    CHECK(timed[0] == 4 && timed[1] == 4 && timed[2] == 4);
    jb_schedule_free(&s);

    /* the record replays the orders from the seed */
    CHECK(jb_schedule_init(&s, 3, 10, 0, 2, 1, 42) == 0);
    int first[6];
    run_schedule(&s, first, timed);
    jb_json j;
    jb_json_init(&j);
    jb_json_object(&j, NULL);
    jb_schedule_record(&s, &j);
    jb_json_end(&j);
    char expected[64];
    snprintf(expected, sizeof expected, "[[%d,%d,%d],[%d,%d,%d]]", first[0], first[1], first[2], first[3], first[4],
             first[5]);
    size_t kept = 0; /* the text without its layout */
    for (size_t i = 0; j.buf[i]; i++)
        if (j.buf[i] != ' ' && j.buf[i] != '\n')
            j.buf[kept++] = j.buf[i];
    j.buf[kept] = '\0';
    CHECK(strstr(j.buf, expected) != NULL && strstr(j.buf, "\"method\":\"shuffled\"") != NULL);
    jb_json_free(&j);
    jb_schedule_free(&s);
}

static void test_median_interval_and_stopping(void)
{
    /* Bin(100, 1/2): 2 P(<= 39) = 0.035, 2 P(<= 40) = 0.057, so [x(40), x(61)] */
    CHECK(jb_median_ci_rank(5) == 0 && jb_median_ci_rank(6) == 1 && jb_median_ci_rank(100) == 40);
    CHECK(jb_median_ci_rank(1001) == 469); /* (1001 - 1.959964 sqrt(1001)) / 2, rounded down */
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1;
    CHECK(fabs(jb_median_ci_halfwidth(x, 100) - 21.0 / 2 / 50.5) < 1e-12);
    CHECK(isinf(jb_median_ci_halfwidth(x, 5)));

    /* a settled variant takes no more turns; the others go on; all settled ends the run */
    jb_schedule s;
    long turns[3] = {0, 0, 0};
    CHECK(jb_schedule_init(&s, 3, 40, 0, 4, 1, 9) == 0);
    int starts = 0;
    while (jb_schedule_next(&s)) {
        turns[s.variant]++;
        starts += s.round_start;
        if (s.variant == 1 && s.round == 1)
            jb_schedule_settle(&s, 1);
    }
    CHECK(turns[0] == 4 && turns[1] == 2 && turns[2] == 4 && starts == 4);
    jb_schedule_free(&s);
    CHECK(jb_schedule_init(&s, 2, 40, 0, 4, 1, 9) == 0);
    long all = 0;
    while (jb_schedule_next(&s)) {
        all++;
        jb_schedule_settle(&s, s.variant);
    }
    CHECK(all == 2);
    jb_schedule_free(&s);
}

static void test_binomial_and_holm(void)
{
    /* against scipy.stats.binom.sf(k - 1, n, p) */
    CHECK(fabs(jb_binomial_upper(100, 30, 0.2) / 0.01124897872099158 - 1) < 1e-9);
    CHECK(fabs(jb_binomial_upper(1000, 10, 0.001) / 1.074283386846483e-07 - 1) < 1e-9);
    CHECK(fabs(jb_binomial_upper(100000, 700, 0.005) / 1.579191494325259e-17 - 1) < 1e-7);
    CHECK(jb_binomial_upper(200, 50, 0.25) == 1); /* at its share: not above it */
    CHECK(jb_binomial_upper(100, 0, 0.2) == 1 && jb_binomial_upper(100, 5, 1.0) == 1);
    CHECK(jb_binomial_upper(10, 11, 0.5) == 0);
    /* Holm at 5 % over 5: 0.001 <= 0.01, 0.004 <= 0.0125, 0.03 > 0.05 / 3 stops */
    double p[4] = {0.004, 0.5, 0.001, 0.03};
    size_t order[4];
    int rejected[4];
    CHECK(jb_holm(p, 4, 5, 0.05, order, rejected) == 2);
    CHECK(rejected[0] && !rejected[1] && rejected[2] && !rejected[3]);
    CHECK(jb_holm(p, 4, 1000, 0.05, order, rejected) == 0); /* the family's size counts */
}

/* The pairs benchmark's statistics, now the core's: the median sorts in place; the quantile is
 * the normal's (scipy.stats.norm.isf to 6 digits). */
static void test_median_and_normal_quantile(void)
{
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    CHECK(jb_median(odd, 3) == 2);
    CHECK(odd[0] == 1 && odd[1] == 2 && odd[2] == 3);
    CHECK(jb_median(even, 4) == 2.5);
    CHECK(isnan(jb_median(even, 0)));
    double a = 1, b = 2;
    CHECK(jb_compare_doubles(&a, &b) < 0 && jb_compare_doubles(&b, &a) > 0 && jb_compare_doubles(&a, &a) == 0);
    CHECK_NEAR(jb_normal_upper_quantile(0.025), 1.959964, 1e-6);
    CHECK_NEAR(jb_normal_upper_quantile(0.5), 0, 1e-9);
    CHECK_NEAR(jb_normal_upper_quantile(1e-9), 5.997807, 1e-6);
}

/* a file of a test root, its folders made on the way */
static void put(const char *root, const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    for (char *slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(full, 0700);
        *slash = '/';
    }
    FILE *f = fopen(full, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_hardware(void)
{
    char root[] = "/tmp/jb-hardware-XXXXXX", facts[512];
    CHECK(mkdtemp(root) != NULL);
    /* an x86 guest: two CPUs listed, the first CPU's fields taken; four caches; no hypervisor named in sysfs */
    put(root, "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
                               "model name\t: AMD EPYC 7B13 64-Core Processor\nstepping\t: 1\n"
                               "flags\t\t: fpu sse2 hypervisor avx2\n\nprocessor\t: 1\nvendor_id\t: Other\n"
                               "cpu family\t: 23\n");
    const char *types[] = {"Data", "Instruction", "Unified", "Unified"}, *levels[] = {"1", "1", "2", "3"},
               *sizes[] = {"32K", "32K", "512K", "32768K"};
    for (int k = 0; k < 4; k++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", k);
        put(root, path, levels[k]);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", k);
        put(root, path, types[k]);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", k);
        put(root, path, sizes[k]);
    }
    put(root, "/sys/devices/system/cpu/online", "0-1,4,6-7\n");
    jb_hardware_facts(root, facts, sizeof facts);
    CHECK(strcmp(facts, "vendor=AuthenticAMD family=25 model=1 stepping=1 l1d=32K l1i=32K l2=512K l3=32768K "
                        "cpus=5 hypervisor=yes") == 0);
    /* Xen names itself; a line cut to the room given ends at a whole word */
    put(root, "/sys/hypervisor/type", "xen\n");
    jb_hardware_facts(root, facts, sizeof facts);
    CHECK(strstr(facts, " hypervisor=xen") != NULL);
    jb_hardware_facts(root, facts, 40);
    CHECK(strcmp(facts, "vendor=AuthenticAMD family=25 model=1") == 0);
    /* an Arm node: its implementer and part, no flags to say whether a hypervisor runs */
    put(root, "/proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
                               "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\nCPU revision\t: 1\n");
    remove(strcat(strcpy(facts, root), "/sys/hypervisor/type"));
    jb_hardware_facts(root, facts, sizeof facts);
    CHECK(strcmp(facts, "implementer=0x41 part=0xd0c variant=0x1 revision=1 l1d=32K l1i=32K l2=512K l3=32768K "
                        "cpus=5 hypervisor=unknown") == 0);
    /* nothing readable: nothing known, no failure */
    jb_hardware_facts("/nonexistent-root", facts, sizeof facts);
    CHECK(strcmp(facts, "hypervisor=unknown") == 0);
}

int main(void)
{
    test_sizes();
    test_numbers_and_names();
    test_strict_numbers();
    test_checked_arithmetic();
    test_summary();
    test_histogram();
    test_rng();
    test_gamma();
    test_json();
    test_schedule();
    test_median_interval_and_stopping();
    test_binomial_and_holm();
    test_median_and_normal_quantile();
    test_hardware();
    return check_summary();
}
