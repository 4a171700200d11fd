/* Per-call statistics over tasks: the Switch Jitter definitions, by reduction. */
#include "jb_calls.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jb_clock.h"
#include "jb_output.h"
#include "jb_watchdog.h"

void jb_calls_init(jb_ctx *ctx, jb_calls *s, long calls)
{
    memset(s, 0, sizeof *s);
    s->calls = calls;
    s->mine = jb_alloc(ctx, (size_t)calls, sizeof *s->mine, "--calls");
    s->max = jb_alloc(ctx, (size_t)calls, sizeof *s->max, "--calls");
    s->sum = jb_alloc(ctx, (size_t)calls, sizeof *s->sum, "--calls");
    s->min = jb_alloc(ctx, (size_t)calls, sizeof *s->min, "--calls");
    s->low = jb_alloc(ctx, (size_t)calls, sizeof *s->low, "--calls");
    s->high = jb_alloc(ctx, (size_t)calls, sizeof *s->high, "--calls");
    s->avg = jb_alloc(ctx, (size_t)calls, sizeof *s->avg, "--calls");
    s->start = jb_alloc(ctx, (size_t)calls, sizeof *s->start, "--calls");
    s->start_max = jb_alloc(ctx, (size_t)calls, sizeof *s->start_max, "--calls");
    s->start_min = jb_alloc(ctx, (size_t)calls, sizeof *s->start_min, "--calls");
    s->mine_at = jb_alloc(ctx, (size_t)calls, sizeof *s->mine_at, "--calls");
    s->entered = jb_alloc(ctx, (size_t)calls, sizeof *s->entered, "--calls");
    s->node = ctx->nodes.listed;
    s->world_rank = ctx->world_rank;
    s->nnodes = ctx->nodes.nnodes;
    s->resolution_us = ctx->timer.resolution * 1e6;
    jb_holders *both[2] = {&s->slowest, &s->latest};
    for (int k = 0; k < 2; k++) {
        both[k]->at = jb_alloc(ctx, (size_t)calls, sizeof *both[k]->at, "--calls");
        both[k]->decided = jb_alloc(ctx, (size_t)calls, 1, "--calls");
        both[k]->node_calls = jb_alloc(ctx, (size_t)s->nnodes, sizeof *both[k]->node_calls, "the nodes");
    }
    s->node_tasks = jb_alloc(ctx, (size_t)s->nnodes, sizeof *s->node_tasks, "the nodes");
    if (ctx->rank == 0) /* the root of every comm a benchmark reduces over */
    {
        s->task_node = jb_alloc(ctx, (size_t)ctx->size, sizeof *s->task_node, "the tasks");
        s->task_world = jb_alloc(ctx, (size_t)ctx->size, sizeof *s->task_world, "the tasks");
    }
}

/* What jb_calls holds per task: for jb_memory_add before anything is allocated. */
void jb_calls_memory(jb_memory *m, long calls)
{
    jb_memory_add(m, "--calls (11 arrays of per-call times, 3 of maxima and their tasks, 2 of flags)", (size_t)calls,
                  11 * sizeof(double) + 3 * sizeof(jb_maxloc) + 2);
}

void jb_calls_memory_variants(jb_memory *m, long calls, long variants)
{
    size_t per_variant;
    if (jb_mul((size_t)calls, 11 * sizeof(double) + 3 * sizeof(jb_maxloc) + 2, &per_variant) != 0)
        per_variant = (size_t)-1;
    jb_memory_add(m, "--calls x variants (14 arrays of per-call times each)", (size_t)variants, per_variant);
}

long jb_calls_of_trials(jb_ctx *ctx, long trials, const char *what)
{
    size_t timed;
    /* the count is an int where the calls are reduced (jb_calls_reduce) */
    if (jb_mul((size_t)ctx->opt.calls, (size_t)trials, &timed) || timed > (size_t)INT_MAX)
        jb_fail(ctx, "--calls x --trials: %ld x %ld timed %s per result are more than 2^31 - 1", ctx->opt.calls,
                trials, what);
    return (long)timed;
}

