/* The load beside a run: what else the nodes were running, at the start and at
 * the end.  One task per node reads /proc/loadavg (1-minute load, runnable and
 * total tasks of the kernel; the runnable count as the median of 5 reads over
 * 20 ms) and /proc/stat (CPU steal, where the kernel counts
 * it); the run records, before and after, the node where the most runnable tasks
 * exceed the node's CPUs and the job's own tasks there, with its figures. */
#ifndef JB_LOAD_H
#define JB_LOAD_H

#include "jb_context.h"
#include "jb_json.h"

/* Collective over ctx->world.  at_end 0: the start (after the placement);
 * 1: the end, which also prints the line "# load: before_...=... after_...=..." on
 * rank 0. */
void jb_load_sample(jb_ctx *ctx, int at_end);
/* The samples as the object "load" of the metadata (rank 0). */
void jb_load_json(const jb_ctx *ctx, jb_json *j);

#endif
