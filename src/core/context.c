/* The run's context: collective errors and checked memory. */
#include "jb_context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "jb_parse.h"

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
    MPI_Allreduce(&local_bad, &bad_ranks, 1, MPI_INT, MPI_SUM, ctx->world);
    if (!bad_ranks)
        return;
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    jb_fail(ctx, "%s (on %d of %d ranks)", msg, bad_ranks, ctx->size);
}

void jb_option(jb_ctx *ctx, const char *optname, int rc, const char *err)
{
    if (rc != 0)
        jb_fail(ctx, "%s: %s", optname, err);
}

void jb_memory_check(jb_ctx *ctx, const jb_memory *m)
{
    if (m->overflow)
        jb_fail(ctx, "the options ask for more memory than can be counted (%s)", m->largest);
    if (m->bytes > ctx->memory_per_task)
        jb_fail(ctx, "the options ask for %zu bytes per task, over the %zu a task of the smallest node may hold "
                     "(half its memory over its tasks, or half what a limit on its address space leaves); the most for %s: "
                     "%zu bytes",
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