void jb_calls_free(jb_calls *s)
{
    free(s->mine);
    free(s->max);
    free(s->sum);
    free(s->min);
    free(s->low);
    free(s->high);
    free(s->avg);
    free(s->start);
    free(s->start_max);
    free(s->start_min);
    free(s->mine_at);
    free(s->entered);
    free(s->slowest.at);
    free(s->slowest.decided);
    free(s->slowest.node_calls);
    free(s->latest.at);
    free(s->latest.decided);
    free(s->latest.node_calls);
    free(s->task_node);
    free(s->task_world);
    free(s->node_tasks);
    memset(s, 0, sizeof *s);
}

void jb_calls_clear(jb_calls *s)
{
    jb_hist_clear(&s->local);
    for (long c = 0; c < s->calls; c++)
        s->mine[c] = s->entered[c] = NAN; /* not recorded */
    s->timed_starts = s->timed_entries = 0;
    s->late_starts = s->all_late_starts = 0;
    s->timed = 0;
    s->error_bound = 0;
}

void jb_calls_record(jb_calls *s, long call, double us)
{
    s->mine[call] = us;
    s->timed++;
    jb_hist_add(&s->local, us);
    jb_watch_call_done();
}

/* Who held each call's maximum of value over the tasks of comm, into h->at (rank 0): MPI_MAXLOC
 * breaks a tie by the least index, so the index is the task rotated by the call, and tied
 * tasks take turns instead of the first always winning (a clock's tick makes ties). */
static void find_holders(jb_calls *s, MPI_Comm comm, const double *value, jb_holders *h)
{
    int n = (int)s->calls, me, tasks;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &tasks);
    for (int c = 0; c < n; c++) {
        s->mine_at[c].us = value[c];
        s->mine_at[c].task = (int)(((long)me + tasks - c % tasks) % tasks);
    }
    MPI_Reduce(s->mine_at, h->at, n, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
    if (me == 0)
        for (int c = 0; c < n; c++)
            h->at[c].task = (int)((h->at[c].task + (long)c) % tasks);
}

/* Rank 0: counts per node the calls whose holder stands out by more than what the calls'
 * synchronisation cannot resolve (margin[c] < 0: no margin known, every call counts); a call
 * that does not is decided for no one. */
static void count_holders(jb_calls *s, jb_holders *h, const double *excess, const double *margin)
{
    memset(h->node_calls, 0, (size_t)s->nnodes * sizeof *h->node_calls);
    for (long c = 0; c < s->calls; c++) {
        int node = s->task_node[h->at[c].task];
        h->decided[c] = node >= 0 && (margin[c] < 0 || excess[c] > margin[c]);
        if (h->decided[c])
            h->node_calls[node]++;
    }
}

