/* Start-up and the common options; once they are parsed, the nodes, each
 * task's share of memory, timer calibration, the placement and the clocks. */
#include "jb_options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jb_clock.h"
#include "jb_files.h"
#include "jb_json.h"
#include "jb_load.h"
#include "jb_parse.h"
#include "jb_placement.h"
#include "jb_watchdog.h"

#include "jb_version.h" /* JB_VERSION, written at every build (src/version.cmake) */

static void timeout_from_environment(jb_ctx *ctx);

static const char *const order_names[] = {"shuffled", "given", NULL};

void jb_init(jb_ctx *ctx, int *argc, char ***argv, const char *name, const char *usage,
             long calls, long warmup)
{
    memset(ctx, 0, sizeof *ctx);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
    ctx->name = name;
    ctx->usage = usage;
    ctx->argc = *argc;
    ctx->argv = *argv;
    ctx->opt.calls = calls;
    ctx->opt.warmup = warmup;
    ctx->opt.seed = 12345;
    ctx->opt.window_us = 1000;
    ctx->opt.rounds = 10;
    jb_json_init(&ctx->config);
    jb_json_init(&ctx->results);
    jb_json_init(&ctx->placement);
    jb_json_object(&ctx->config, NULL);
    jb_json_array(&ctx->results, NULL);
    opterr = 0; /* getopt would print on every rank; rank 0 reports instead */
    timeout_from_environment(ctx);
}

__attribute__((noreturn)) static void print_help(jb_ctx *ctx)
{
    if (ctx->rank == 0)
        printf("usage: mpirun -np N jb-%s [options]\n%s%s", ctx->name, ctx->usage, JB_COMMON_HELP);
    MPI_Finalize();
    exit(0);
}

int jb_getopt(jb_ctx *ctx, const struct option *longopts)
{
    /* the word getopt_long works on is argv[optind] as it enters, whether it starts
     * a word or is inside one ("-ZZ": optind moves past a word after its last
     * letter), once non-options, which it moves aside, are skipped */
    int at = optind;
    while (at + 1 < ctx->argc && ctx->argv[at][0] != '-')
        at++;
    int c = getopt_long(ctx->argc, ctx->argv, ":h", longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    const char *word = at < ctx->argc ? ctx->argv[at] : "";
    int name_len = (int)strcspn(word, "=");
    if (c == ':')
        jb_fail(ctx, "option '%.*s' needs a value (see --help)", name_len, word);
    for (const struct option *o = longopts; word[name_len] && strncmp(word, "--", 2) == 0 && o->name; o++)
        if (o->has_arg == no_argument && (int)strlen(o->name) == name_len - 2 &&
            strncmp(o->name, word + 2, (size_t)name_len - 2) == 0)
            jb_fail(ctx, "option '%.*s' takes no value (see --help)", name_len, word);
    jb_fail(ctx, "unknown option '%.*s' (see --help)", strncmp(word, "--", 2) == 0 ? name_len : (int)strlen(word),
            word);
}

int jb_common_option(jb_ctx *ctx, int c, const char *arg)
{
    jb_common *o = &ctx->opt;
    char err[JB_ERRLEN];
    long v;
    switch (c) {
    case JB_OPT_JSON: o->json_path = arg; return 1;
    case JB_OPT_CALLS: jb_option(ctx, "--calls", jb_parse_long(arg, 1, 100000000, &o->calls, err), err); return 1;
    case JB_OPT_WARMUP: jb_option(ctx, "--warmup", jb_parse_long(arg, 0, 100000000, &o->warmup, err), err); return 1;
    case JB_OPT_SEED:
        jb_option(ctx, "--seed", jb_parse_long(arg, 0, 0x7fffffffL, &v, err), err);
        o->seed = (unsigned long long)v;
        return 1;
    case JB_OPT_VALIDATE: o->validate = 1; return 1;
    case JB_OPT_TASKS_PER_NODE:
        jb_option(ctx, "--tasks-per-node", jb_parse_long(arg, 1, 1 << 20, &o->tasks_per_node, err), err);
        return 1;
    case JB_OPT_TIMEOUT: jb_option(ctx, "--timeout", jb_parse_long(arg, 0, 100000000, &o->timeout, err), err); return 1;
    case JB_OPT_SYNC:
        if ((o->sync = jb_lookup(arg, jb_sync_names)) < 0)
            jb_fail(ctx, "--sync: '%s' is not barrier or window", arg);
        return 1;
    case JB_OPT_WINDOW: jb_option(ctx, "--window", jb_parse_double(arg, 1, 1e7, &o->window_us, err), err); return 1;
    case JB_OPT_ROUNDS: jb_option(ctx, "--rounds", jb_parse_long(arg, 1, 1000000, &o->rounds, err), err); return 1;
    case JB_OPT_ORDER:
        if ((v = jb_lookup(arg, order_names)) < 0)
            jb_fail(ctx, "--order: '%s' is not shuffled or given", arg);
        o->order_given = v == 1;
        return 1;
    case 'h': print_help(ctx);
    case JB_OPT_VERSION:
        if (ctx->rank == 0)
            printf("jb-%s %s\n", ctx->name, JB_VERSION);
        MPI_Finalize();
        exit(0);
    default:
        return 0;
    }
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

/* $JB_TIMEOUT: a site's default for --timeout, checked like the option. */
static void timeout_from_environment(jb_ctx *ctx)
{
    const char *env = getenv("JB_TIMEOUT");
    char err[JB_ERRLEN];
    if (env && *env)
        jb_option(ctx, "JB_TIMEOUT", jb_parse_long(env, 0, 100000000, &ctx->opt.timeout, err), err);
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

    long k = ctx->opt.tasks_per_node;
    if (k > 0) {
        if (ctx->size % k != 0)
            jb_fail(ctx, "--tasks-per-node %ld does not divide the %d ranks", k, ctx->size);
        n->virtual_nodes = 1;
        n->nnodes = ctx->size / (int)k;
        n->node = ctx->rank / (int)k;
        n->local_rank = ctx->rank % (int)k;
        n->tasks_per_node = n->min_tpn = n->max_tpn = (int)k;
        return;
    }
    n->nnodes = nnodes;
    n->node = node;
    n->local_rank = local_rank;
    MPI_Allreduce(&local_size, &n->min_tpn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&local_size, &n->max_tpn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    n->tasks_per_node = n->min_tpn == n->max_tpn ? n->min_tpn : 0;
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
 * x86; "unknown" elsewhere) and its online CPUs: a reference file's fingerprint holds
 * both, so references are not taken to another machine. */
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
}

void jb_options_done(jb_ctx *ctx, int optind_after)
{
    if (optind_after < ctx->argc)
        jb_fail(ctx, "unexpected argument '%s' (options start with --)", ctx->argv[optind_after]);
    if (ctx->opt.json_path)
        jb_check_output(ctx, "--json", ctx->opt.json_path);
    detect_nodes(ctx);
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
        printf("# jb-%s %s\n# mpi_library: %s\n# cpu: %s; %d CPUs\n", ctx->name, JB_VERSION, ctx->mpi_library,
               ctx->cpu_model, ctx->cpus);
    }
    jb_placement(ctx);
    jb_load_sample(ctx, 0);
    jb_sync_clocks(&ctx->clock);
    jb_json_num(&ctx->config, "clock_error_us", ctx->clock.error_bound * 1e6);
    jb_watchdog_start(ctx);
}
