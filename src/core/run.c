/* A run's start-up and tear-down: MPI and the defaults; once the options are parsed, the
 * nodes, each task's share of memory, the timer, the placement, the load and the clocks;
 * at the end, the load again, the JSON document and MPI_Finalize. */
#include "jb_run.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jb_clock.h"
#include "jb_files.h"
#include "jb_hardware.h"
#include "jb_json.h"
#include "jb_load.h"
#include "jb_options.h"
#include "jb_output.h"
#include "jb_placement.h"
#include "jb_watchdog.h"

#include "jb_version.h" /* JB_VERSION, written at every build (src/version.cmake) */

void jb_init(jb_ctx *ctx, int *argc, char ***argv, const char *name, const char *usage,
             long calls, long warmup)
{
    memset(ctx, 0, sizeof *ctx);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
    ctx->world = MPI_COMM_WORLD; /* until --rank-order is read (jb_options_done) */
    ctx->world_rank = ctx->rank;
    ctx->name = name;
    ctx->usage = usage;
    ctx->argc = *argc;
    ctx->argv = *argv;
    jb_json_init(&ctx->config);
    jb_json_init(&ctx->results);
    jb_json_init(&ctx->placement);
    jb_json_object(&ctx->config, NULL);
    jb_json_array(&ctx->results, NULL);
    jb_options_init(ctx, calls, warmup);
}

/* Half what a limit on this task's address space (ulimit -v, a batch system's) leaves above what it
 * holds already (the MPI's libraries and buffers), or ULLONG_MAX without one: beyond it an
 * allocation fails on one rank, whose only way out is MPI_Abort and the MPI's banner. */
static unsigned long long address_space_left(long page)
{
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
        return ULLONG_MAX;
    unsigned long long held = 0, pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) == 1 && page > 0)
            held = pages * (unsigned long long)page;
        fclose(f);
    }
    return (unsigned long long)as.rlim_cur > held ? ((unsigned long long)as.rlim_cur - held) / 2 : 0;
}

/* A task's share of its node's memory, the smallest over all nodes: half the
 * node's physical memory over the tasks on it, the rest left to the MPI's own
 * buffers, the system and the other tasks' page tables; less where a limit on
 * the task's address space leaves less. */
static void memory_per_task(jb_ctx *ctx)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    unsigned long long node = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : 1ULL << 32;
    unsigned long long mine = node / 2 / (unsigned long long)ctx->nodes.real_local_size, least;
    unsigned long long limited = address_space_left(page);
    if (limited < mine)
        mine = limited;
    MPI_Allreduce(&mine, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    ctx->memory_per_task = least > (size_t)-1 ? (size_t)-1 : (size_t)least;
}

static void detect_nodes(jb_ctx *ctx)
{
    jb_nodes *n = &ctx->nodes;
    MPI_Comm node_comm, leaders;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    int local_rank, local_size;
    MPI_Comm_rank(node_comm, &local_rank);
    MPI_Comm_size(node_comm, &local_size);
    MPI_Comm_split(MPI_COMM_WORLD, local_rank == 0 ? 0 : MPI_UNDEFINED, ctx->rank, &leaders);
    int node = 0, nnodes = 0;
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &node);
        MPI_Comm_size(leaders, &nnodes);
    }
    MPI_Bcast(&node, 1, MPI_INT, 0, node_comm);
    MPI_Bcast(&nnodes, 1, MPI_INT, 0, node_comm);
    MPI_Comm_free(&node_comm);
    n->real_nnodes = nnodes;
    n->real_local_size = local_size;
    n->leaders = leaders; /* the node list is gathered over it at the end */
    n->writer = 0;

    long k = ctx->opt.tasks_per_node;
    if (k > 0) {
        if (ctx->size % k != 0)
            jb_fail(ctx, "--tasks-per-node %ld does not divide the %d ranks", k, ctx->size);
        n->virtual_nodes = 1;
        n->nnodes = ctx->size / (int)k;
        n->node = n->listed = ctx->rank / (int)k;
        n->local_rank = ctx->rank % (int)k;
        n->tasks_per_node = n->min_tpn = n->max_tpn = (int)k;
        return;
    }
    n->nnodes = nnodes;
    n->node = n->listed = node;
    n->local_rank = local_rank;
    MPI_Allreduce(&local_size, &n->min_tpn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&local_size, &n->max_tpn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    n->tasks_per_node = n->min_tpn == n->max_tpn ? n->min_tpn : 0;
}

