/* Start-up, options, collective errors, nodes and timer calibration. */
#include "jb_core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef JB_VERSION
#define JB_VERSION "unknown"
#endif

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
    jb_json_init(&ctx->config);
    jb_json_init(&ctx->results);
    jb_json_object(&ctx->config, NULL);
    jb_json_array(&ctx->results, NULL);
    opterr = 0; /* getopt would print on every rank; rank 0 reports instead */
}

__attribute__((noreturn)) static void fail_v(jb_ctx *ctx, const char *fmt, va_list ap)
{
    if (ctx->rank == 0) {
        char msg[1024];
        vsnprintf(msg, sizeof msg, fmt, ap);
        for (char *p = msg; *p; p++)
            if (*p == '\n')
                *p = ' ';
        fprintf(stderr, "jb-%s: error: %s\n", ctx->name, msg);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(2);
}

void jb_fail(jb_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(ctx, fmt, ap);
    va_end(ap);
}

void jb_fail_if_any(jb_ctx *ctx, int local_bad, const char *fmt, ...)
{
    int bad_ranks = 0;
    local_bad = local_bad != 0;
    MPI_Allreduce(&local_bad, &bad_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!bad_ranks)
        return;
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    jb_fail(ctx, "%s (on %d of %d ranks)", msg, bad_ranks, ctx->size);
}

__attribute__((noreturn)) static void print_help(jb_ctx *ctx)
{
    if (ctx->rank == 0)
        printf("usage: mpirun -np N jb-%s [options]\n%s%s", ctx->name, ctx->usage, JB_COMMON_HELP);
    MPI_Finalize();
    exit(0);
}

int jb_common_option(jb_ctx *ctx, int c, const char *arg)
{
    jb_common *o = &ctx->opt;
    long v;
    switch (c) {
    case 0x100: o->json_path = arg; return 1;
    case 0x101: JB_PARSE(ctx, "--calls", jb_parse_long(arg, 1, 100000000, &o->calls, err)); return 1;
    case 0x102: JB_PARSE(ctx, "--warmup", jb_parse_long(arg, 0, 100000000, &o->warmup, err)); return 1;
    case 0x103:
        JB_PARSE(ctx, "--seed", jb_parse_long(arg, 0, 0x7fffffffL, &v, err));
        o->seed = (unsigned long long)v;
        return 1;
    case 0x104: o->validate = 1; return 1;
    case 0x105:
        JB_PARSE(ctx, "--tasks-per-node", jb_parse_long(arg, 1, 1 << 20, &o->tasks_per_node, err));
        return 1;
    case 'h': print_help(ctx);
    case 0x106:
        if (ctx->rank == 0)
            printf("jb-%s %s\n", ctx->name, JB_VERSION);
        MPI_Finalize();
        exit(0);
    case ':':
        jb_fail(ctx, "option '%s' needs a value (see --help)", ctx->argv[optind - 1]);
    case '?':
        jb_fail(ctx, "unknown option '%s' (see --help)", ctx->argv[optind - 1]);
    default:
        return 0;
    }
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
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&node, 1, MPI_INT, 0, node_comm);
    MPI_Bcast(&nnodes, 1, MPI_INT, 0, node_comm);
    MPI_Comm_free(&node_comm);
    n->real_nnodes = nnodes;

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

/* An unwritable --json path is found before the run, not after it. */
static void check_json_path(jb_ctx *ctx)
{
    char reason[JB_ERRLEN] = "";
    if (ctx->rank == 0 && ctx->opt.json_path) {
        char probe[4096];
        snprintf(probe, sizeof probe, "%s.tmp.%ld", ctx->opt.json_path, (long)getpid());
        FILE *f = fopen(probe, "w");
        if (!f)
            snprintf(reason, sizeof reason, "--json: cannot write '%s': %s", ctx->opt.json_path, strerror(errno));
        else {
            fclose(f);
            remove(probe);
        }
    }
    MPI_Bcast(reason, sizeof reason, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (reason[0])
        jb_fail(ctx, "%s", reason);
}

void jb_options_done(jb_ctx *ctx, int optind_after)
{
    if (optind_after < ctx->argc)
        jb_fail(ctx, "unexpected argument '%s' (options start with --)", ctx->argv[optind_after]);
    check_json_path(ctx);
    detect_nodes(ctx);
    calibrate_timer(&ctx->timer);
    jb_json_int(&ctx->config, "calls", ctx->opt.calls);
    jb_json_int(&ctx->config, "warmup", ctx->opt.warmup);
    jb_json_bool(&ctx->config, "validate", ctx->opt.validate);
    jb_json_int(&ctx->config, "seed", (long long)ctx->opt.seed);
    if (ctx->rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0'; /* the first line names library and version */
        for (char *p = lib; *p; p++)
            if (*p == '\t')
                *p = ' ';
        printf("# jb-%s %s\n# mpi_library: %s\n", ctx->name, JB_VERSION, lib);
    }
}

void jb_busy_wait(double seconds)
{
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end)
        ;
}
