/* The run's context, which every MPI piece of the core takes: the common
 * options' values, the nodes, the timer and clock, what the output collects;
 * and what every piece may need of it: collective errors and checked memory. */
#ifndef JB_CONTEXT_H
#define JB_CONTEXT_H

#include <mpi.h>
#include <stddef.h>

#include "jb_clock.h"
#include "jb_json.h"
#include "jb_parse.h"

/* The common options' values (jb_options.h parses them). */
typedef struct {
    const char *json_path;
    long calls, warmup;
    unsigned long long seed;
    int validate;
    long tasks_per_node; /* 0: from MPI_COMM_TYPE_SHARED */
    long timeout;        /* seconds; 0: no watchdog */
    int sync;            /* JB_SYNC_BARRIER or JB_SYNC_WINDOW */
    double window_us;
    long rounds;         /* --rounds: the shuffled order's rounds */
    int order_given;     /* --order given: the variants one after another */
    long rank_order;     /* --rank-order: the ranks' roles rotated by N over the placement (0: as launched) */
} jb_common;

/* Where this rank lives: real nodes from MPI_Comm_split_type, or virtual
 * nodes of K consecutive ranks when --tasks-per-node K is given. */
typedef struct {
    int nnodes;          /* nodes in the job */
    int node;            /* this rank's node, 0..nnodes-1, in the order ctx->world gives them */
    int local_rank;      /* rank within the node, in that order */
    int listed;          /* the node's index in the node list (MPI_COMM_WORLD's order): what a
                          * node is named by, whatever --rank-order made it play */
    int tasks_per_node;  /* equal on every node, or 0 when nodes differ */
    int min_tpn, max_tpn;
    int virtual_nodes;   /* 1 when forced by --tasks-per-node */
    int real_nnodes;     /* nodes as the MPI sees them */
    int real_local_size; /* ranks on this rank's real node */
    MPI_Comm leaders;    /* one rank of each real node (its lowest in ctx->world), in the node
                          * list's order; MPI_COMM_NULL on the others */
    int writer;          /* the leaders' rank of ctx->rank 0: the root of what they gather */
} jb_nodes;

typedef struct {
    double wtick;        /* MPI_Wtick */
    double resolution;   /* smallest non-zero step of MPI_Wtime seen, s */
    double overhead;     /* mean cost of one MPI_Wtime call, s */
    int wtime_global;    /* MPI_WTIME_IS_GLOBAL */
} jb_timer;

/* One node's load (jb_load.h): the node where runnable tasks most exceed its CPUs
 * and the job's tasks on it. */
typedef struct {
    int taken;           /* 0: not sampled (yet) */
    int node;            /* index in the node list */
    char host[64];
    double load1;        /* 1-minute load average */
    long runnable, tasks_total; /* the kernel's runnable and existing tasks (threads) */
    double steal_pct;    /* CPU time stolen by the hypervisor: since boot at the start, over the run at
                          * the end; -1 when the kernel does not say */
    double probe_us;     /* the job's speed, not the node's: the slowest task's time for a fixed
                          * computation (load.c's probe), taken by every task at once */
    double window_us, window_min_us; /* the whole probe's time (its timings together, a task's
                          * stalls counted), the slowest task's and the fastest's: the one over the other
                          * is how far the slowest node lags its peers in the same instant, which a load
                          * on every node (the virtual cluster's shared cores) does not move */
    double pair_ns;      /* how far apart the job's CPUs are: the largest over nodes of a cache line's
                          * round trip between a node's first and last task; -1: no node holds two */
    char probe_host[64], window_host[64], pair_host[64]; /* the nodes that held the slowest probe, the
                          * slowest window and the farthest pair */
    int cpus;            /* online CPUs of the node */
    int job_tasks;       /* this job's ranks on the node */
    int job_cpus;        /* CPUs the job's ranks there may use (their affinity sets' union) */
} jb_load_sample_t;

typedef struct {
    const char *name;     /* benchmark name, e.g. "halo" */
    const char *usage;    /* benchmark-specific part of --help */
    /* The job's ranks in the order the benchmark gives them roles: MPI_COMM_WORLD as launched,
     * or rotated over the placement by --rank-order (jb_options_done); rank is this task's rank in it. */
    MPI_Comm world;
    int rank, size;
    int world_rank;       /* this task's rank in MPI_COMM_WORLD: the launcher's slot, what a task is named by */
    int argc;
    char **argv;
    jb_common opt;
    jb_nodes nodes;
    jb_timer timer;
    jb_clock clock;
    char binding[16];        /* cores, shared, partial or none (jb_placement) */
    int node_job_cpus;       /* node leaders: CPUs the node's ranks may use, 0 if unknown (jb_placement) */
    jb_load_sample_t load_before, load_after; /* rank 0 (jb_load) */
    jb_json placement;       /* every rank's node and CPUs, rank 0 only */
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING]; /* its first line */
    char cpu_model[128];     /* rank 0's node: /proc/cpuinfo's model name, or "unknown" */
    char hardware[512];      /* rank 0's node: its processor and caches (jb_hardware_facts) */
    int cpus;                /* rank 0's node: online CPUs, 0 if unknown */
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

#endif
