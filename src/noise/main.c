/* jb-noise: what the operating system takes from each core, measured by a
 * selfish-detour probe on every task at once (launch one task per core), and
 * summarised per node: how often (rate), how long (length distribution) and how
 * regularly (period) the cores are interrupted.  This is the noise that the
 * all-to-all study (Tabe et al., Figure 4: interrupts on one node over time) and
 * the halo study blame for a per-call MAX above the AVG; --trace writes rank 0's
 * detours in the trace format of `jitterbench simulate ... --interrupt-trace`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detour.h"
#include "jb_core.h"

static const char usage[] =
    "Selfish-detour noise probe: every task spins reading the clock and records each gap.\n"
    "  --duration S          seconds each task probes [5]\n"
    "  --threshold US        a step between clock reads longer than this is a detour\n"
    "                        [20 x the cost of one clock read, at least 0.5]\n"
    "  --max-detours N       detours kept per task (the rest are counted) [100000]\n"
    "  --trace FILE          rank 0's detours, 'start_us length_us' a line, for the simulators\n";

/* One node's summary, sent by its first task to rank 0. */
typedef struct {
    char host[64];
    int tasks;
    long detours, missed;
    double lost_s, length_p50, length_p99, length_max, period_p50, regularity;
} node_summary;

/* The median step between successive detours, and the fraction of steps within
 * 10 % of it: a periodic interrupter shows as a period with regularity near 1. */
static void periodicity(const detour_trace *t, double *steps, double *period, double *regularity)
{
    *period = *regularity = 0;
    if (t->count < 3)
        return;
    long n = t->count - 1, near = 0;
    for (long i = 0; i < n; i++)
        steps[i] = t->start[i + 1] - t->start[i];
    jb_summary s;
    jb_summarize(steps, (size_t)n, &s);
    for (long i = 0; i < n; i++)
        near += steps[i] > 0.9 * s.p50 && steps[i] < 1.1 * s.p50;
    *period = s.p50;
    *regularity = (double)near / (double)n;
}

static void write_trace(jb_ctx *ctx, const char *path, const detour_trace *t, double duration_s)
{
    char tmp[4096], err[JB_ERRLEN];
    FILE *f = jb_output_open(path, tmp, sizeof tmp, err);
    if (f) {
        fprintf(f, "# jb-noise: rank 0's detours (start_us length_us), probed for %.6g s\n", duration_s);
        fprintf(f, "# length_us %.6f\n", duration_s * 1e6);
        for (long i = 0; i < t->count; i++)
            fprintf(f, "%.3f %.3f\n", t->start[i] * 1e6, t->length[i] * 1e6);
    }
    if (!f || jb_output_close(f, tmp, path, err) != 0) {
        fprintf(stderr, "jb-noise: error: --trace: %s\n", err);
        ctx->write_failed = 1;
    }
}

/* This node's summary on its first task: detours merged over its tasks. */
static node_summary summarize_node(jb_ctx *ctx, MPI_Comm node, const detour_trace *t, double *steps)
{
    node_summary s;
    memset(&s, 0, sizeof s);
    int len, me;
    MPI_Get_processor_name(s.host, &len);
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &s.tasks);
    jb_hist lengths, all;
    jb_hist_clear(&lengths);
    for (long i = 0; i < t->count; i++)
        jb_hist_add(&lengths, t->length[i] * 1e6);
    double period, regularity, length_max = 0;
    periodicity(t, steps, &period, &regularity);
    for (long i = 0; i < t->count; i++)
        length_max = t->length[i] > length_max ? t->length[i] : length_max;
    double sums[3] = {(double)t->count, (double)t->missed, t->lost}, node_sums[3];
    MPI_Reduce(sums, node_sums, 3, MPI_DOUBLE, MPI_SUM, 0, node);
    MPI_Reduce(lengths.count, all.count, JB_HIST_NBINS, MPI_UINT64_T, MPI_SUM, 0, node);
    MPI_Reduce(&length_max, &s.length_max, 1, MPI_DOUBLE, MPI_MAX, 0, node);
    /* the median task's period and regularity: a few values per task, gathered per node only */
    double mine[2] = {period, regularity}, *each = me == 0 ? jb_alloc(ctx, 2 * (size_t)s.tasks, sizeof *each,
                                                                        "the node's periods") : NULL;
    MPI_Gather(mine, 2, MPI_DOUBLE, each, 2, MPI_DOUBLE, 0, node);
    if (me == 0) {
        double *periods = jb_alloc(ctx, (size_t)s.tasks, sizeof *periods, "the node's periods"), *regs = periods;
        jb_summary p;
        for (int i = 0; i < s.tasks; i++)
            periods[i] = each[2 * i];
        jb_summarize(periods, (size_t)s.tasks, &p);
        s.period_p50 = p.p50;
        for (int i = 0; i < s.tasks; i++)
            regs[i] = each[2 * i + 1];
        jb_summarize(regs, (size_t)s.tasks, &p);
        s.regularity = p.p50;
        free(periods);
        free(each);
        s.detours = (long)node_sums[0];
        s.missed = (long)node_sums[1];
        s.lost_s = node_sums[2];
        /* a histogram's percentile is its bin's middle: never above the longest detour itself */
        s.length_p50 = fmin(jb_hist_percentile(&all, 50), s.length_max * 1e6);
        s.length_p99 = fmin(jb_hist_percentile(&all, 99), s.length_max * 1e6);
    }
    return s;
}

