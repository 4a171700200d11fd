/* The load beside a run, read by one task per node from /proc at the start and
 * the end; rank 0 keeps the busiest node's figures each time. */
#include "jb_load.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jb_stats.h"

/* /proc/stat's first line: the CPU ticks, all and stolen (the 8th field); 0 when absent. */
static int read_ticks(unsigned long long *all, unsigned long long *steal)
{
    unsigned long long f[8] = {0};
    FILE *p = fopen("/proc/stat", "r");
    if (!p)
        return 0;
    int n = fscanf(p, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5],
                   &f[6], &f[7]);
    fclose(p);
    *all = 0;
    for (int i = 0; i < 8; i++)
        *all += f[i];
    *steal = f[7];
    return n == 8;
}

/* the leader's ticks at the start: the end's steal is over the run */
static unsigned long long start_all, start_steal;
static int start_ticks;

/* /proc/loadavg: 0, or -1 when it cannot be read */
static int read_loadavg(double *load1, long *runnable, long *total)
{
    FILE *p = fopen("/proc/loadavg", "r");
    if (!p)
        return -1;
    int n = fscanf(p, "%lf %*f %*f %ld/%ld", load1, runnable, total);
    fclose(p);
    return n == 3 ? 0 : -1;
}

static int by_value(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The machine's speed beside the load: a fixed chain of 2^20 dependent multiply-adds (no compiler
 * may shorten it without -ffast-math), timed 5 times, its median in us.  What remains of the noise
 * on a shared 2-core VM is a whole run slower by 1.2-1.4x, the CPU with it and no load or steal
 * to show it (docs/references.md, "Where the rest lives"); this says so beside every launch.
 * window_us is the whole probe's time, the 5 timings together (about 10 ms): the median of short
 * timings is the core's speed while the task runs, and leaves out the stalls of a task held off
 * its core (a CPU quota, another node's ranks on the same cores), which the window counts. */
static double probe_us(double *window_us)
{
    enum { REPS = 5, CHAIN = 1 << 20 };
    double took[REPS];
    volatile double sink = 1.0;
    double start = MPI_Wtime();
    for (int r = 0; r < REPS; r++) {
        double x = sink, t0 = MPI_Wtime();
        for (long i = 0; i < CHAIN; i++)
            x = x * 0.9999999 + 1e-7;
        took[r] = (MPI_Wtime() - t0) * 1e6;
        sink = x;
    }
    *window_us = (MPI_Wtime() - start) * 1e6;
    qsort(took, REPS, sizeof *took, jb_compare_doubles);
    return took[REPS / 2];
}

/* How far apart the job's CPUs are on a node: a cache line's round trip, in ns, between the node's
 * first and last task (MPI_COMM_TYPE_SHARED, world order), through a flag in an MPI shared window,
 * the median of 5 timings of 1000 round trips; -1 on a node of one task.  On the 2-core CI VM a
 * launch's round trip is 50-115 ns most of the time and 300-420 ns while the hypervisor holds the
 * two vCPUs far apart, for seconds at a time, with no load or steal to show it: MPICH's halo
 * exchange is then 2.3x slower and Open MPI's 1.4x (docs/references.md, "CPUs far apart"). */
static double pair_ns(MPI_Comm world)
{
    enum { REPS = 5, ROUND_TRIPS = 1000, STOP = -1 };
    const double BUDGET_S = 0.02;
    MPI_Comm shared;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int rank, size;
    MPI_Comm_rank(shared, &rank);
    MPI_Comm_size(shared, &size);
    double median = -1;
    if (size > 1) {
        atomic_long *flag;
        MPI_Win win;
        MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sizeof *flag : 0, 1, MPI_INFO_NULL, shared, &flag, &win);
        MPI_Aint bytes;
        int unit;
        MPI_Win_shared_query(win, 0, &bytes, &unit, &flag);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        if (rank == 0)
            atomic_init(flag, 0);
        MPI_Win_sync(win);
        MPI_Barrier(shared);
        double took[REPS];
        int done = 0;
        long v = 0;
        if (rank == 0) {
            /* where two tasks share a CPU (oversubscribed) a round trip takes a time slice: a budget */
            double start = MPI_Wtime();
            for (int r = 0; r < REPS && MPI_Wtime() - start < BUDGET_S; r++) {
                double t0 = MPI_Wtime();
                int k = 0;
                for (; k < ROUND_TRIPS && (k % 64 || MPI_Wtime() - start < BUDGET_S); k++, v += 2) {
                    atomic_store(flag, v + 1);
                    while (atomic_load(flag) != v + 2)
                        ;
                }
                if (k)
                    took[done++] = (MPI_Wtime() - t0) * 1e9 / k;
            }
            atomic_store(flag, STOP);
        } else if (rank == size - 1) {
            for (long seen; (seen = atomic_load(flag)) != STOP;)
                if (seen == v + 1)
                    atomic_store(flag, v += 2);
        }
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
        if (rank == 0 && done) {
            qsort(took, (size_t)done, sizeof *took, jb_compare_doubles);
            median = took[done / 2];
        }
    }
    MPI_Comm_free(&shared);
    return median;
}