void jb_calls_reduce(jb_calls *s, MPI_Comm comm)
{
    /* A task that took no part in a call (an idle one of the contention
     * benchmark) recorded nothing for it: it adds 0 to the maximum and the
     * sum, +inf to the minimum, and is not counted.  Every call must have
     * the same number of tasks recording. */
    int n = (int)s->calls;
    double *low = s->low, *high = s->high;
    long recorded = 0, all_recorded = 0;
    double sum = 0;
    for (int c = 0; c < n; c++) {
        int absent = isnan(s->mine[c]);
        low[c] = absent ? 0 : s->mine[c];
        high[c] = absent ? HUGE_VAL : s->mine[c];
        recorded += !absent;
        sum += low[c];
    }
    /* IMB's view: each task's mean over its calls, then the extremes over tasks */
    double mean[2] = {recorded ? sum / recorded : -HUGE_VAL, recorded ? -sum / recorded : -HUGE_VAL}, extremes[2];
    MPI_Reduce(mean, extremes, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    s->task_mean_max = extremes[0];
    s->task_mean_min = -extremes[1];
    find_holders(s, comm, low, &s->slowest); /* the per-call MAX, and whose it was */
    MPI_Reduce(low, s->sum, n, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(high, s->min, n, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&recorded, &all_recorded, 1, MPI_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(s->local.count, s->all.count, JB_HIST_NBINS, MPI_UINT64_T, MPI_SUM, 0, comm);
    if (s->timed_starts) { /* every task of a benchmark starts its calls the same way */
        MPI_Reduce(s->start, s->start_max, n, MPI_DOUBLE, MPI_MAX, 0, comm);
        MPI_Reduce(s->start, s->start_min, n, MPI_DOUBLE, MPI_MIN, 0, comm);
        MPI_Reduce(&s->late_starts, &s->all_late_starts, 1, MPI_LONG, MPI_SUM, 0, comm);
    }
    int me, tasks, my_node = recorded ? s->node : -1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &tasks);
    if (me == 0 && !s->task_node) { /* a benchmark's mistake, not the user's */
        fprintf(stderr, "jitterbench: internal error: a per-call reduction's root is not world rank 0\n");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Gather(&my_node, 1, MPI_INT, s->task_node, 1, MPI_INT, 0, comm);
    MPI_Gather(&s->world_rank, 1, MPI_INT, s->task_world, 1, MPI_INT, 0, comm);
    s->tasks = n ? (int)(all_recorded / n) : 0;
    if (me == 0) {
        memset(s->node_tasks, 0, (size_t)s->nnodes * sizeof *s->node_tasks);
        for (int t = 0; t < tasks; t++)
            if (s->task_node[t] >= 0)
                s->node_tasks[s->task_node[t]]++;
        /* a call's slowest counts when its time exceeds the mean over tasks by more than the
         * spread of the tasks' starts and the clocks' error bound: a task that started earlier
         * by that spread took longer by as much while waiting for the same messages */
        for (int c = 0; c < n; c++) {
            s->max[c] = s->slowest.at[c].us;
            high[c] = s->max[c] - s->sum[c] / s->tasks;
            low[c] = s->timed_starts ? (s->start_max[c] - s->start_min[c] + s->error_bound) * 1e6 : -1;
        }
        count_holders(s, &s->slowest, high, low);
    }
    if (s->timed_entries) {
        /* the late task: the longest wait before its communication, each on its own clock from its
         * own start (so neither the clocks' offsets nor how the barrier let the tasks go enter); it
         * counts when it exceeds the others' mean by more than the timer resolves */
        for (int c = 0; c < n; c++) { /* NaN (no entry): never the latest */
            low[c] = isnan(s->entered[c]) ? -HUGE_VAL : s->entered[c];
            high[c] = isnan(s->entered[c]) ? 0 : s->entered[c];
        }
        find_holders(s, comm, low, &s->latest);
        MPI_Reduce(high, low, n, MPI_DOUBLE, MPI_SUM, 0, comm);
        if (me == 0) {
            for (int c = 0; c < n; c++) {
                double latest = s->latest.at[c].us;
                high[c] = latest - (low[c] - latest) / (s->tasks > 1 ? s->tasks - 1 : 1);
                low[c] = s->resolution_us;
            }
            count_holders(s, &s->latest, high, low);
        }
    }
}

double jb_calls_mean_max(const jb_calls *s) { return jb_calls_trial_mean_max(s, 0, s->calls); }

double jb_calls_trial_mean_max(const jb_calls *s, long first, long count)
{
    double mean_max = 0;
    for (long c = first; c < first + count; c++)
        mean_max += s->max[c] / count;
    return mean_max;
}

double jb_calls_fastest_trial(const jb_calls *s, long calls, long *which)
{
    double best = 0;
    for (long trial = 0; trial < s->calls / calls; trial++) {
        double mean = jb_calls_trial_mean_max(s, trial * calls, calls);
        if (trial == 0 || mean < best)
            best = mean, *which = trial;
    }
    return best;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* One group (a task or a node) named over-represented among the slowest, or the commonest. */
static void slowest_entry(jb_json *j, const char *key, const char *what, long id, int node, long calls, long counted,
                          long all_calls, double fair, double p)
{
    jb_json_object(j, key);
    jb_json_int(j, what, id);
    if (node >= 0)
        jb_json_int(j, "node", node);
    jb_json_int(j, "calls", calls);
    jb_json_num(j, "share", (double)calls / (double)counted);
    jb_json_num(j, "share_of_all_calls", (double)calls / (double)all_calls);
    jb_json_num(j, "fair_share", fair);
    jb_json_num(j, "p", p);
    jb_json_end(j);
}

#define SLOWEST_TASKS_LISTED 64 /* named tasks in the JSON beyond these are only counted */

/* Which tasks and nodes held a per-call maximum (h) more often than their share: for each, the
 * one-sided binomial test of its count against its share of the recording tasks (1/tasks for a
 * task, its tasks/tasks for a node), Holm-corrected over the job's tasks and over its nodes at
 * JB_SLOWEST_RATE.  Writes the object key and prints one line saying what it is.  Rank 0, after
 * the reduce. */
static void report_holders(jb_ctx *ctx, const jb_calls *s, const jb_holders *h, const char *key, const char *what)
{
    long counted = 0, recording = 0, node_family = 0;
    for (int i = 0; i < s->nnodes; i++) {
        counted += h->node_calls[i];
        recording += s->node_tasks[i];
        node_family += s->node_tasks[i] > 0;
    }
    jb_json *j = jb_result_json(ctx);
    jb_json_object(j, key);
    jb_json_int(j, "decided_calls", counted);
    jb_json_num(j, "rate", JB_SLOWEST_RATE);
    jb_json_array(j, "node_calls");
    for (int i = 0; i < s->nnodes; i++)
        jb_json_int(j, NULL, h->node_calls[i]);
    jb_json_end(j);
    jb_json_array(j, "node_tasks");
    for (int i = 0; i < s->nnodes; i++)
        jb_json_int(j, NULL, s->node_tasks[i]);
    jb_json_end(j);
    if (counted == 0 || recording == 0) {
        jb_json_end(j);
        printf("# %s: in none of %ld calls one task %s by more than the synchronisation resolves\n", key,
               s->calls, what);
        return;
    }
    /* tasks: the distinct holders of a maximum, at most one per call */
    size_t calls = (size_t)s->calls;
    int *holder = jb_alloc(ctx, calls, sizeof *holder, "--calls");
    long *held = jb_alloc(ctx, calls, sizeof *held, "--calls"), distinct = 0;
    for (size_t c = 0; c < calls; c++)
        holder[c] = h->decided[c] ? h->at[c].task : -1;
    qsort(holder, calls, sizeof *holder, by_int);
    for (size_t c = 0; c < calls; c++) {
        if (holder[c] < 0)
            continue; /* a call that stood out from no one (count_holders) */
        if (distinct > 0 && holder[distinct - 1] == holder[c])
            held[distinct - 1]++;
        else
            holder[distinct] = holder[c], held[distinct++] = 1;
    }
    size_t groups = (size_t)(distinct > s->nnodes ? distinct : s->nnodes);
    double *p = jb_alloc(ctx, groups, sizeof *p, "the tasks");
    size_t *order = jb_alloc(ctx, groups, sizeof *order, "the tasks");
    int *named = jb_alloc(ctx, groups, sizeof *named, "the tasks");
    char line[512];
    size_t len = 0;
    for (int i = 0; i < s->nnodes; i++)
        p[i] = jb_binomial_upper(counted, h->node_calls[i], (double)s->node_tasks[i] / (double)recording);
    long nodes_named = jb_holm(p, s->nnodes, node_family, JB_SLOWEST_RATE, order, named);
    jb_json_array(j, "nodes");
    for (long k = 0; k < nodes_named; k++) {
        int i = (int)order[k];
        double fair = (double)s->node_tasks[i] / (double)recording;
        slowest_entry(j, NULL, "node", i, -1, h->node_calls[i], counted, s->calls, fair, p[i]);
        if (k < 4 && len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s node %d (%.0f %% of calls, fair %.0f %%)",
                                    k ? "," : " nodes:", i, 100.0 * (double)h->node_calls[i] / (double)counted,
                                    100 * fair);
    }
    jb_json_end(j);

    double fair = 1.0 / (double)recording;
    long top = 0;
    for (long t = 0; t < distinct; t++) {
        p[t] = jb_binomial_upper(counted, held[t], fair);
        top = held[t] > held[top] ? t : top;
    }
    long tasks_named = jb_holm(p, distinct, recording, JB_SLOWEST_RATE, order, named);
    jb_json_int(j, "tasks_named", tasks_named);
    jb_json_array(j, "tasks");
    for (long k = 0; k < tasks_named && k < SLOWEST_TASKS_LISTED; k++) {
        long t = (long)order[k];
        /* a task is named by its slot, its world rank, whatever --rank-order made it play */
        slowest_entry(j, NULL, "task", s->task_world[holder[t]], s->task_node[holder[t]], held[t], counted, s->calls,
                      fair, p[t]);
        if (k < 4 && len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s task %d (%.0f %%, fair %.2g %%)",
                                    k ? "," : (nodes_named ? "; tasks:" : " tasks:"), s->task_world[holder[t]],
                                    100.0 * (double)held[t] / (double)counted, 100 * fair);
    }
    jb_json_end(j);
    slowest_entry(j, "commonest_task", "task", s->task_world[holder[top]], s->task_node[holder[top]], held[top], counted,
                  s->calls, fair, p[top]);
    jb_json_end(j);
    if (nodes_named + tasks_named == 0)
        printf("# %s: in %ld of %ld calls one task %s; none did more often than its share (binomial, Holm, "
               "%g %% false alarms)\n", key, counted, s->calls, what, 100 * JB_SLOWEST_RATE);
    else
        printf("# %s: in %ld of %ld calls one task %s; more often than their share (binomial, Holm, %g %% false "
               "alarms):%s\n", key, counted, s->calls, what, 100 * JB_SLOWEST_RATE, line);
    free(holder);
    free(held);
    free(p);
    free(order);
    free(named);
}

void jb_calls_report(jb_ctx *ctx, const jb_calls *s, int series)
{
    if (ctx->rank != 0)
        return;
    long calls = s->calls;
    double *avg = s->avg;
    double mean_max = jb_calls_mean_max(s), mean_avg = 0, mean_min = 0;
    for (long c = 0; c < calls; c++) {
        avg[c] = s->sum[c] / s->tasks;
        mean_avg += avg[c] / calls;
        mean_min += s->min[c] / calls;
    }
    jb_summary per_call_max;
    jb_summarize(s->max, (size_t)calls, &per_call_max);
    jb_result_num(ctx, "max_us", mean_max, 1);
    jb_result_num(ctx, "avg_us", mean_avg, 1);
    jb_result_num(ctx, "min_us", mean_min, 1);
    jb_result_num(ctx, "jitter", mean_max / mean_avg, 1);
    jb_result_num(ctx, "t_max_us", s->task_mean_max, 1);
    jb_result_num(ctx, "t_min_us", s->task_mean_min, 0);
    jb_result_num(ctx, "p50_us", per_call_max.p50, 1);
    jb_result_num(ctx, "p90_us", per_call_max.p90, 0);
    jb_result_num(ctx, "p99_us", per_call_max.p99, 1);
    jb_result_num(ctx, "p999_us", per_call_max.p999, 0);
    jb_result_num(ctx, "worst_us", per_call_max.max, 0);
    jb_result_num(ctx, "all_p50_us", jb_hist_percentile(&s->all, 50), 0);
    jb_result_num(ctx, "all_p99_us", jb_hist_percentile(&s->all, 99), 0);
    if (s->stopping) /* the stopping rule's: the median's 95 % interval, relative half-width */
        jb_result_num(ctx, "median_halfwidth", s->width, 0);
    if (s->timed_starts) {
        /* how far apart the tasks started each call: beside MAX, it bounds what a
         * per-call maximum of a few microseconds can mean */
        double skew_sum = 0, skew_most = 0;
        for (long c = 0; c < calls; c++) {
            double skew = (s->start_max[c] - s->start_min[c]) * 1e6;
            skew_sum += skew;
            skew_most = skew > skew_most ? skew : skew_most;
        }
        jb_result_str(ctx, "sync", jb_sync_names[ctx->opt.sync], 0);
        jb_result_num(ctx, "start_skew_us", skew_sum / calls, 0);
        jb_result_num(ctx, "start_skew_max_us", skew_most, 0);
        jb_result_num(ctx, "clock_error_us", s->error_bound * 1e6, 0);
        if (ctx->opt.sync == JB_SYNC_WINDOW)
            jb_result_int(ctx, "late_starts", s->all_late_starts, 0);
    }
    jb_json *j = jb_result_json(ctx);
    jb_json_hist(j, "histogram", &s->all);
    report_holders(ctx, s, &s->slowest, "slowest", "took longest");
    if (s->timed_entries)
        report_holders(ctx, s, &s->latest, "latest", "waited longest before its communication");
    if (series) {
        jb_json_object(j, "series");
        jb_json_nums(j, "max_us", s->max, (size_t)calls);
        jb_json_nums(j, "avg_us", avg, (size_t)calls);
        jb_json_nums(j, "min_us", s->min, (size_t)calls);
        jb_json_end(j);
    }
}

void jb_calls_describe(jb_json *j)
{
    jb_json_object(j, "statistics");
    jb_json_str(j, "max_us", "mean over calls of the maximum over tasks");
    jb_json_str(j, "avg_us", "mean over calls of the mean over tasks");
    jb_json_str(j, "min_us", "mean over calls of the minimum over tasks");
    jb_json_str(j, "jitter", "max_us / avg_us");
    jb_json_str(j, "t_max_us t_min_us", "maximum and minimum over tasks of each task's mean over calls "
                                        "(IMB's t_max and t_min; max_us >= t_max_us always)");
    jb_json_str(j, "p50_us p90_us p99_us p999_us worst_us",
                "percentiles and maximum over calls of the per-call maximum over tasks (linear interpolation)");
    jb_json_str(j, "all_p50_us all_p99_us",
                "percentiles over every task and call, from the merged histogram (bin middle, within 6 %)");
    jb_json_str(j, "histogram", "counts of every task's every call time in log bins [lower_us, upper_us)");
    jb_json_str(j, "slowest", "whose per-call MAX it was, the task that waited most (MPI_MAXLOC; a tie goes to the "
                              "tasks in turn), in the calls where it exceeded the mean over tasks by more than the "
                              "spread of the tasks' starts (decided_calls; without timed starts, every call): per "
                              "node the calls it held the maximum (node_calls) and its tasks "
                              "(node_tasks); the nodes and tasks that held it more often than their share of the tasks, "
                              "by a one-sided binomial test Holm-corrected over the job's nodes and over its tasks at "
                              "family-wise false-alarm rate 'rate' (nodes, tasks: by p, at most 64 tasks listed of "
                              "tasks_named); and the task that held it most often (commonest_task), named or not; a "
                              "task is named by its rank in MPI_COMM_WORLD and a node by its place in node_list, "
                              "whatever role --rank-order gave them");
    jb_json_str(j, "latest", "the same of the task whose call spent longest before its communication (an injected "
                             "wait, a computation), each on its own clock from its own start: the late sender whom "
                             "the others waited for; a call is decided where that exceeds the others' mean by more "
                             "than the timer's resolution");
    jb_json_str(j, "start_skew_us start_skew_max_us",
                "mean and maximum over calls of the latest minus the earliest start over tasks, on clocks "
                "synchronised at the start of the result (offsets to rank 0: SKaMPI's ping-pong over HCA's tree)");
    jb_json_str(j, "clock_error_us", "the largest error bound of any task's clock offset (half round trips, summed up the tree)");
    jb_json_str(j, "late_starts", "--sync window: task-calls that reached their window after it had opened");
    jb_json_str(j, "median_halfwidth", "with a stopping rule (--target-width): the relative half-width of the "
                                       "distribution-free 95 % interval of the median of the per-call MAX, over the "
                                       "calls made, from order statistics");
    jb_json_end(j);
}
