/* jb-pairs: every node pair's latency and bandwidth, as JSC's LinkTest and NVIDIA's ClusterKit
 * measure them, and the pairs and nodes that stand out.
 *
 * One task per node (the first of each) takes part.  The pairs meet in the rounds of the
 * round-robin tournament (schedule.c): each round's pairs are disjoint and run at once.  A pair
 * measures latency by a ping-pong of one small message (osu_latency's) and bandwidth by osu_bw's
 * window, the lower node timing.  The calls are split over --passes tournaments, each over the
 * nodes shuffled afresh, so that a pair meets in different company at different times and what
 * drifts on the machine does not follow a round.  Every node holds its own row of the matrix,
 * never more: rank 0 gathers per-node summaries and the outlier pairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cycle.h"
#include "jb_core.h"
#include "rule.h"
#include "schedule.h"

static const char usage[] =
    "Every node pair's latency and bandwidth, one task per node, in rounds of disjoint pairs.\n"
    "  --latency-size B      bytes of the latency ping-pong [8]\n"
    "  --bandwidth-size B    bytes of each message of the bandwidth window [1M]\n"
    "  --window N            messages in flight of the bandwidth window (osu_bw's 64) [16]\n"
    "  --windows N           timed windows per pair (--calls: timed ping-pongs) [30]\n"
    "  --passes P            tournaments over the nodes shuffled afresh (--seed), each taking\n"
    "                        1/P of the calls and windows [3]\n"
    "  --rate A              false-alarm rate of naming any pair, and of naming any node [0.01]\n"
    "  --matrix FILE         every pair, 'a,b,latency_us,bandwidth_mb_s' a line, each node\n"
    "                        writing its own rows (MPI-IO)\n";

#define OUTLIERS_SENT 64  /* outlier pairs a node reports to rank 0; the rest are counted */
#define MATRIX_IN_JSON 32 /* up to this many nodes the JSON holds the whole matrix */
#define MATRIX_LINE 48    /* bytes of one --matrix line: fixed, so that each node knows its offset */

typedef struct {
    size_t latency_size, bandwidth_size;
    long window, windows, passes;
    double rate;
    const char *matrix;
} pairs_options;

/* One pair's figures, as the lower node measured them. */
typedef struct {
    double latency_us, bandwidth_mb_s;
    /* the near ends of the two medians' distribution-free 95 % intervals (latency: lower, bandwidth:
     * upper; over passes, the nearest): a pair is named only if it stands out by more than its own
     * measurement resolves */
    double latency_low, bandwidth_high;
} pair_figures;

/* One outlier pair, sent to rank 0. */
typedef struct {
    int a, b;
    double latency_us, bandwidth_mb_s;
    int slow_latency, slow_bandwidth;
} outlier_pair;

/* What a node sends rank 0. */
typedef struct {
    char host[64];
    double latency_p50, bandwidth_p50, latency_max, bandwidth_min;
    long outliers, slow_latency, slow_bandwidth; /* its outlier pairs: all, and those slow in each figure */
} node_summary;

