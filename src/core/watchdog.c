/* The watchdog (--timeout). */
#include "jb_watchdog.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* SIGALRM after --timeout seconds.  Rank 0 writes one line naming the benchmark,
 * the variant and how many calls it had timed, and ends; the other ranks end a
 * second later, so the launcher reports rank 0's line and nothing else first.
 * The handler uses only write, alarm and _exit (async-signal-safe). */
static struct {
    char head[160];  /* "jb-NAME: error: --timeout N s passed in " */
    char where[256]; /* the variant, set by jb_watch */
    volatile sig_atomic_t calls_done, rank, fired;
} watchdog;

void jb_watch(const char *fmt, ...)
{
    /* the handler may read `where` at any moment: its last byte is never written,
     * so it always ends in NUL, whatever a torn read shows before it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(watchdog.where, sizeof watchdog.where - 1, fmt, ap);
    va_end(ap);
    watchdog.calls_done = 0;
}

void jb_watch_call_done(void) { watchdog.calls_done++; }

static void write_all(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_timeout(int sig)
{
    (void)sig;
    if (watchdog.rank != 0 && !watchdog.fired) {
        watchdog.fired = 1;
        alarm(1);
        return;
    }
    if (watchdog.rank == 0) {
        char count[24], *p = count + sizeof count;
        long n = watchdog.calls_done;
        *--p = '\0';
        do
            *--p = (char)('0' + n % 10);
        while ((n /= 10) > 0);
        write_all(watchdog.head);
        write_all(watchdog.where[0] ? watchdog.where : "set-up");
        write_all(" after ");
        write_all(p);
        write_all(" timed call(s); the run is stopped\n");
    }
    _exit(3);
}

void jb_watchdog_start(jb_ctx *ctx)
{
    if (ctx->opt.timeout == 0)
        return;
    snprintf(watchdog.head, sizeof watchdog.head, "jb-%s: error: --timeout %ld s passed in ", ctx->name,
             ctx->opt.timeout);
    watchdog.rank = ctx->rank;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timeout;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)ctx->opt.timeout);
}
