/* A run's start-up and tear-down, what a benchmark's main() begins and ends with:
 *     jb_init(&ctx, &argc, &argv, "name", usage, calls, warmup);
 *     ... its options: jb_getopt, jb_common_option (jb_options.h) ...
 *     jb_options_done(&ctx, optind);
 *     ... its calls and results ...
 *     return jb_finish(&ctx); */
#ifndef JB_RUN_H
#define JB_RUN_H

#include "jb_context.h"

/* MPI_Init and the defaults; calls and warmup are the benchmark's defaults. */
void jb_init(jb_ctx *ctx, int *argc, char ***argv, const char *name, const char *usage,
             long calls, long warmup);
/* Ends option parsing: rejects positional arguments, detects nodes, calibrates the timer,
 * then records the placement and the load and synchronises the clocks. */
void jb_options_done(jb_ctx *ctx, int optind_after);
/* Samples the load, writes the JSON document (if --json) atomically, finalizes MPI; returns
 * the process exit code. */
int jb_finish(jb_ctx *ctx);
/* The rank in ctx->world of a world rank (a slot: --inject-tasks, --trace-tasks), wherever
 * --rank-order put it; no message. */
int jb_rank_of_world(const jb_ctx *ctx, int world_rank);

#endif
