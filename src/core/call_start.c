/* When each timed call starts: after a barrier of its comm, or when its window opens on the
 * synchronised clock; and the variants' turns that such calls take. */
#include "jb_call_start.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jb_clock.h"
#include "jb_json.h"
#include "jb_stats.h"
#include "jb_watchdog.h"

void jb_calls_begin(jb_ctx *ctx, jb_calls *s, const char *fmt, ...)
{
    char where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(where, sizeof where, fmt, ap);
    va_end(ap);
    jb_watch("%s", where);
    jb_calls_clear(s);
    jb_sync_clocks(&ctx->clock, ctx->world);
    s->error_bound = ctx->clock.error_bound;
    if (ctx->opt.sync == JB_SYNC_WINDOW) {
        /* the first window opens once every rank has surely heard of it */
        double first = jb_global_time(&ctx->clock) + 1e-3 + 4 * ctx->opt.window_us * 1e-6;
        MPI_Bcast(&first, 1, MPI_DOUBLE, 0, ctx->world);
        s->first_window = first;
    }
}

void jb_calls_schedule(jb_ctx *ctx, jb_schedule *sch, int variants, long calls)
{
    if (jb_schedule_init(sch, variants, calls, ctx->opt.warmup, ctx->opt.rounds, !ctx->opt.order_given,
                         ctx->opt.seed) != 0)
        jb_fail(ctx, "out of memory for the order of %d variants", variants);
}

void jb_calls_share(jb_ctx *ctx, jb_calls *s, const jb_schedule *sch, const char *fmt, ...)
{
    char where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(where, sizeof where, fmt, ap);
    va_end(ap);
    if (sch->round == 0)
        jb_calls_clear(s);
    if (sch->rounds > 1)
        jb_watch("%s round %ld of %ld,", where, sch->round + 1, sch->rounds);
    else
        jb_watch("%s", where);
    /* the clocks drift apart slowly: synchronised again at each round's first turn
     * (given: before each variant, as before there were rounds) */
    if (sch->round_start || !sch->shuffled)
        jb_sync_clocks(&ctx->clock, ctx->world);
    if (ctx->clock.error_bound > s->error_bound)
        s->error_bound = ctx->clock.error_bound; /* the worst of the variant's shares */
    if (ctx->opt.sync == JB_SYNC_WINDOW) {
        /* the share's first call, first - warm, gets the window that opens once every
         * rank has surely heard of it; the windows of its later calls follow */
        double first = jb_global_time(&ctx->clock) + 1e-3 + 4 * ctx->opt.window_us * 1e-6;
        MPI_Bcast(&first, 1, MPI_DOUBLE, 0, ctx->world);
        s->first_window = first - (double)(sch->first - sch->warm + ctx->opt.warmup) * ctx->opt.window_us * 1e-6;
    }
}

int jb_calls_settled(jb_calls *s, const jb_schedule *sch, MPI_Comm comm, double target)
{
    long first = sch->first, made = sch->end;
    for (long c = first; c < made; c++) /* a task that took no part adds nothing */
        s->low[c] = isnan(s->mine[c]) ? 0 : s->mine[c];
    /* the share's per-call MAX on every rank (the final reduce gives rank 0 the same) */
    MPI_Allreduce(s->low + first, s->max + first, (int)(made - first), MPI_DOUBLE, MPI_MAX, comm);
    memcpy(s->avg, s->max, (size_t)made * sizeof *s->avg);
    qsort(s->avg, (size_t)made, sizeof *s->avg, jb_compare_doubles);
    s->width = jb_median_ci_halfwidth(s->avg, (size_t)made);
    s->stopping = 1;
    int settled = s->width <= target;
    if (settled || made == s->calls)
        s->calls = made; /* what the result reports; the arrays keep their length */
    return settled;
}

void jb_calls_schedule_record(jb_ctx *ctx, jb_schedule *sch, const long *timed)
{
    jb_json *cfg = &ctx->config;
    jb_schedule_record(sch, cfg);
    jb_json_array(cfg, "order_timed_calls"); /* per variant, counted as rank 0 recorded them */
    for (int v = 0; v < sch->variants; v++)
        jb_json_int(cfg, NULL, timed[v]);
    jb_json_end(cfg);
    jb_schedule_free(sch);
}

void jb_calls_schedule_end(jb_ctx *ctx, jb_schedule *sch, const jb_calls *st)
{
    long *timed = jb_alloc(ctx, sch->variants > 0 ? (size_t)sch->variants : 1, sizeof *timed, "the variants");
    for (int v = 0; v < sch->variants; v++)
        timed[v] = st[v].timed;
    jb_calls_schedule_record(ctx, sch, timed);
    free(timed);
}

double jb_call_start(jb_ctx *ctx, jb_calls *s, MPI_Comm comm, long c)
{
    double t0;
    if (ctx->opt.sync == JB_SYNC_WINDOW) {
        double opens = s->first_window + (double)(c + ctx->opt.warmup) * ctx->opt.window_us * 1e-6;
        double now = jb_global_time(&ctx->clock);
        if (now > opens && c >= 0)
            s->late_starts++;
        while (now < opens)
            now = jb_global_time(&ctx->clock);
        t0 = now - ctx->clock.offset;
    } else {
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
    }
    if (c >= 0)
        s->start[c] = t0 + ctx->clock.offset;
    s->timed_starts = 1;
    return t0;
}

void jb_call_entered(jb_ctx *ctx, jb_calls *s, long c)
{
    if (c < 0)
        return;
    s->entered[c] = (MPI_Wtime() + ctx->clock.offset - s->start[c]) * 1e6; /* since its own start */
    s->timed_entries = 1;
}