static void parse(jb_ctx *ctx, int argc, char **argv, pairs_options *o)
{
    static const struct option longopts[] = {
        {"latency-size", required_argument, NULL, 'l'}, {"bandwidth-size", required_argument, NULL, 'b'},
        {"window", required_argument, NULL, 'w'},       {"windows", required_argument, NULL, 'W'},
        {"rate", required_argument, NULL, 'r'},         {"matrix", required_argument, NULL, 'm'},
        {"passes", required_argument, NULL, 'P'},       JB_COMMON_LONGOPTS};
    int c;
    char err[JB_ERRLEN];
    *o = (pairs_options){.latency_size = 8, .bandwidth_size = 1 << 20, .window = 16, .windows = 30, .passes = 3,
                         .rate = 0.01};
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'l': jb_option(ctx, "--latency-size", jb_parse_size(optarg, &o->latency_size, err), err); break;
        case 'b': jb_option(ctx, "--bandwidth-size", jb_parse_size(optarg, &o->bandwidth_size, err), err); break;
        case 'w': jb_option(ctx, "--window", jb_parse_long(optarg, 1, 1024, &o->window, err), err); break;
        case 'W': jb_option(ctx, "--windows", jb_parse_long(optarg, 1, 1L << 30, &o->windows, err), err); break;
        case 'r': jb_option(ctx, "--rate", jb_parse_double(optarg, 1e-12, 0.5, &o->rate, err), err); break;
        case 'm': o->matrix = optarg; break;
        case 'P': jb_option(ctx, "--passes", jb_parse_long(optarg, 1, 1000, &o->passes, err), err); break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    if (o->latency_size > (size_t)1 << 30 || o->bandwidth_size > (size_t)1 << 30)
        jb_fail(ctx, "message sizes above 1G are not supported");
    /* 6 values have a median's 95 % interval, fewer none */
    if (ctx->opt.calls < 6 * o->passes || o->windows < 6 * o->passes)
        jb_fail(ctx, "--calls %ld and --windows %ld give a pass fewer than 6 of each over %ld passes (--passes)",
                ctx->opt.calls, o->windows, o->passes);
    jb_memory m = {0};
    jb_memory_add(&m, "--calls and --windows (the times of one pair)", (size_t)(ctx->opt.calls + o->windows),
                  sizeof(double));
    jb_memory_add(&m, "--window x --bandwidth-size (send and receive buffers)", 2 * (size_t)o->window,
                  o->bandwidth_size + 1);
    jb_memory_add(&m, "the nodes (this node's row of the matrix per pass, and rank 0's summaries)",
                  (size_t)ctx->nodes.nnodes, (size_t)(o->passes + 1) * sizeof(pair_figures) + sizeof(node_summary) +
                  2 * OUTLIERS_SENT * sizeof(outlier_pair) + 2 * sizeof(long));
    jb_memory_check(ctx, &m);
    if (o->matrix)
        jb_check_output(ctx, "--matrix", o->matrix);
}

/* One pass of one pair, both nodes at once: the latency (median of the round trip / 2 over
 * calls ping-pongs) and the bandwidth (window bytes / median window time) with their intervals'
 * near ends, timed by the lower node and shared. */
