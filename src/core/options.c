/* The common options: their defaults, their parsing and their help. */
#include "jb_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jb_clock.h"
#include "jb_parse.h"

#include "jb_version.h" /* JB_VERSION, written at every build (src/version.cmake) */

static const char *const order_names[] = {"shuffled", "given", NULL};

__attribute__((noreturn)) static void print_help(jb_ctx *ctx)
{
    if (ctx->rank == 0)
        printf("usage: mpirun -np N jb-%s [options]\n%s%s", ctx->name, ctx->usage, JB_COMMON_HELP);
    MPI_Finalize();
    exit(0);
}

/* The option codes a command line gave so far: an option given twice is refused, not
 * the last one taken (`--json a.json --json b.json` wrote only b; `--calls 1 --calls 2`
 * ran 2), the same for every benchmark and option.  A new parse (optind back at its
 * start) forgets them.  Codes are the options' own: a long and a short name of one
 * option share theirs, so `-p x --pattern y` is a repeat too. */
#define JB_MAX_OPTIONS 128
static int seen_codes[JB_MAX_OPTIONS];
static int seen_count;

/* Whether code was given before in this parse; notes it otherwise. */
static int given_before(int code)
{
    for (int i = 0; i < seen_count; i++)
        if (seen_codes[i] == code)
            return 1;
    if (seen_count < JB_MAX_OPTIONS) /* more distinct options than any table holds: none lost */
        seen_codes[seen_count++] = code;
    return 0;
}

int jb_getopt(jb_ctx *ctx, const struct option *longopts)
{
    /* the word getopt_long works on is argv[optind] as it enters, whether it starts
     * a word or is inside one ("-ZZ": optind moves past a word after its last
     * letter), once non-options, which it moves aside, are skipped */
    if (optind <= 1)
        seen_count = 0;
    int at = optind;
    while (at + 1 < ctx->argc && ctx->argv[at][0] != '-')
        at++;
    int c = getopt_long(ctx->argc, ctx->argv, ":h", longopts, NULL);
    const char *word = at < ctx->argc ? ctx->argv[at] : "";
    int name_len = (int)strcspn(word, "=");
    if (c == -1)
        return c;
    if (c != '?' && c != ':') {
        if (given_before(c))
            jb_fail(ctx, "option '%.*s' given twice; give each option once (see --help)", name_len, word);
        return c;
    }
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
    case JB_OPT_RANK_ORDER:
        jb_option(ctx, "--rank-order", jb_parse_long(arg, 0, 0x7fffffffL, &o->rank_order, err), err);
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

/* $JB_TIMEOUT: a site's default for --timeout, checked like the option. */
static void timeout_from_environment(jb_ctx *ctx)
{
    const char *env = getenv("JB_TIMEOUT");
    char err[JB_ERRLEN];
    if (env && *env)
        jb_option(ctx, "JB_TIMEOUT", jb_parse_long(env, 0, 100000000, &ctx->opt.timeout, err), err);
}

void jb_options_init(jb_ctx *ctx, long calls, long warmup)
{
    ctx->opt.calls = calls;
    ctx->opt.warmup = warmup;
    ctx->opt.seed = 12345;
    ctx->opt.window_us = 1000;
    ctx->opt.rounds = 10;
    opterr = 0; /* getopt would print on every rank; rank 0 reports instead */
    timeout_from_environment(ctx);
}
