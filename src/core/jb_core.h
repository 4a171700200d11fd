/* jitterbench shared core, MPI part: start-up and collective error exit,
 * common options, timer calibration, node detection, run metadata, and the
 * three output forms (table on rank 0, one summary line per result, JSON). */
#ifndef JB_CORE_H
#define JB_CORE_H

#include <getopt.h>
#include <mpi.h>
#include <stdio.h>

#include "jb_util.h"

/* Options every benchmark takes; a benchmark lists them after its own in
 * its getopt_long table and passes unhandled codes to jb_common_option.
 * Their codes lie above every character a benchmark's short codes use. */
enum jb_common_code {
    JB_OPT_JSON = 0x100,
    JB_OPT_CALLS,
    JB_OPT_WARMUP,
    JB_OPT_SEED,
    JB_OPT_VALIDATE,
    JB_OPT_TASKS_PER_NODE,
    JB_OPT_VERSION,
    JB_OPT_TIMEOUT,
    JB_OPT_SYNC,
    JB_OPT_WINDOW,
};

/* How a timed call starts: after a barrier, or when its window opens on the
 * synchronised clock (jb_call_start). */
enum { JB_SYNC_BARRIER, JB_SYNC_WINDOW };
extern const char *const jb_sync_names[];

#define JB_COMMON_LONGOPTS                                           \
    {"json", required_argument, NULL, JB_OPT_JSON},                  \
    {"calls", required_argument, NULL, JB_OPT_CALLS},                \
    {"warmup", required_argument, NULL, JB_OPT_WARMUP},              \
    {"seed", required_argument, NULL, JB_OPT_SEED},                  \
    {"validate", no_argument, NULL, JB_OPT_VALIDATE},                \
    {"tasks-per-node", required_argument, NULL, JB_OPT_TASKS_PER_NODE}, \
    {"timeout", required_argument, NULL, JB_OPT_TIMEOUT},            \
    {"sync", required_argument, NULL, JB_OPT_SYNC},                  \
    {"window", required_argument, NULL, JB_OPT_WINDOW},              \
    {"help", no_argument, NULL, 'h'},                                \
    {"version", no_argument, NULL, JB_OPT_VERSION},                  \
    {NULL, 0, NULL, 0}

#define JB_COMMON_HELP                                                                      \
    "  --calls N             timed calls (repetitions) per result\n"                        \
    "  --warmup N            untimed calls before the timed ones\n"                         \
    "  --tasks-per-node K    treat each K consecutive ranks as one node (virtual nodes)\n" \
    "  --validate            check every received payload; a mismatch is an error\n"       \
    "  --seed S              seed of the random streams (per rank)\n"                       \
    "  --json FILE           write the whole run as JSON (atomically)\n"                    \
    "  --timeout S           end the run, naming where it was, after S seconds; 0: never\n" \
    "  --sync barrier|window start each call after a barrier, or when its window opens on\n" \
    "                        the synchronised clock [barrier]\n"                          \
    "  --window US           the windows' length with --sync window [1000]\n"             \
    "                        [$JB_TIMEOUT, else 0]\n"                                       \
    "  --version, --help\n"

typedef struct {
    const char *json_path;
    long calls, warmup;
    unsigned long long seed;
    int validate;
    long tasks_per_node; /* 0: from MPI_COMM_TYPE_SHARED */
    long timeout;        /* seconds; 0: no watchdog */
    int sync;            /* JB_SYNC_BARRIER or JB_SYNC_WINDOW */
    double window_us;
} jb_common;

/* This rank's MPI_Wtime against rank 0's (jb_sync_clocks). */
typedef struct {
    double offset;       /* rank 0's clock minus this one's, s */
    double error_bound;  /* the largest error of any rank's offset, s */
} jb_clock;

/* Where this rank lives: real nodes from MPI_Comm_split_type, or virtual
 * nodes of K consecutive ranks when --tasks-per-node K is given. */
typedef struct {
    int nnodes;          /* nodes in the job */
    int node;            /* this rank's node, 0..nnodes-1 */
    int local_rank;      /* rank within the node */
    int tasks_per_node;  /* equal on every node, or 0 when nodes differ */
    int min_tpn, max_tpn;
    int virtual_nodes;   /* 1 when forced by --tasks-per-node */
    int real_nnodes;     /* nodes as the MPI sees them */
    int real_local_size; /* ranks on this rank's real node */
    MPI_Comm leaders;    /* the first rank of each real node, or MPI_COMM_NULL */
} jb_nodes;

typedef struct {
    double wtick;        /* MPI_Wtick */
    double resolution;   /* smallest non-zero step of MPI_Wtime seen, s */
    double overhead;     /* mean cost of one MPI_Wtime call, s */
    int wtime_global;    /* MPI_WTIME_IS_GLOBAL */
} jb_timer;

