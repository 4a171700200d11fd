/* Calibrated noise: a task waits, spinning or sleeping, at random chances. */
#include "jb_inject.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jb_json.h"
#include "jb_parse.h"

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
    if (n->tasks) {
        int chosen = 0;
        jb_json_array(&ctx->config, "inject_tasks");
        for (int k = 0; k < n->ntasks; k++) {
            jb_json_int(&ctx->config, NULL, n->tasks[k]);
            chosen |= n->tasks[k] == ctx->world_rank; /* the slot, wherever --rank-order moves the role */
        }
        jb_json_end(&ctx->config);
        if (!chosen)
            n->p = 0;
        free(n->tasks);
        n->tasks = NULL;
    }
}

void jb_noise_parse_tasks(jb_ctx *ctx, const char *text, jb_noise *n)
{
    char err[JB_ERRLEN];
    free(n->tasks);
    n->tasks = NULL;
    jb_option(ctx, "--inject-tasks", jb_parse_long_list(text, 0, ctx->size - 1, &n->tasks, &n->ntasks, err), err);
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
