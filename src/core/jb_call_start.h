/* When each timed call starts: the variants' turns in a schedule, the beginning of each
 * result or share (the watchdog told, the clocks synchronised again, the windows opened),
 * and each call's start after a barrier or in its window (--sync).  What it learns of the
 * starts it writes into the call's jb_calls, whose reduction reports their skew. */
#ifndef JB_CALL_START_H
#define JB_CALL_START_H

#include <mpi.h>

#include "jb_calls.h"
#include "jb_context.h"
#include "jb_schedule.h"

/* Before each result: clears s, names the variant for the watchdog (printf-like),
 * synchronises the clocks again.  Collective over ctx->world. */
void jb_calls_begin(jb_ctx *ctx, jb_calls *s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ---- variants in the order of a schedule (jb_schedule.h) -----------------
 * A benchmark keeps one jb_calls per variant and runs:
 *     jb_calls_schedule(ctx, &sch, variants, calls);
 *     while (jb_schedule_next(&sch)) {
 *         jb_calls_share(ctx, &st[sch.variant], &sch, "name of the variant,");
 *         for (long c = sch.first - sch.warm; c < sch.end; c++) ... one call ...
 *     }
 *     jb_calls_schedule_end(ctx, &sch, st);   then reduce and report each variant
 * jb_calls_schedule starts the schedule of `calls` timed calls per variant from --order,
 * --rounds and --seed; a failure ends the run. */
void jb_calls_schedule(jb_ctx *ctx, jb_schedule *sch, int variants, long calls);
/* Before each share: clears s at the variant's first, names the share for the
 * watchdog, synchronises the clocks again at a round's first turn and, with --sync window, opens the
 * share's windows from now.  Collective over ctx->world. */
void jb_calls_share(jb_ctx *ctx, jb_calls *s, const jb_schedule *sch, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A stopping rule (ReproMPI's and IMB -time's idea, order statistics here): after a share,
 * whether the median of the variant's per-call MAX over the tasks of comm, over its calls so
 * far, has a distribution-free 95 % interval of relative half-width <= target
 * (jb_median_ci_halfwidth).  Collective over comm, the same answer on every rank; when it is
 * 1 the benchmark settles the variant (jb_schedule_settle), and its result holds the calls
 * made (s->calls becomes them) and median_halfwidth.  The cap is the schedule's calls. */
int jb_calls_settled(jb_calls *s, const jb_schedule *sch, MPI_Comm comm, double target);
/* Records the order (jb_schedule_record) and the timed calls rank 0 made per variant
 * in the config, and frees the schedule. */
void jb_calls_schedule_end(jb_ctx *ctx, jb_schedule *sch, const jb_calls *st);
/* The same from the timed calls per variant, for a benchmark that keeps its jb_calls apart. */
void jb_calls_schedule_record(jb_ctx *ctx, jb_schedule *sch, const long *timed);
/* Starts timed call c (c < 0: warm-up) as --sync says: after a barrier of comm,
 * or when its window opens; returns MPI_Wtime() at the start and records it. */
double jb_call_start(jb_ctx *ctx, jb_calls *s, MPI_Comm comm, long c);
/* Timed call c (>= 0, started by jb_call_start) enters its communication now, after what came
 * before it in the call (--inject's wait, a computation): the task that waited longest made
 * the others wait. */
void jb_call_entered(jb_ctx *ctx, jb_calls *s, long c);

#endif