/* --rank-order N: the ranks' roles rotated over the placement.  A rank slow for its role (rank 0
 * reduces and writes; a grid's corner has fewer neighbours) and one slow for its slot (a core that
 * takes interrupts, a node) look alike within one launch; over launches N = 1, 2, ... each role
 * plays on each slot in turn, so only a slot stays put (issue 41: the culprit over launches).  A
 * rotation, not a random shuffle: over L launches a role plays L/n times on each of n slots,
 * rounded, where a random shuffle leaves it on one of two slots in all of five launches 1 time in
 * 16.  The nodes rotate by N, and each node's ranks among themselves by N / nodes, so that nodes x
 * ranks consecutive orders visit every slot (one shift for both would visit 2 of 4 on 2 nodes of
 * 2).  Every node keeps its tasks and a node's ranks stay consecutive in ctx->world: block
 * placement, the grids' bunching and the off-node counts are what they were.  ctx->nodes.node and
 * local_rank become the rotated ones; listed and world_rank keep naming the slot.  O(1) memory: no
 * rank of 100,000 holds a permutation. */
static void rotate_ranks(jb_ctx *ctx)
{
    jb_nodes *n = &ctx->nodes;
    long order = ctx->opt.rank_order;
    jb_json_int(&ctx->config, "rank_order", order);
    if (order == 0)
        return;
    int local_size = n->virtual_nodes ? n->tasks_per_node : n->real_local_size;
    size_t keys;
    if (jb_mul((size_t)n->nnodes, (size_t)n->max_tpn, &keys) || keys > (size_t)INT_MAX)
        jb_fail(ctx, "--rank-order: %d nodes x %d ranks on the fullest are more than 2^31 - 1 places", n->nnodes,
                n->max_tpn);
    n->node = (int)((n->listed + order % n->nnodes) % n->nnodes);
    n->local_rank = (int)((n->local_rank + order / n->nnodes % local_size) % local_size);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n->node * n->max_tpn + n->local_rank, &ctx->world);
    MPI_Comm_rank(ctx->world, &ctx->rank);

    /* the leaders again: on each real node its lowest rank in ctx->world, so that rank 0, which
     * writes what they gather, is one; ordered as the node list was */
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    int lowest, listed = 0;
    MPI_Allreduce(&ctx->rank, &lowest, 1, MPI_INT, MPI_MIN, node_comm);
    if (n->leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(n->leaders, &listed);
        MPI_Comm_free(&n->leaders);
    }
    MPI_Bcast(&listed, 1, MPI_INT, 0, node_comm); /* the real node's index, from its first rank */
    MPI_Comm_free(&node_comm);
    MPI_Comm_split(MPI_COMM_WORLD, ctx->rank == lowest ? 0 : MPI_UNDEFINED, listed, &n->leaders);
    n->writer = listed;
    MPI_Bcast(&n->writer, 1, MPI_INT, 0, ctx->world);
    if (ctx->rank == 0)
        jb_json_int(&ctx->config, "task_0_world_rank", ctx->world_rank);
}

int jb_rank_of_world(const jb_ctx *ctx, int world_rank)
{
    MPI_Group world, mine;
    int rank;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_group(ctx->world, &mine);
    MPI_Group_translate_ranks(world, 1, &world_rank, mine, &rank);
    MPI_Group_free(&world);
    MPI_Group_free(&mine);
    return rank;
}