typedef struct {
    const char *name;     /* benchmark name, e.g. "halo" */
    const char *usage;    /* benchmark-specific part of --help */
    int rank, size;
    int argc;
    char **argv;
    jb_common opt;
    jb_nodes nodes;
    jb_timer timer;
    jb_clock clock;
    char binding[16];        /* cores, shared, partial or none (jb_placement) */
    jb_json placement;       /* every rank's node and CPUs, rank 0 only */
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING]; /* its first line */
    size_t memory_per_task;  /* what a task may hold: its share of the smallest node */
    int write_failed;        /* an output could not be written: exit 1 */
    jb_json config;       /* the benchmark's "config" object, filled by it */
    jb_json results;      /* result entries, rank 0 only */
    jb_json *entry;       /* the result being written, or NULL */
    char line[4096];      /* the summary line being written */
    size_t line_len;
    char table_header[1024];
    char table_row[1024];
    int table_started;
} jb_ctx;

/* MPI_Init and defaults; calls and warmup are the benchmark's defaults. */
void jb_init(jb_ctx *ctx, int *argc, char ***argv, const char *name, const char *usage,
             long calls, long warmup);
/* getopt_long over the command line: the next option's code, or -1 at the end.
 * An unknown option, a missing value or a value given to an option that takes
 * none ends the run with one line naming the argument as written. */
int jb_getopt(jb_ctx *ctx, const struct option *longopts);
/* Handles a common option; returns 0 if c is not one. */
int jb_common_option(jb_ctx *ctx, int c, const char *arg);
/* Ends option parsing: rejects positional arguments, detects nodes,
 * calibrates the timer. */
void jb_options_done(jb_ctx *ctx, int optind_after);

/* Collective failure, for conditions every rank sees alike: rank 0 prints
 * "jb-NAME: error: ..." as one line, every rank finalizes and exits 2. */
