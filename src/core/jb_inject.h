/* Calibrated noise (--inject, --inject-by): a task waits at random chances. */
#ifndef JB_INJECT_H
#define JB_INJECT_H

#include "jb_context.h"
#include "jb_rng.h"

/* Busy-waits for the given seconds (calibrated noise, not sleep: a sleeping
 * task would give its core away and change what is measured). */
void jb_busy_wait(double seconds);

/* Calibrated noise, --inject P:US[:SD]: at each chance (a call, an exchange) a
 * task waits with probability p, drawn from its own stream: us microseconds,
 * or with sd a gamma variate of that mean and standard deviation. */
typedef struct {
    double p, us, sd;
    int sleeps; /* --inject-by sleep: the task sleeps instead, giving its core to the node's others */
    long *tasks; /* --inject-tasks: only these world ranks wait (NULL: every rank) */
    int ntasks;
    jb_rng rng;
} jb_noise;
/* Parses P:US[:SD] into n (one line and exit on a bad value) */
void jb_noise_parse(jb_ctx *ctx, const char *optname, const char *text, jb_noise *n);
/* --inject-by spin|sleep */
void jb_noise_parse_by(jb_ctx *ctx, const char *text, jb_noise *n);
/* its getopt code: past jb_options.h's common codes */
#define JB_OPT_INJECT_TASKS 0x200
#define JB_INJECT_TASKS_LONGOPT {"inject-tasks", required_argument, NULL, JB_OPT_INJECT_TASKS}
/* --inject-tasks LIST: the ranks that wait (a known culprit for the slowest-task test) */
void jb_noise_parse_tasks(jb_ctx *ctx, const char *text, jb_noise *n);
#define JB_NOISE_USAGE                                                                      \
    "  --inject P:US[:SD]    with probability P per task and chance, wait US us (SD: a gamma\n" \
    "                        variate of mean US and standard deviation SD) (calibrated noise)\n" \
    "  --inject-by HOW       spin (busy-wait: the core stays busy, as a daemon's would) or sleep\n" \
    "                        (where tasks outnumber cores: the others run meanwhile) [spin]\n" \
    "  --inject-tasks LIST   only these ranks of MPI_COMM_WORLD wait, whatever --rank-order\n" \
    "                        makes them play (e.g. 3 or 0,5) [every rank]\n"
/* Seeds this task's stream (--seed, rank), records p, us and the tasks in the config, and
 * turns the noise off on a task --inject-tasks leaves out.  Frees the task list. */
void jb_noise_start(jb_ctx *ctx, jb_noise *n);
/* One chance: draws, and waits (spins or sleeps) if it hits; returns 1 if it did. */
int jb_noise_maybe(jb_noise *n);

#endif
