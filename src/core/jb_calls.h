/* Per-call statistics over tasks: what each task recorded of each timed call, reduced
 * to the per-call MAX, AVG and MIN and whose maximum it was. */
#ifndef JB_CALLS_H
#define JB_CALLS_H

#include <mpi.h>

#include "jb_context.h"
#include "jb_json.h"
#include "jb_parse.h"
#include "jb_stats.h"

/* ---- per-call statistics over tasks ----------------------------------------
 * For call c and task t with time x[t][c] (us), as the Switch Jitter study
 * defines them: MAX = mean over c of max over t, AVG = mean over c of mean
 * over t, MIN likewise; plus percentiles of the per-call MAX and a merged
 * histogram of every x[t][c].  Three reductions of length "calls" and one of
 * the histogram: memory per rank never grows with the task count. */
/* Whose maximum: a call's maximum and the task (rank of the reduce's comm) that held it. */
typedef struct {
    double us;
    int task;
} jb_maxloc;

/* The family-wise false-alarm rate of naming a task or node over-represented among the
 * slowest (Holm over the job's tasks, and over its nodes) */
#define JB_SLOWEST_RATE 0.01

/* Who held each call's maximum of something over tasks. */
typedef struct {
    jb_maxloc *at;           /* per call: the maximum and its task (rank 0 after reduce) */
    unsigned char *decided;  /* per call: the holder stood out by more than the synchronisation resolves */
    long *node_calls;        /* per node: the calls whose maximum a task of the node held */
} jb_holders;

typedef struct {
    long calls;
    double *mine;            /* this task's time per call */
    jb_hist local;           /* this task's times */
    double *max, *sum, *min; /* per call over tasks, rank 0 after reduce */
    double *low, *high, *avg; /* working space of reduce and report */
    /* with jb_call_start: each call's start on the synchronised clock, and over
     * tasks its latest and earliest (rank 0 after reduce): their difference is the
     * start skew */
    double *start, *start_max, *start_min;
    int timed_starts;         /* the calls started through jb_call_start */
    double first_window;      /* --sync window: when call -warmup's window opens */
    long late_starts, all_late_starts; /* calls whose window had opened already */
    double error_bound;       /* of the clocks, when this result began */
    double task_mean_max, task_mean_min; /* over tasks of each task's mean over calls (IMB's t_max, t_min) */
    jb_hist all;             /* merged, rank 0 after reduce */
    int tasks;               /* tasks that recorded each call */
    long timed;              /* calls this task recorded since the clear: what the schedule gave it */
    double width;            /* with a stopping rule: the relative half-width the median's interval reached */
    /* whose maximum, by MPI_MAXLOC in the same reductions (rank 0 after reduce): the task whose
     * call took longest (slowest: it waited most), and with jb_call_entered the task that
     * spent longest before the call's communication (latest: it made the others wait,
     * Scalasca's late sender).  Each task's node and the counts per node come with them: O(tasks + nodes)
     * on rank 0, never O(tasks x calls). */
    jb_holders slowest, latest;
    jb_maxloc *mine_at;      /* working space of the reductions */
    double *entered;         /* per call: this task's wait before its communication, from its start (us) */
    double resolution_us;    /* the timer's: what decides the latest */
    int timed_entries;       /* the benchmark called jb_call_entered */
    int node, nnodes;        /* this task's node as the node list names it (jb_nodes.listed); the job's nodes */
    int world_rank;          /* this task's slot (jb_ctx.world_rank): what a holder is named by */
    int *task_node;          /* rank 0 after reduce: each task's node, -1 for a task that recorded nothing */
    int *task_world;         /* rank 0 after reduce: each task's world rank */
    int *node_tasks;         /* rank 0 after reduce: the node's tasks that recorded */
    int stopping;            /* a stopping rule was applied (jb_calls_settled) */
} jb_calls;

void jb_calls_init(jb_ctx *ctx, jb_calls *s, long calls);
void jb_calls_memory(jb_memory *m, long calls);
/* The same for one jb_calls per variant of a schedule. */
void jb_calls_memory_variants(jb_memory *m, long calls, long variants);
/* The timed calls of a result of `trials` trials of --calls calls each (jacobi's and the
 * torus's fastest trial): their product, checked, as the reductions count calls in an int;
 * more than 2^31 ends the run in one line naming both options and `what` a call is. */
long jb_calls_of_trials(jb_ctx *ctx, long trials, const char *what);
void jb_calls_free(jb_calls *s);
void jb_calls_clear(jb_calls *s);
void jb_calls_record(jb_calls *s, long call, double us);
/* Collective over comm; root is rank 0, which must be world rank 0 (every benchmark's comm
 * keeps the world's order).  Calls a task did not record do not count; each call must be
 * recorded by the same number of tasks.  Besides the statistics, rank 0 learns which task
 * held each call's maximum. */
void jb_calls_reduce(jb_calls *s, MPI_Comm comm);
/* The mean over calls of the per-call MAX (us): max_us.  Rank 0, after the reduce. */
double jb_calls_mean_max(const jb_calls *s);
/* The same over calls first .. first + count - 1 (a trial's), and the least of it over the
 * trials of `calls` calls each that s holds, setting *which to that trial (rank 0). */
double jb_calls_trial_mean_max(const jb_calls *s, long first, long count);
double jb_calls_fastest_trial(const jb_calls *s, long calls, long *which);
/* Adds max_us, avg_us, min_us, jitter, p50_us .. p999_us, worst_us,
 * all_p50_us, all_p99_us, the histogram and the slowest tasks and nodes (and with series,
 * the per-call arrays) to the current result, and prints a line naming the slowest.
 * Rank 0 only. */
void jb_calls_report(jb_ctx *ctx, const jb_calls *s, int series);
/* The JSON text that says how each of those is aggregated (for "config"). */
void jb_calls_describe(jb_json *j);

#endif