static pair_figures measure_pair(jb_ctx *ctx, const pairs_options *o, pingpong *p, double *times, long calls,
                                 long windows)
{
    pair_figures f;
    p->n = 1;
    p->size = o->latency_size;
    for (long c = -ctx->opt.warmup; c < calls; c++) {
        double t0 = MPI_Wtime();
        pingpong_cycle(p, MODE_SEND);
        if (c >= 0)
            times[c] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    f.latency_us = jb_median(times, (size_t)calls);
    f.latency_low = times[jb_median_ci_rank((size_t)calls) - 1]; /* x(k): the interval's lower end */
    p->n = (int)o->window;
    p->size = o->bandwidth_size;
    double bytes = (double)o->window * (double)o->bandwidth_size * 1e-6;
    for (long c = -2; c < windows; c++) {
        double t0 = MPI_Wtime();
        pingpong_window(p);
        if (c >= 0)
            times[c] = MPI_Wtime() - t0;
    }
    f.bandwidth_mb_s = bytes / jb_median(times, (size_t)windows);
    f.bandwidth_high = bytes / times[jb_median_ci_rank((size_t)windows) - 1]; /* the fastest end */
    if (p->pinger) /* the lower node timed both: its figures are the pair's */
        MPI_Send(&f, 4, MPI_DOUBLE, p->partner, 0, p->comm);
    else
        MPI_Recv(&f, 4, MPI_DOUBLE, p->partner, 0, p->comm, MPI_STATUS_IGNORE);
    return f;
}

/* The nodes shuffled for pass q (the identity for the first): label[node], from --seed, the same
 * on every node; node_of[label] is its inverse. */
static void shuffle_nodes(unsigned long long seed, long q, long n, long *label, long *node_of)
{
    jb_rng rng;
    jb_rng_seed(&rng, seed, 0x9a125ULL + (uint64_t)q);
    jb_rng_shuffle(&rng, label, n);
    for (long i = 0; q == 0 && i < n; i++)
        label[i] = i;
    for (long i = 0; i < n; i++)
        node_of[label[i]] = i;
}

/* What a run sweeps and how it judges, in the config and in a line. */
static void describe(jb_ctx *ctx, const pairs_options *o, long n, long npairs, long rounds, double k_pair)
{
    jb_json *cfg = &ctx->config;
    jb_json_int(cfg, "nodes", n);
    jb_json_int(cfg, "pairs", npairs);
    jb_json_int(cfg, "rounds", rounds);
    jb_json_int(cfg, "latency_size", (long long)o->latency_size);
    jb_json_int(cfg, "bandwidth_size", (long long)o->bandwidth_size);
    jb_json_int(cfg, "window", o->window);
    jb_json_int(cfg, "windows", o->windows);
    jb_json_int(cfg, "passes", o->passes);
    jb_json_num(cfg, "rate", o->rate);
    jb_json_num(cfg, "k_pair", k_pair);
    jb_json_str(cfg, "schedule", "the round-robin tournament (circle method): n - 1 rounds of disjoint pairs for an even "
                                 "n, n with a bye a round for an odd n; a barrier of the nodes before each round, "
                                 "whose pairs run at once; the first task of each node takes part; passes "
                                 "tournaments, the nodes shuffled afresh for each but the first (--seed)");
    jb_json_str(cfg, "latency", "a pass: the median over its calls (--calls / passes) of a pair's round trip / 2 of one "
                                "message of latency_size (MPI_Send, MPI_Irecv + MPI_Wait), timed by the lower node; "
                                "the pair's: the median over passes");
    jb_json_str(cfg, "bandwidth", "a pass: window x bandwidth_size / the median over its windows of osu_bw's window "
                                  "(window MPI_Isend of separate buffers, one MPI_Waitall, a byte back); the pair's: "
                                  "the median over passes; MB = 1e6 bytes");
    jb_json_str(cfg, "outliers", "on the log scale, centre = the median over nodes of each node's median over its "
                                 "pairs, sigma = 1.4826 x the median over nodes of each node's median absolute "
                                 "deviation from it; a pair is an outlier when its latency is above centre + k_pair "
                                 "sigma, or its bandwidth below centre - k_pair sigma, and so is the near end of its "
                                 "median's distribution-free 95 % interval in every pass; k_pair the normal's upper "
                                 "quantile at rate / (2 pairs) (Bonferroni): the rate holds where the logs of good "
                                 "pairs are normal, and is exceeded under heavier tails.  A node is an outlier when "
                                 "more than half its pairs are, in one figure: no node is named unless a pair is, so "
                                 "at the same rate; of two nodes, a slow pair names both");
    if (ctx->rank == 0)
        printf("# jb-pairs: %ld nodes, %ld pairs in %ld rounds x %ld passes; latency %zu B x %ld calls, bandwidth %ld "
               "x %zu B x %ld windows; outliers at rate %g (k %.2f)\n", n, npairs, rounds, o->passes, o->latency_size,
               ctx->opt.calls, o->window, o->bandwidth_size, o->windows, o->rate, k_pair);

}

/* One node: no pairs to measure, said, and a summary that says so (rank 0). */
static void report_no_pairs(jb_ctx *ctx, long n)
{
    printf("# one node: no pairs to measure (--tasks-per-node K makes virtual nodes of K ranks)\n");
    jb_result_begin(ctx);
    jb_result_str(ctx, "scope", "pairs", 0);
    jb_result_int(ctx, "nodes", n, 1);
    jb_result_int(ctx, "pairs", 0, 1);
    jb_result_int(ctx, "outlier_pairs", 0, 0);
    jb_result_int(ctx, "outlier_nodes", 0, 0);
    jb_result_str(ctx, "named_nodes", "none", 0);
    jb_result_end(ctx);
}

/* This node's row: every pair with node me, measured in each pass's tournament over the nodes
 * shuffled afresh, then the median over passes and, of each interval's near end, the nearest.
 * times holds --calls + --windows values. */
static void measure_row(jb_ctx *ctx, const pairs_options *o, MPI_Comm nodes, long n, long me, double *times,
                        pair_figures *row)
{
    long rounds = pairs_rounds(n);
    pingpong p = {.comm = nodes};
    p.send = jb_alloc(ctx, (size_t)o->window, sizeof *p.send, "--window");
    p.recv = jb_alloc(ctx, (size_t)o->window, sizeof *p.recv, "--window");
    p.req = jb_alloc(ctx, (size_t)o->window, sizeof *p.req, "--window");
    size_t largest = o->bandwidth_size > o->latency_size ? o->bandwidth_size : o->latency_size;
    for (long k = 0; k < o->window; k++) {
        p.send[k] = jb_alloc(ctx, largest + 1, 1, "--bandwidth-size");
        p.recv[k] = jb_alloc(ctx, largest + 1, 1, "--bandwidth-size");
    }
    /* each pass's figures of this node's pairs, then the pair's over the passes */
    pair_figures *pass_row = jb_alloc(ctx, (size_t)(n * o->passes), sizeof *pass_row, "the nodes x --passes");
    long *label = jb_alloc(ctx, (size_t)n, sizeof *label, "the nodes"),
         *node_of = jb_alloc(ctx, (size_t)n, sizeof *node_of, "the nodes");
    for (long q = 0; q < o->passes; q++) {
        long calls = ctx->opt.calls / o->passes + (q < ctx->opt.calls % o->passes),
             windows = o->windows / o->passes + (q < o->windows % o->passes);
        shuffle_nodes(ctx->opt.seed, q, n, label, node_of);
        for (long r = 0; r < rounds; r++) {
            jb_watch("pass %ld of %ld, round %ld of %ld,", q + 1, o->passes, r + 1, rounds);
            MPI_Barrier(nodes); /* a round's pairs at once */
            long partner = pairs_partner(n, r, label[me]);
            if (partner < 0)
                continue;
            partner = node_of[partner];
            p.partner = (int)partner;
            p.pinger = me < partner;
            pass_row[q * n + partner] = measure_pair(ctx, o, &p, times, calls, windows);
        }
    }
    for (long j = 0; j < n; j++) {
        row[j].latency_us = row[j].bandwidth_mb_s = NAN;
        if (j == me)
            continue;
        row[j].latency_low = HUGE_VAL;
        row[j].bandwidth_high = 0;
        for (long q = 0; q < o->passes; q++) {
            const pair_figures *f = &pass_row[q * n + j];
            times[q] = f->latency_us;
            times[o->passes + q] = f->bandwidth_mb_s;
            row[j].latency_low = fmin(row[j].latency_low, f->latency_low);
            row[j].bandwidth_high = fmax(row[j].bandwidth_high, f->bandwidth_high);
        }
        row[j].latency_us = jb_median(times, (size_t)o->passes);
        row[j].bandwidth_mb_s = jb_median(times + o->passes, (size_t)o->passes);
    }
    free(pass_row);
    free(label);
    free(node_of);
    for (long k = 0; k < o->window; k++) {
        free(p.send[k]);
        free(p.recv[k]);
    }
    free(p.send);
    free(p.recv);
    free(p.req);
}

/* The bounds of an outlier, on the log scale: the robust centre and scale over the nodes. */
typedef struct {
    double lat_centre, lat_sigma, bw_centre, bw_sigma;
} outlier_bounds;

/* This node's verdict on its pairs, from its row and the robust centre and scale over the nodes. */
typedef struct {
    node_summary summary;
    outlier_pair found[OUTLIERS_SENT]; /* its outlier pairs with higher nodes, the first OUTLIERS_SENT */
    int sent;
    long pairs;                        /* its outlier pairs with higher nodes: each pair counted once */
} node_outliers;

/* A pair is an outlier when its latency is above, or its bandwidth below, the centre over the
 * nodes by k_pair robust sigmas (bounds, on the log scale), and so is the near end of its own
 * interval in every pass.  Collective over nodes. */
static void find_outliers(jb_ctx *ctx, MPI_Comm nodes, const pair_figures *row, long n, long me, double k_pair,
                          outlier_bounds *at, node_outliers *out)
{
    size_t others = (size_t)(n - 1);
    double *lat = jb_alloc(ctx, others, sizeof *lat, "the nodes"), *bw = jb_alloc(ctx, others, sizeof *bw, "the nodes"),
           *work = jb_alloc(ctx, others, sizeof *work, "the nodes"),
           *medians = me == 0 ? jb_alloc(ctx, (size_t)n, sizeof *medians, "the nodes") : NULL;
    for (long j = 0, i = 0; j < n; j++)
        if (j != me) {
            lat[i] = log(row[j].latency_us);
            bw[i++] = log(row[j].bandwidth_mb_s);
        }
    jb_robust_scale(nodes, lat, work, others, medians, &at->lat_centre, &at->lat_sigma);
    jb_robust_scale(nodes, bw, work, others, medians, &at->bw_centre, &at->bw_sigma);
    node_summary *mine = &out->summary;
    *mine = (node_summary){.latency_max = 0, .bandwidth_min = HUGE_VAL};
    int len;
    MPI_Get_processor_name(mine->host, &len); /* at most MPI_MAX_PROCESSOR_NAME; the summary keeps 63 */
    mine->host[sizeof mine->host - 1] = '\0';
    out->sent = 0;
    out->pairs = 0;
    for (long j = 0; j < n; j++) {
        if (j == me)
            continue;
        double l = row[j].latency_us, b = row[j].bandwidth_mb_s;
        mine->latency_max = fmax(mine->latency_max, l);
        mine->bandwidth_min = fmin(mine->bandwidth_min, b);
        /* the pair and the near end of its own interval in every pass beyond the bound */
        int slow_l = at->lat_sigma > 0 && log(l) > at->lat_centre + k_pair * at->lat_sigma &&
                     log(row[j].latency_low) > at->lat_centre + k_pair * at->lat_sigma,
            slow_b = at->bw_sigma > 0 && log(b) < at->bw_centre - k_pair * at->bw_sigma &&
                     log(row[j].bandwidth_high) < at->bw_centre - k_pair * at->bw_sigma;
        if (!(slow_l || slow_b))
            continue;
        mine->outliers++;
        mine->slow_latency += slow_l;
        mine->slow_bandwidth += slow_b;
        if (j > me) {
            out->pairs++;
            if (out->sent < OUTLIERS_SENT)
                out->found[out->sent++] = (outlier_pair){(int)me, (int)j, l, b, slow_l, slow_b};
        }
    }
    mine->latency_p50 = exp(jb_median(lat, others));
    mine->bandwidth_p50 = exp(jb_median(bw, others));
    free(lat);
    free(bw);
    free(work);
    free(medians);
}

/* What rank 0 of the nodes learns of them all: every node's summary, the outlier pairs each sent
 * (at most OUTLIERS_SENT a node) and the count of all, and for a small job the matrix. */
typedef struct {
    node_summary *summaries;
    outlier_pair *outliers;
    long listed;         /* the outlier pairs sent */
    long outlier_pairs;  /* every node's, counted */
    pair_figures *matrix; /* n x n, or NULL beyond MATRIX_IN_JSON nodes */
} gathered;

/* Collective over nodes; the figures on rank 0 of nodes, whose arrays the caller frees. */
static gathered gather(jb_ctx *ctx, MPI_Comm nodes, long n, long me, const pair_figures *row,
                       const node_outliers *mine)
{
    gathered g = {0};
    int nn = (int)n, *counts = NULL, *displs = NULL;
    if (me == 0) {
        g.summaries = jb_alloc(ctx, (size_t)n, sizeof *g.summaries, "the nodes");
        counts = jb_alloc(ctx, (size_t)n, sizeof *counts, "the nodes");
        displs = jb_alloc(ctx, (size_t)n, sizeof *displs, "the nodes");
    }
    MPI_Gather(&mine->summary, (int)sizeof mine->summary, MPI_BYTE, g.summaries, (int)sizeof mine->summary,
               MPI_BYTE, 0, nodes);
    MPI_Reduce(&mine->pairs, &g.outlier_pairs, 1, MPI_LONG, MPI_SUM, 0, nodes);
    int bytes = mine->sent * (int)sizeof *mine->found;
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, nodes);
    long total = 0;
    for (int i = 0; me == 0 && i < nn; i++) {
        displs[i] = (int)total;
        total += counts[i];
    }
    if (me == 0)
        g.outliers = jb_alloc(ctx, (size_t)total + 1, 1, "the outlier pairs");
    MPI_Gatherv(mine->found, bytes, MPI_BYTE, g.outliers, counts, displs, MPI_BYTE, 0, nodes);
    g.listed = total / (long)sizeof *g.outliers;
    if (n <= MATRIX_IN_JSON) {
        if (me == 0)
            g.matrix = jb_alloc(ctx, (size_t)(n * n), sizeof *g.matrix, "the matrix");
        MPI_Gather(row, (int)(n * (long)sizeof *row), MPI_BYTE, g.matrix, (int)(n * (long)sizeof *row), MPI_BYTE, 0,
                   nodes);
    }
    free(counts);
    free(displs);
    return g;
}

