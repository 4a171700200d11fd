/* The options every benchmark takes: their defaults, their getopt_long table, their
 * parsing and their help. */
#ifndef JB_OPTIONS_H
#define JB_OPTIONS_H

#include <getopt.h>

#include "jb_context.h"

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
    JB_OPT_ROUNDS,
    JB_OPT_ORDER,
    JB_OPT_RANK_ORDER,
};

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
    {"rounds", required_argument, NULL, JB_OPT_ROUNDS},              \
    {"order", required_argument, NULL, JB_OPT_ORDER},                \
    {"rank-order", required_argument, NULL, JB_OPT_RANK_ORDER},      \
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
    "                        [$JB_TIMEOUT, else 0]\n"                                       \
    "  --sync barrier|window start each call after a barrier, or when its window opens on\n" \
    "                        the synchronised clock [barrier]\n"                          \
    "  --window US           the windows' length with --sync window [1000]\n"             \
    "  --order shuffled|given  shuffled: the variants (sizes, patterns, methods) take turns\n" \
    "                        in --rounds rounds, each round in a new order drawn from\n"    \
    "                        --seed, each running its share of the calls; given: each\n"  \
    "                        variant's calls in a row, in the order listed [shuffled]\n"   \
    "  --rounds R            rounds of the shuffled order, at most --calls [10]\n"         \
    "  --rank-order N        the ranks' roles rotated by N over the same placement: the nodes,\n" \
    "                        and each node's ranks among themselves; launches of N = 1, 2, ...\n" \
    "                        put each role on each slot in turn [0: as launched]\n" \
    "  --version, --help\n"

/* The common options' defaults, calls and warmup the benchmark's, and --timeout's from
 * $JB_TIMEOUT (a bad value ends the run); jb_init calls it. */
void jb_options_init(jb_ctx *ctx, long calls, long warmup);
/* getopt_long over the command line: the next option's code, or -1 at the end.
 * An unknown option, a missing value, a value given to an option that takes
 * none, or an option given twice ends the run with one line naming the argument
 * as written. */
int jb_getopt(jb_ctx *ctx, const struct option *longopts);
/* Handles a common option; returns 0 if c is not one. */
int jb_common_option(jb_ctx *ctx, int c, const char *arg);

#endif