void jb_fail(jb_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* For conditions seen on some ranks only: agreed by one MPI_Allreduce, so
 * every rank fails together (the message names how many ranks saw it). */
void jb_fail_if_any(jb_ctx *ctx, int local_bad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Ends the run naming the option when a jb_parse_* call failed (rc != 0,
 * message in err):  jb_option(ctx, "--calls", jb_parse_long(..., err), err). */
void jb_option(jb_ctx *ctx, const char *optname, int rc, const char *err);

/* Refuses the run, naming the largest term, when the memory it will hold per
 * task overflows or exceeds ctx->memory_per_task.  Every rank computes the
 * same sum from the options, so this needs no communication. */
void jb_memory_check(jb_ctx *ctx, const jb_memory *m);
/* calloc(count, size) for what (named in the error); a failure (only after
 * jb_memory_check passed: the node ran out) prints one line and aborts the job. */
void *jb_alloc(jb_ctx *ctx, size_t count, size_t size, const char *what);

/* Records every rank's node and CPU set, and whether the launcher bound them
 * (collective; prints "# binding: ..." and warns when bound ranks share a CPU). */
void jb_placement(jb_ctx *ctx);
/* Records each node's network devices, their state and rate, under "network"
 * in j and on a "# network:" line (collective over the node leaders). */
void jb_network(jb_ctx *ctx, jb_json *j);

/* ---- files ------------------------------------------------------------------
 * An output (--json, --samples) is checked before the run: not empty, not a
 * directory or device, in a folder that exists and can be written.  Collective. */
void jb_check_output(jb_ctx *ctx, const char *optname, const char *path);
/* Opens path's temporary twin for writing; jb_output_close fsyncs it and
 * renames it over path (or removes it and returns -1 with a message in err). */
FILE *jb_output_open(const char *path, char *tmp, size_t tmp_len, char *err);
int jb_output_close(FILE *f, const char *tmp, const char *path, char *err);
/* Reads a regular file of at most max_bytes on rank 0 and broadcasts it (in
 * chunks: 64-bit lengths); every rank gets it NUL-terminated.  Collective;
 * a missing, special (FIFO, device, folder) or oversized file fails the run. */
char *jb_read_input(jb_ctx *ctx, const char *optname, const char *path, size_t max_bytes);

/* ---- the watchdog (--timeout) ----------------------------------------------
 * The variant being measured and its calls, named when the run times out. */
void jb_watch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void jb_watch_call_done(void); /* jb_calls_record counts the timed calls */

/* Busy-waits for the given seconds (calibrated noise, not sleep: a sleeping
 * task would give its core away and change what is measured). */
void jb_busy_wait(double seconds);

/* Calibrated noise, --inject P:US[:SD]: at each chance (a call, an exchange) a
 * task waits with probability p, drawn from its own stream: us microseconds,
 * or with sd a gamma variate of that mean and standard deviation. */
typedef struct {
    double p, us, sd;
    int sleeps; /* --inject-by sleep: the task sleeps instead, giving its core to the node's others */
    jb_rng rng;
} jb_noise;
/* Parses P:US[:SD] into n (one line and exit on a bad value) */
void jb_noise_parse(jb_ctx *ctx, const char *optname, const char *text, jb_noise *n);
/* --inject-by spin|sleep */
void jb_noise_parse_by(jb_ctx *ctx, const char *text, jb_noise *n);
#define JB_NOISE_USAGE                                                                      \
    "  --inject P:US[:SD]    with probability P per task and chance, wait US us (SD: a gamma\n" \
    "                        variate of mean US and standard deviation SD) (calibrated noise)\n" \
    "  --inject-by HOW       spin (busy-wait: the core stays busy, as a daemon's would) or sleep\n" \
    "                        (where tasks outnumber cores: the others run meanwhile) [spin]\n"
/* Seeds this task's stream (--seed, rank) and records p and us in the config. */
void jb_noise_start(jb_ctx *ctx, jb_noise *n);
/* One chance: draws, and waits (spins or sleeps) if it hits; returns 1 if it did. */
int jb_noise_maybe(jb_noise *n);

/* Output.  A result is a set of key/value fields: every field goes into the
 * JSON entry and the summary line; fields with show != 0 also become a
 * column of the readable table.  Rank 0 only; other ranks ignore the calls. */
void jb_result_begin(jb_ctx *ctx);
void jb_result_str(jb_ctx *ctx, const char *key, const char *value, int show);
void jb_result_int(jb_ctx *ctx, const char *key, long long value, int show);
void jb_result_num(jb_ctx *ctx, const char *key, double value, int show);
jb_json *jb_result_json(jb_ctx *ctx); /* for JSON-only parts (series, histograms) */
void jb_result_end(jb_ctx *ctx);

/* Writes the JSON document (if --json) atomically, finalizes MPI; returns
 * the process exit code. */
int jb_finish(jb_ctx *ctx);

/* ---- per-call statistics over tasks ----------------------------------------
 * For call c and task t with time x[t][c] (us), as the Switch Jitter study
 * defines them: MAX = mean over c of max over t, AVG = mean over c of mean
 * over t, MIN likewise; plus percentiles of the per-call MAX and a merged
 * histogram of every x[t][c].  Three reductions of length "calls" and one of
 * the histogram: memory per rank never grows with the task count. */
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
} jb_calls;

void jb_calls_init(jb_ctx *ctx, jb_calls *s, long calls);
void jb_calls_memory(jb_memory *m, long calls);
void jb_calls_free(jb_calls *s);
void jb_calls_clear(jb_calls *s);
/* Before each result: clears s, names the variant for the watchdog (printf-like),
 * synchronises the clocks again.  Collective over MPI_COMM_WORLD. */
void jb_calls_begin(jb_ctx *ctx, jb_calls *s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Starts timed call c (c < 0: warm-up) as --sync says: after a barrier of comm,
 * or when its window opens; returns MPI_Wtime() at the start and records it. */
double jb_call_start(jb_ctx *ctx, jb_calls *s, MPI_Comm comm, long c);
/* Measures every rank's clock offset to rank 0's (collective). */
void jb_sync_clocks(jb_ctx *ctx);
double jb_global_time(const jb_ctx *ctx);
void jb_calls_record(jb_calls *s, long call, double us);
/* Collective over comm; root is rank 0.  Calls a task did not record do not
 * count; each call must be recorded by the same number of tasks. */
void jb_calls_reduce(jb_calls *s, MPI_Comm comm);
/* The mean over calls of the per-call MAX (us): max_us.  Rank 0, after the reduce. */
double jb_calls_mean_max(const jb_calls *s);
/* The same over calls first .. first + count - 1 (a trial's), and the least of it over the
 * trials of `calls` calls each that s holds, setting *which to that trial (rank 0). */
double jb_calls_trial_mean_max(const jb_calls *s, long first, long count);
double jb_calls_fastest_trial(const jb_calls *s, long calls, long *which);
/* Adds max_us, avg_us, min_us, jitter, p50_us .. p999_us, worst_us,
 * all_p50_us, all_p99_us and the histogram (and with series, the per-call
 * arrays) to the current result.  Rank 0 only. */
void jb_calls_report(jb_ctx *ctx, const jb_calls *s, int series);
/* The JSON text that says how each of those is aggregated (for "config"). */
void jb_calls_describe(jb_json *j);

#endif