static void report_node(jb_ctx *ctx, int index, const node_summary *s, double duration_s, double threshold_s)
{
    jb_result_begin(ctx);
    jb_result_int(ctx, "node", index, 1);
    jb_result_str(ctx, "host", s->host, 1);
    jb_result_int(ctx, "tasks", s->tasks, 0);
    jb_result_int(ctx, "detours", s->detours, 1);
    jb_result_int(ctx, "detours_not_kept", s->missed, 0);
    jb_result_num(ctx, "rate_per_s", (double)s->detours / s->tasks / duration_s, 1);
    jb_result_num(ctx, "noise_fraction", s->lost_s / s->tasks / duration_s, 1);
    jb_result_num(ctx, "length_p50_us", s->length_p50, 1);
    jb_result_num(ctx, "length_p99_us", s->length_p99, 0);
    jb_result_num(ctx, "length_max_us", s->length_max * 1e6, 1);
    jb_result_num(ctx, "period_us", s->period_p50 * 1e6, 1);
    jb_result_num(ctx, "regularity", s->regularity, 0);
    jb_result_num(ctx, "threshold_us", threshold_s * 1e6, 0);
    jb_result_end(ctx);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"duration", required_argument, NULL, 'd'}, {"threshold", required_argument, NULL, 't'},
        {"max-detours", required_argument, NULL, 'm'}, {"trace", required_argument, NULL, 'T'}, JB_COMMON_LONGOPTS};
    jb_ctx ctx;
    double duration_s = 5, threshold_us = 0;
    long max_detours = 100000;
    const char *trace_path = NULL;
    char err[JB_ERRLEN];
    int c;
    jb_init(&ctx, &argc, &argv, "noise", usage, 1, 0);
    while ((c = jb_getopt(&ctx, longopts)) != -1) {
        switch (c) {
        case 'd': jb_option(&ctx, "--duration", jb_parse_double(optarg, 0.01, 86400, &duration_s, err), err); break;
        case 't': jb_option(&ctx, "--threshold", jb_parse_double(optarg, 0.01, 1e6, &threshold_us, err), err); break;
        case 'm': jb_option(&ctx, "--max-detours", jb_parse_long(optarg, 1, 100000000, &max_detours, err), err); break;
        case 'T': trace_path = optarg; break;
        default: jb_common_option(&ctx, c, optarg);
        }
    }
    jb_options_done(&ctx, optind);
    if (trace_path)
        jb_check_output(&ctx, "--trace", trace_path);
    jb_memory m = {0};
    jb_memory_add(&m, "--max-detours (start, length and step of each)", (size_t)max_detours, 3 * sizeof(double));
    jb_memory_check(&ctx, &m);
    /* the clock read's own cost: a threshold far above it sees only what took the core away */
    double threshold_s = threshold_us > 0 ? threshold_us * 1e-6 : 20 * ctx.timer.overhead;
    if (threshold_us == 0 && threshold_s < 0.5e-6)
        threshold_s = 0.5e-6;

    detour_trace t = {.max = max_detours};
    t.start = jb_alloc(&ctx, (size_t)max_detours, sizeof *t.start, "--max-detours");
    t.length = jb_alloc(&ctx, (size_t)max_detours, sizeof *t.length, "--max-detours");
    double *steps = jb_alloc(&ctx, (size_t)max_detours, sizeof *steps, "--max-detours");

    jb_json *cfg = &ctx.config;
    jb_json_num(cfg, "duration_s", duration_s);
    jb_json_num(cfg, "threshold_us", threshold_s * 1e6);
    jb_json_int(cfg, "max_detours", max_detours);
    jb_json_str(cfg, "method", "selfish detour: each task spins on MPI_Wtime; a step between reads above the "
                               "threshold is a detour (start, length); all tasks probe at once");
    jb_json_str(cfg, "rate_per_s", "detours per task per second, over the node's tasks");
    jb_json_str(cfg, "noise_fraction", "the time in detours over the time probed, over the node's tasks");
    jb_json_str(cfg, "length_p50_us length_p99_us", "percentiles of every detour of the node (merged histogram)");
    jb_json_str(cfg, "period_us regularity", "per task, the median step between successive detours and the "
                                             "fraction of steps within 10 % of it; the node's median task's");
    if (ctx.rank == 0)
        printf("# jb-noise: %d task(s) on %d node(s) probe for %g s; a detour is a clock step above %.3g us\n",
               ctx.size, ctx.nodes.nnodes, duration_s, threshold_s * 1e6);

    jb_watch("the probe (%g s),", duration_s);
    MPI_Barrier(ctx.world); /* every core at once: what one task sees, its neighbours' probes see too */
    detour_probe(&t, duration_s, threshold_s);
    MPI_Barrier(ctx.world);
    if (ctx.rank == 0 && trace_path)
        write_trace(&ctx, trace_path, &t, duration_s);

    MPI_Comm node, leaders;
    MPI_Comm_split(ctx.world, ctx.nodes.node, ctx.rank, &node);
    node_summary mine = summarize_node(&ctx, node, &t, steps);
    MPI_Comm_split(ctx.world, ctx.nodes.local_rank == 0 ? 0 : MPI_UNDEFINED, ctx.rank, &leaders);
    if (leaders != MPI_COMM_NULL) { /* O(nodes) on rank 0 */
        int nleaders;
        MPI_Comm_size(leaders, &nleaders);
        node_summary *all = ctx.rank == 0 ? jb_alloc(&ctx, (size_t)nleaders, sizeof *all, "the nodes' summaries")
                                          : NULL;
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, leaders);
        for (int i = 0; ctx.rank == 0 && i < nleaders; i++)
            report_node(&ctx, i, &all[i], duration_s, threshold_s);
        free(all);
        MPI_Comm_free(&leaders);
    }
    MPI_Comm_free(&node);
    free(t.start);
    free(t.length);
    free(steps);
    return jb_finish(&ctx);
}