/* A result per node; the nodes more than half of whose pairs are outliers in one figure (which
 * explains them: rule.h) named in named, how many returned.  Rank 0. */
static long report_nodes(jb_ctx *ctx, const gathered *g, long n, char *named, size_t room)
{
    size_t at = 0;
    long nodes_named = 0;
    for (long i = 0; i < n; i++) {
        const node_summary *m = &g->summaries[i];
        int outlier = pairs_node_named(n, m->slow_latency, m->slow_bandwidth);
        jb_result_begin(ctx);
        jb_result_str(ctx, "scope", "node", 0);
        jb_result_int(ctx, "node", i, 1);
        jb_result_str(ctx, "host", m->host, 1);
        jb_result_num(ctx, "latency_p50_us", m->latency_p50, 1);
        jb_result_num(ctx, "bandwidth_p50_mb_s", m->bandwidth_p50, 1);
        jb_result_num(ctx, "latency_max_us", m->latency_max, 0);
        jb_result_num(ctx, "bandwidth_min_mb_s", m->bandwidth_min, 0);
        jb_result_int(ctx, "outlier_pairs", m->outliers, 1);
        jb_result_int(ctx, "slow_latency_pairs", m->slow_latency, 0);
        jb_result_int(ctx, "slow_bandwidth_pairs", m->slow_bandwidth, 0);
        jb_result_int(ctx, "outlier", outlier, 1);
        jb_result_end(ctx);
        if (outlier) {
            nodes_named++;
            if (at + 80 < room)
                at += (size_t)snprintf(named + at, room - at, "%s%ld", at ? "," : "", i);
        }
    }
    return nodes_named;
}

