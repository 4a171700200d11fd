/* The watchdog (--timeout): ends a run that takes too long, naming the variant
 * being measured and how many calls it had timed. */
#ifndef JB_WATCHDOG_H
#define JB_WATCHDOG_H

#include "jb_context.h"

/* Arms the alarm when --timeout is set; rank 0 will name where the run was. */
void jb_watchdog_start(jb_ctx *ctx);
/* The variant being measured and its calls, named when the run times out. */
void jb_watch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void jb_watch_call_done(void); /* jb_calls_record counts the timed calls */

#endif