static void read_node(const jb_ctx *ctx, int at_end, jb_load_sample_t *s)
{
    memset(s, 0, sizeof *s);
    s->taken = 1;
    s->steal_pct = -1;
    s->load1 = -1, s->runnable = s->tasks_total = -1;
    /* the runnable count is an instant: the median of READS reads 5 ms apart, so a
     * process that runs for a moment (a `ps`, a shell) does not count, one that keeps
     * a CPU busy does; 20 ms at start and at end, as a test suite starts a run thousands
     * of times */
    enum { READS = 5 };
    long runnable[READS];
    int got = 0;
    for (int k = 0; k < READS; k++) {
        if (read_loadavg(&s->load1, &runnable[got], &s->tasks_total) == 0)
            got++;
        if (k + 1 < READS)
            usleep(5000);
    }
    if (got) {
        qsort(runnable, (size_t)got, sizeof *runnable, by_value);
        s->runnable = runnable[got / 2];
    }
    unsigned long long all, steal;
    if (read_ticks(&all, &steal)) {
        if (!at_end) {
            start_all = all, start_steal = steal, start_ticks = 1;
            s->steal_pct = all ? 100.0 * (double)steal / (double)all : 0;
        } else if (start_ticks && all > start_all) {
            s->steal_pct = 100.0 * (double)(steal - start_steal) / (double)(all - start_all);
        }
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    s->cpus = online > 0 ? (int)online : 0;
    s->job_tasks = ctx->nodes.real_local_size;
    s->job_cpus = ctx->node_job_cpus;
    gethostname(s->host, sizeof s->host - 1);
}

/* The disturbed-launch rule, stated here only (jitterbench/harness/load.py and the checks' launch loop read
 * its verdict, `_disturbed=1`): on a node, the runnable tasks other than this job's exceed the CPUs
 * the job leaves free there, runnable - job_tasks > max(cpus - job_tasks, 0), so something else
 * takes a CPU from one of the job's ranks and the times measure the scheduler.  On 2 CPUs with 2
 * ranks that is any other task runnable in the median of the 5 reads: one busy process beside
 * MPICH's spinning ranks slowed a whole case 3-8x (docs/references.md, "Launches"), and the rule
 * it replaces, runnable - job_tasks > cpus, waited for three.  A sample the kernel did not give
 * (runnable < 0) is no evidence. */
static int disturbed(const jb_load_sample_t *s)
{
    long free_cpus = s->cpus > s->job_tasks ? s->cpus - s->job_tasks : 0;
    return s->taken && s->runnable >= 0 && s->cpus > 0 && s->runnable - s->job_tasks > free_cpus;
}

/* The largest of every task's value, and the node of the task that holds it (the lowest rank
 * on ties), both on rank 0: a figure of the node, named, so that a slow node is named among
 * many (docs/references.md, "Node first").  Nothing per task travels. */
static double largest(const jb_ctx *ctx, double mine, char host[64])
{
    struct { double value; int rank; } in = {mine, ctx->rank}, top;
    MPI_Allreduce(&in, &top, 1, MPI_DOUBLE_INT, MPI_MAXLOC, ctx->world);
    memset(host, 0, 64);
    if (ctx->rank == top.rank)
        gethostname(host, 63);
    MPI_Bcast(host, 64, MPI_CHAR, top.rank, ctx->world);
    return top.value;
}

void jb_load_sample(jb_ctx *ctx, int at_end)
{
    MPI_Comm leaders = ctx->nodes.leaders;
    jb_load_sample_t mine, busiest;
    memset(&busiest, 0, sizeof busiest);
    /* every task at once, as in a compute phase, before the leaders' reads sleep */
    MPI_Barrier(ctx->world);
    char probe_host[64], window_host[64], pair_host[64];
    double window, fastest_window;
    double slowest = largest(ctx, probe_us(&window), probe_host);
    double slowest_window = largest(ctx, window, window_host);
    MPI_Allreduce(&window, &fastest_window, 1, MPI_DOUBLE, MPI_MIN, ctx->world);
    double farthest = largest(ctx, pair_ns(ctx->world), pair_host);
    if (leaders != MPI_COMM_NULL) {
        int lrank;
        MPI_Comm_rank(leaders, &lrank);
        read_node(ctx, at_end, &mine);
        mine.node = lrank;
        /* the node whose runnable tasks most exceed its CPUs and the job's tasks: the one
         * a disturbed-run rule reads (lowest node on ties) */
        struct { double excess; int node; } key = {(double)(mine.runnable - mine.job_tasks - mine.cpus), lrank}, top;
        MPI_Allreduce(&key, &top, 1, MPI_DOUBLE_INT, MPI_MAXLOC, leaders);
        if (top.node == lrank)
            busiest = mine;
        MPI_Bcast(&busiest, (int)sizeof busiest, MPI_BYTE, top.node, leaders);
    }
    if (ctx->rank == 0) {
        busiest.probe_us = slowest;
        busiest.window_us = slowest_window;
        busiest.window_min_us = fastest_window;
        memcpy(busiest.window_host, window_host, sizeof window_host);
        busiest.pair_ns = farthest;
        memcpy(busiest.probe_host, probe_host, sizeof probe_host);
        memcpy(busiest.pair_host, pair_host, sizeof pair_host);
        *(at_end ? &ctx->load_after : &ctx->load_before) = busiest;
    }
    if (ctx->rank != 0 || !at_end)
        return;
    printf("# load:");
    for (int k = 0; k < 2; k++) {
        const jb_load_sample_t *s = k ? &ctx->load_after : &ctx->load_before;
        const char *when = k ? "after" : "before";
        if (!s->taken)
            continue;
        printf(" %s_node=%s %s_load1=%.2f %s_runnable=%ld %s_tasks_total=%ld %s_steal_pct=%.2f %s_cpus=%d "
               "%s_job_tasks=%d %s_job_cpus=%d %s_disturbed=%d %s_probe_us=%.1f %s_probe_node=%s "
               "%s_window_us=%.1f %s_window_node=%s %s_window_min_us=%.1f %s_pair_ns=%.1f %s_pair_node=%s",
               when, s->host[0] ? s->host : "?", when, s->load1, when, s->runnable, when, s->tasks_total, when,
               s->steal_pct, when, s->cpus, when, s->job_tasks, when, s->job_cpus, when, disturbed(s), when,
               s->probe_us, when, s->probe_host[0] ? s->probe_host : "?", when, s->window_us, when,
               s->window_host[0] ? s->window_host : "?", when, s->window_min_us, when, s->pair_ns, when,
               s->pair_host[0] ? s->pair_host : "?");
    }
    printf("\n");
}

void jb_load_json(const jb_ctx *ctx, jb_json *j)
{
    jb_json_object(j, "load");
    jb_json_str(j, "means", "per sample, the node whose runnable tasks (/proc/loadavg's 4th field, this job's "
                            "included) most exceed its online CPUs plus this job's tasks there: its 1-minute load, "
                            "runnable and total tasks, CPU steal in % (since boot before, over the run after; -1: "
                            "not given), online CPUs, the job's tasks and the CPUs they may use, and whether the "
                            "disturbed-launch rule holds (runnable - job_tasks > max(cpus - job_tasks, 0)); "
                            "probe_us, the job's speed: the slowest task's median of 5 timings of a fixed chain of "
                            "2^20 dependent multiply-adds, every task at once (a slower CPU slows every figure), "
                            "probe_node the node of that task; window_us the slowest task's whole probe (its 5 "
                            "timings together, every stall in them counted), window_node its node, window_min_us "
                            "the fastest task's; pair_ns, how far apart the job's CPUs are: the largest over nodes "
                            "of a cache line's round trip in ns between a node's first and last task, the median "
                            "of 5 timings of 1000 (-1: no node holds two tasks), pair_node that node (the first "
                            "task's where none holds two)");
    for (int k = 0; k < 2; k++) {
        const jb_load_sample_t *s = k ? &ctx->load_after : &ctx->load_before;
        if (!s->taken)
            continue;
        jb_json_object(j, k ? "after" : "before");
        jb_json_int(j, "node", s->node);
        jb_json_str(j, "host", s->host);
        jb_json_num(j, "load1", s->load1);
        jb_json_int(j, "runnable", s->runnable);
        jb_json_int(j, "tasks_total", s->tasks_total);
        jb_json_num(j, "steal_pct", s->steal_pct);
        jb_json_int(j, "cpus", s->cpus);
        jb_json_int(j, "job_tasks", s->job_tasks);
        jb_json_int(j, "job_cpus", s->job_cpus);
        jb_json_bool(j, "disturbed", disturbed(s));
        jb_json_num(j, "probe_us", s->probe_us);
        jb_json_str(j, "probe_node", s->probe_host);
        jb_json_num(j, "window_us", s->window_us);
        jb_json_str(j, "window_node", s->window_host);
        jb_json_num(j, "window_min_us", s->window_min_us);
        jb_json_num(j, "pair_ns", s->pair_ns);
        jb_json_str(j, "pair_node", s->pair_host);
        jb_json_end(j);
    }
    jb_json_end(j);
}