/* The result of every pair: the centres, the extremes, the outliers and, for a small job, the
 * matrix.  Rank 0. */
static void report_pairs(jb_ctx *ctx, const pairs_options *o, const gathered *g, long n, long npairs,
                         const outlier_bounds *at, long nodes_named, const char *named)
{
    double worst_lat = 0, worst_bw = HUGE_VAL;
    for (long i = 0; i < n; i++) {
        worst_lat = fmax(worst_lat, g->summaries[i].latency_max);
        worst_bw = fmin(worst_bw, g->summaries[i].bandwidth_min);
    }
    jb_result_begin(ctx);
    jb_result_str(ctx, "scope", "pairs", 0);
    jb_result_int(ctx, "nodes", n, 0);
    jb_result_int(ctx, "pairs", npairs, 0);
    /* the median of the node medians: the outliers' centre */
    jb_result_num(ctx, "latency_p50_us", exp(at->lat_centre), 1);
    jb_result_num(ctx, "bandwidth_p50_mb_s", exp(at->bw_centre), 1);
    jb_result_num(ctx, "latency_max_us", worst_lat, 1);
    jb_result_num(ctx, "bandwidth_min_mb_s", worst_bw, 1);
    jb_result_int(ctx, "outlier_pairs", g->outlier_pairs, 1);
    jb_result_int(ctx, "outlier_nodes", nodes_named, 1);
    jb_result_str(ctx, "named_nodes", nodes_named ? named : "none", 0);
    jb_json *j = jb_result_json(ctx);
    jb_json_array(j, "outliers");
    for (long i = 0; i < g->listed; i++) {
        const outlier_pair *q = &g->outliers[i];
        jb_json_object(j, NULL);
        jb_json_int(j, "a", q->a);
        jb_json_int(j, "b", q->b);
        jb_json_num(j, "latency_us", q->latency_us);
        jb_json_num(j, "bandwidth_mb_s", q->bandwidth_mb_s);
        jb_json_bool(j, "slow_latency", q->slow_latency);
        jb_json_bool(j, "slow_bandwidth", q->slow_bandwidth);
        jb_json_end(j);
    }
    jb_json_end(j);
    if (g->matrix) {
        const char *keys[2] = {"latency_us", "bandwidth_mb_s"};
        double *line = jb_alloc(ctx, (size_t)n, sizeof *line, "the nodes"); /* a row of the matrix */
        jb_json_object(j, "matrix");
        for (int q = 0; q < 2; q++) {
            jb_json_array(j, keys[q]);
            for (long a = 0; a < n; a++) {
                for (long b = 0; b < n; b++)
                    line[b] = q ? g->matrix[a * n + b].bandwidth_mb_s : g->matrix[a * n + b].latency_us;
                jb_json_nums(j, NULL, line, (size_t)n);
            }
            jb_json_end(j);
        }
        jb_json_end(j);
        free(line);
    }
    jb_result_end(ctx);
    printf("# outliers (rate %g): %ld of %ld pairs; nodes: %s\n", o->rate, g->outlier_pairs, npairs,
           nodes_named ? named : "none");
}

