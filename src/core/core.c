/* Start-up, options, collective errors, nodes, memory, the watchdog and
 * timer calibration. */
#include "jb_core.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef JB_VERSION
#define JB_VERSION "unknown"
#endif

static void timeout_from_environment(jb_ctx *ctx);

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
    jb_json_init(&ctx->config);
    jb_json_init(&ctx->results);
    jb_json_init(&ctx->placement);
    jb_json_object(&ctx->config, NULL);
    jb_json_array(&ctx->results, NULL);
    opterr = 0; /* getopt would print on every rank; rank 0 reports instead */
    timeout_from_environment(ctx);
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

void jb_option(jb_ctx *ctx, const char *optname, int rc, const char *err)
{
    if (rc != 0)
        jb_fail(ctx, "%s: %s", optname, err);
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

/* ---- memory --------------------------------------------------------------- */

/* A task's share of its node's memory, the smallest over all nodes: half the
 * node's physical memory over the tasks on it, the rest left to the MPI's own
 * buffers, the system and the other tasks' page tables. */
static void memory_per_task(jb_ctx *ctx)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    unsigned long long node = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : 1ULL << 32;
    unsigned long long mine = node / 2 / (unsigned long long)ctx->nodes.real_local_size, least;
    MPI_Allreduce(&mine, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    ctx->memory_per_task = least > (size_t)-1 ? (size_t)-1 : (size_t)least;
}

void jb_memory_check(jb_ctx *ctx, const jb_memory *m)
{
    if (m->overflow)
        jb_fail(ctx, "the options ask for more memory than can be counted (%s)", m->largest);
    if (m->bytes > ctx->memory_per_task)
        jb_fail(ctx, "the options ask for %zu bytes per task, over the %zu a task of the smallest node may hold "
                     "(half its memory over its tasks); the most for %s: %zu bytes",
                m->bytes, ctx->memory_per_task, m->largest, m->largest_bytes);
}

void *jb_alloc(jb_ctx *ctx, size_t count, size_t size, const char *what)
{
    size_t bytes;
    void *p = jb_mul(count, size, &bytes) ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "jb-%s: error: rank %d cannot allocate %zu x %zu bytes for %s\n", ctx->name, ctx->rank,
                count, size, what);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* ---- the watchdog ------------------------------------------------------------
 * SIGALRM after --timeout seconds.  Rank 0 writes one line naming the benchmark,
 * the variant and how many calls it had timed, and ends; the other ranks end a
 * second later, so the launcher reports rank 0's line and nothing else first.
 * The handler uses only write, alarm and _exit (async-signal-safe). */
static struct {
    char head[160];  /* "jb-NAME: error: --timeout N s passed in " */
    char where[256]; /* the variant, set by jb_watch */
    volatile sig_atomic_t calls_done, rank, fired;
} watchdog;

void jb_watch(const char *fmt, ...)
{
    /* the handler may read `where` at any moment: its last byte is never written,
     * so it always ends in NUL, whatever a torn read shows before it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(watchdog.where, sizeof watchdog.where - 1, fmt, ap);
    va_end(ap);
    watchdog.calls_done = 0;
}

void jb_watch_call_done(void) { watchdog.calls_done++; }

static void write_all(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_timeout(int sig)
{
    (void)sig;
    if (watchdog.rank != 0 && !watchdog.fired) {
        watchdog.fired = 1;
        alarm(1);
        return;
    }
    if (watchdog.rank == 0) {
        char count[24], *p = count + sizeof count;
        long n = watchdog.calls_done;
        *--p = '\0';
        do
            *--p = (char)('0' + n % 10);
        while ((n /= 10) > 0);
        write_all(watchdog.head);
        write_all(watchdog.where[0] ? watchdog.where : "set-up");
        write_all(" after ");
        write_all(p);
        write_all(" timed call(s); the run is stopped\n");
    }
    _exit(3);
}

static void start_watchdog(jb_ctx *ctx)
{
    if (ctx->opt.timeout == 0)
        return;
    snprintf(watchdog.head, sizeof watchdog.head, "jb-%s: error: --timeout %ld s passed in ", ctx->name,
             ctx->opt.timeout);
    watchdog.rank = ctx->rank;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timeout;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)ctx->opt.timeout);
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
    if (ctx->rank == 0)
        printf("# jb-%s %s\n# mpi_library: %s\n", ctx->name, JB_VERSION, ctx->mpi_library);
    jb_placement(ctx);
    jb_sync_clocks(ctx);
    jb_json_num(&ctx->config, "clock_error_us", ctx->clock.error_bound * 1e6);
    start_watchdog(ctx);
}

void jb_busy_wait(double seconds)
{
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end)
        ;
}

void jb_noise_parse(jb_ctx *ctx, const char *optname, const char *text, jb_noise *n)
{
    static const char *const names[] = {"probability", "wait (us)", "wait's standard deviation (us)"};
    /* up to 10 s of noise at a chance: longer is a hang, not noise */
    static const double lo[] = {0.0, 1e-3, 0.0}, hi[] = {1.0, 1e7, 1e7};
    double *into[] = {&n->p, &n->us, &n->sd};
    char buf[192], *part[3], *at = buf, err[JB_ERRLEN], what[128];
    int count = 0;
    if (strlen(text) < sizeof buf) {
        strcpy(buf, text);
        for (; at && count < 3; count++) {
            part[count] = at;
            if ((at = strchr(at, ':')))
                *at++ = '\0';
        }
    }
    if (count < 2 || at) /* too long, no wait, or more than three parts */
        jb_fail(ctx, "%s: '%s' is not P:US or P:US:SD, a probability, a wait and its standard deviation in "
                     "microseconds", optname, text);
    n->sd = 0;
    for (int k = 0; k < count; k++) {
        snprintf(what, sizeof what, "%s %s", optname, names[k]);
        jb_option(ctx, what, jb_parse_double(part[k], lo[k], hi[k], into[k], err), err);
    }
}

void jb_noise_start(jb_ctx *ctx, jb_noise *n)
{
    jb_rng_seed(&n->rng, ctx->opt.seed, (uint64_t)ctx->rank);
    jb_json_num(&ctx->config, "inject_probability", n->p);
    jb_json_num(&ctx->config, "inject_us", n->us);
    jb_json_num(&ctx->config, "inject_sd_us", n->sd);
    jb_json_str(&ctx->config, "inject_by", n->sleeps ? "sleep" : "spin");
}

void jb_noise_parse_by(jb_ctx *ctx, const char *text, jb_noise *n)
{
    static const char *const ways[] = {"spin", "sleep", NULL};
    int way = jb_lookup(text, ways);
    if (way < 0)
        jb_fail(ctx, "--inject-by: '%s' is not spin or sleep", text);
    n->sleeps = way == 1;
}

/* until MPI_Wtime() reaches end, a millisecond or less at a time (a signal may wake it early) */
static void sleep_until(double end)
{
    for (double left; (left = end - MPI_Wtime()) > 0;) {
        left = left < 1e-3 ? left : 1e-3;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

int jb_noise_maybe(jb_noise *n)
{
    if (!(n->p > 0) || jb_rng_uniform(&n->rng) >= n->p)
        return 0;
    double seconds = jb_rng_gamma(&n->rng, n->us, n->sd) * 1e-6;
    if (n->sleeps)
        sleep_until(MPI_Wtime() + seconds);
    else
        jb_busy_wait(seconds);
    return 1;
}