static void calibrate_timer(jb_timer *t)
{
    t->wtick = MPI_Wtick();
    int flag = 0, *global = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
    t->wtime_global = flag && global ? *global : 0;

    double best = 1.0;
    for (int i = 0; i < 1000; i++) {
        double t0 = MPI_Wtime(), t1;
        while ((t1 = MPI_Wtime()) == t0)
            ;
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    t->resolution = best;

    enum { CALLS = 100000 };
    double start = MPI_Wtime();
    for (int i = 0; i < CALLS; i++)
        (void)MPI_Wtime();
    t->overhead = (MPI_Wtime() - start) / CALLS;
}

/* The CPU model of this node (/proc/cpuinfo's first "model name", as Linux gives it on
 * x86; "unknown" elsewhere), its online CPUs and its hardware (jb_hardware_facts): a
 * reference file's fingerprint holds them, so references are not taken to another machine. */
static void read_cpu(jb_ctx *ctx)
{
    snprintf(ctx->cpu_model, sizeof ctx->cpu_model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon += strspn(colon + 1, " \t") + 1;
        colon[strcspn(colon, "\n")] = '\0';
        if (*colon)
            snprintf(ctx->cpu_model, sizeof ctx->cpu_model, "%s", colon);
        break;
    }
    if (f)
        fclose(f);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->cpus = online > 0 && online < INT_MAX ? (int)online : 0;
    jb_hardware_facts("", ctx->hardware, sizeof ctx->hardware);
}

void jb_options_done(jb_ctx *ctx, int optind_after)
{
    if (optind_after < ctx->argc)
        jb_fail(ctx, "unexpected argument '%s' (options start with --)", ctx->argv[optind_after]);
    if (ctx->opt.json_path)
        jb_check_output(ctx, "--json", ctx->opt.json_path);
    detect_nodes(ctx);
    rotate_ranks(ctx);
    memory_per_task(ctx);
    calibrate_timer(&ctx->timer);
    jb_json_int(&ctx->config, "calls", ctx->opt.calls);
    jb_json_int(&ctx->config, "warmup", ctx->opt.warmup);
    jb_json_bool(&ctx->config, "validate", ctx->opt.validate);
    jb_json_int(&ctx->config, "seed", (long long)ctx->opt.seed);
    jb_json_int(&ctx->config, "timeout_s", ctx->opt.timeout);
    jb_json_str(&ctx->config, "sync", jb_sync_names[ctx->opt.sync]);
    if (ctx->opt.sync == JB_SYNC_WINDOW)
        jb_json_num(&ctx->config, "window_us", ctx->opt.window_us);
    int len;
    MPI_Get_library_version(ctx->mpi_library, &len);
    ctx->mpi_library[strcspn(ctx->mpi_library, "\n")] = '\0'; /* the first line names library and version */
    for (char *p = ctx->mpi_library; *p; p++)
        if (*p == '\t')
            *p = ' ';
    for (len = (int)strlen(ctx->mpi_library); len > 0 && ctx->mpi_library[len - 1] == ' ';)
        ctx->mpi_library[--len] = '\0';
    if (ctx->rank == 0) {
        read_cpu(ctx);
        printf("# jb-%s %s\n# mpi_library: %s\n# cpu: %s; %d CPUs\n# hardware: %s\n", ctx->name, JB_VERSION,
               ctx->mpi_library, ctx->cpu_model, ctx->cpus, ctx->hardware);
        if (ctx->opt.rank_order)
            printf("# rank_order: %ld (the roles rotated): task 0 is world rank %d, on node %d of the list\n",
                   ctx->opt.rank_order, ctx->world_rank, ctx->nodes.listed);
    }
    jb_placement(ctx);
    jb_load_sample(ctx, 0);
    jb_sync_clocks(&ctx->clock, ctx->world);
    jb_json_num(&ctx->config, "clock_error_us", ctx->clock.error_bound * 1e6);
    jb_watchdog_start(ctx);
}

int jb_finish(jb_ctx *ctx)
{
    /* a payload mismatch ends the run before this point (jb_fail_if_any) */
    if (ctx->rank == 0 && ctx->opt.validate)
        printf("# validate: every payload arrived intact\n");
    jb_load_sample(ctx, 1); /* collective */
    int rc = jb_output_document(ctx) != 0 ? 1 : ctx->write_failed;
    jb_json_free(&ctx->config);
    jb_json_free(&ctx->results);
    jb_json_free(&ctx->placement);
    if (ctx->nodes.leaders != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->nodes.leaders);
    MPI_Finalize();
    alarm(0); /* a finalize that hangs is still the watchdog's */
    return rc;
}