/* Each node writes its rows (its pairs with higher nodes) at their place in one file. */
static int write_matrix(jb_ctx *ctx, MPI_Comm comm, const char *path, long n, long me, const pair_figures *row,
                        char *err)
{
    char tmp[4096];
    int rc = snprintf(tmp, sizeof tmp, "%s.jb-tmp-%ld", path, (long)getpid());
    MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, comm);
    if (rc < 0 || (size_t)rc >= sizeof tmp)
        return snprintf(err, JB_ERRLEN, "--matrix: the path is too long"), -1;
    long lines = n - 1 - me;
    char *text = jb_alloc(ctx, (size_t)(lines + 1), MATRIX_LINE + 1, "the matrix's lines"), *at = text;
    if (me == 0)
        at += sprintf(at, "%7s,%7s,%15s,%15s\n", "a", "b", "latency_us", "bandwidth_mb_s");
    for (long j = me + 1; j < n; j++)
        at += sprintf(at, "%7ld,%7ld,%15.4f,%15.4f\n", me, j, fmin(row[j].latency_us, 9.99e9),
                      fmin(row[j].bandwidth_mb_s, 9.99e9));
    /* the header, then node k's n - 1 - k lines for each k before this node */
    MPI_Offset before = me == 0 ? 0 : (MPI_Offset)(1 + me * (n - 1) - me * (me - 1) / 2) * MATRIX_LINE;
    MPI_File f;
    int ok = MPI_File_open(comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &f) ==
             MPI_SUCCESS;
    if (ok) {
        ok = MPI_File_write_at(f, before, text, (int)(at - text), MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        ok &= MPI_File_close(&f) == MPI_SUCCESS;
    }
    free(text);
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (me == 0 && (!all_ok || rename(tmp, path) != 0)) {
        remove(tmp);
        all_ok = 0;
    }
    MPI_Bcast(&all_ok, 1, MPI_INT, 0, comm);
    if (!all_ok)
        snprintf(err, JB_ERRLEN, "--matrix: could not write %s", path);
    return all_ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    pairs_options o;
    jb_init(&ctx, &argc, &argv, "pairs", usage, 200, 10);
    parse(&ctx, argc, argv, &o);
    long n = ctx.nodes.nnodes, rounds = pairs_rounds(n), npairs = n * (n - 1) / 2;
    /* Bonferroni over the pairs' two tests (latency, bandwidth) */
    double k_pair = jb_normal_upper_quantile(o.rate / (2.0 * (double)npairs));
    int leader = ctx.nodes.local_rank == 0;
    MPI_Comm nodes;
    MPI_Comm_split(ctx.world, leader ? 0 : MPI_UNDEFINED, ctx.nodes.node, &nodes);
    describe(&ctx, &o, n, npairs, rounds, k_pair);

    char err[JB_ERRLEN] = "";
    int matrix_failed = 0;
    if (n < 2 && ctx.rank == 0)
        report_no_pairs(&ctx, n);
    if (leader && n >= 2) {
        long me = ctx.nodes.node;
        pair_figures *row = jb_alloc(&ctx, (size_t)n, sizeof *row, "the nodes");
        double *times = jb_alloc(&ctx, (size_t)(ctx.opt.calls + o.windows), sizeof *times, "--calls");
        measure_row(&ctx, &o, nodes, n, me, times, row);
        outlier_bounds bounds;
        node_outliers mine;
        find_outliers(&ctx, nodes, row, n, me, k_pair, &bounds, &mine);
        gathered all = gather(&ctx, nodes, n, me, row, &mine);
        if (o.matrix && write_matrix(&ctx, nodes, o.matrix, n, me, row, err) != 0)
            matrix_failed = 1;
        if (me == 0) {
            char named[1024] = "";
            long nodes_named = report_nodes(&ctx, &all, n, named, sizeof named);
            report_pairs(&ctx, &o, &all, n, npairs, &bounds, nodes_named, named);
        }
        free(all.summaries);
        free(all.outliers);
        free(all.matrix);
        free(row);
        free(times);
    }
    if (nodes != MPI_COMM_NULL)
        MPI_Comm_free(&nodes);
    jb_fail_if_any(&ctx, matrix_failed, "%s", err);
    return jb_finish(&ctx);
}
