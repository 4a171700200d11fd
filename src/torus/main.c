/* jb-torus: sending around a ring (d = 1) and a torus of d dimensions
 * (J. Hein, S. Booth, M. Bull, "Exchanging multiple messages via MPI",
 * sections 6, 7 and 9), with per-call MAX/AVG over tasks as in jb-halo.
 * --work adds a vector add of two double arrays, after the final
 * MPI_Waitall or before it (overlapped); the time saved is reported.
 * --trials N repeats each measurement N times and reports the fastest
 * trial too, as the study took the fastest of at least 10. */
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "jb_core.h"

static const char usage[] =
    "Exchange with both neighbours in every dimension of a periodic torus.\n"
    "  --ndims D             dimensions, shaped by MPI_Dims_create [1: a ring]\n"
    "  --dims AxB...         the shape itself (its product is the task count)\n"
    "  --pattern LIST        phases|sendrecv|isend|issend|ibsend (patterns 1-5) or all [all]\n"
    "  --size LIST           bytes per message: 1K,16K or 8:64K [1K,4K,16K]\n"
    "  --work LIST           bytes per array of a vector add; each measured after and before the\n"
    "                        final MPI_Waitall (patterns other than sendrecv; default isend)\n"
    "  --trials N            measure each result N times (calls each) and report the fastest\n"
    "                        trial's mean per-call MAX as well: the study's fastest of N [1]\n"
    "  --series              per-call MAX and AVG in the JSON\n";

typedef struct {
    int dims[TORUS_MAXDIMS], ndims;
    int patterns[NPATTERNS], patterns_given;
    size_t *sizes, *works;
    int nsizes, nworks;
    int series;
    long trials, timed; /* --trials, and the timed calls of one result: calls x trials */
} torus_options;

/* What one result measured: the mean over calls of the per-call MAX, and the least over
 * trials of that mean */
typedef struct {
    double mean_max, fastest;
} torus_times;

typedef struct {
    double *a, *b;
    size_t n;
} vector_add;

static void add_vectors(void *ctx)
{
    vector_add *v = ctx;
    for (size_t i = 0; i < v->n; i++)
        v->a[i] += v->b[i];
}

static void parse(jb_ctx *ctx, int argc, char **argv, torus_options *o)
{
    static const struct option longopts[] = {
        {"ndims", required_argument, NULL, 'D'}, {"dims", required_argument, NULL, 'd'},
        {"pattern", required_argument, NULL, 'p'}, {"size", required_argument, NULL, 's'},
        {"work", required_argument, NULL, 'w'}, {"series", no_argument, NULL, 'S'},
        {"trials", required_argument, NULL, 'T'}, JB_COMMON_LONGOPTS};
    long nd = 1;
    int c, given_dims = 0;
    char err[JB_ERRLEN];
    memset(o, 0, sizeof *o);
    o->trials = 1;
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'D': jb_option(ctx, "--ndims", jb_parse_long(optarg, 1, TORUS_MAXDIMS, &nd, err), err); break;
        case 'd':
            jb_option(ctx, "--dims", jb_parse_dims(optarg, TORUS_MAXDIMS, o->dims, &o->ndims, err), err);
            given_dims = 1;
            break;
        case 'p':
            jb_option(ctx, "--pattern", jb_parse_name_list(optarg, torus_pattern_names, NULL, o->patterns, err), err);
            o->patterns_given = 1;
            break;
        case 's': jb_option(ctx, "--size", jb_parse_size_list(optarg, &o->sizes, &o->nsizes, err), err); break;
        case 'w': jb_option(ctx, "--work", jb_parse_size_list(optarg, &o->works, &o->nworks, err), err); break;
        case 'S': o->series = 1; break;
        case 'T': jb_option(ctx, "--trials", jb_parse_long(optarg, 1, 1000, &o->trials, err), err); break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    if (!given_dims) {
        o->ndims = (int)nd;
        MPI_Dims_create(ctx->size, o->ndims, o->dims);
    }
    long product = 1;
    for (int k = 0; k < o->ndims; k++)
        product *= o->dims[k];
    if (product != ctx->size)
        jb_fail(ctx, "--dims: a torus of %ld tasks does not hold the %d tasks", product, ctx->size);
    if (!o->sizes)
        jb_option(ctx, "--size", jb_parse_size_list("1K,4K,16K", &o->sizes, &o->nsizes, err), err);
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > (size_t)1 << 28)
            jb_fail(ctx, "--size: sizes above 256M are not supported");
    for (int i = 0; i < o->nworks; i++)
        if (o->works[i] > (size_t)1 << 30)
            jb_fail(ctx, "--work: arrays above 1G are not supported");
    /* MPI_Buffer_attach takes an int: room for every message in flight at once */
    size_t bsend;
    if (jb_mul(2 * (size_t)o->ndims, jb_largest(o->sizes, o->nsizes) + MPI_BSEND_OVERHEAD, &bsend) || bsend > 0x7fffffff)
        jb_fail(ctx, "--ndims x --size: %d messages of the largest size need more than the 2^31 - 1 bytes "
                     "MPI_Buffer_attach can take", 2 * o->ndims);
    jb_memory m = {0};
    jb_memory_add(&m, "--size (a send and a receive buffer per direction)", 4 * (size_t)o->ndims,
                  jb_largest(o->sizes, o->nsizes) + 1);
    jb_memory_add(&m, "--size (the MPI_Ibsend buffer)", 1, bsend);
    jb_memory_add(&m, "--work (two arrays)", 2, jb_largest(o->works, o->nworks) + 8);
    o->timed = jb_calls_of_trials(ctx, o->trials, "calls");
    long patterns = 0;
    for (int p = 0; p < NPATTERNS; p++)
        patterns += o->patterns_given ? o->patterns[p] : 1;
    jb_calls_memory_variants(&m, o->timed, o->nsizes * patterns * (o->nworks ? 2 * o->nworks : 1));
    jb_memory_check(ctx, &m);
    if (!o->patterns_given)
        for (int p = 0; p < NPATTERNS; p++)
            o->patterns[p] = !o->nworks || p == PATTERN_ISEND;
    if (o->nworks && o->patterns[PATTERN_SENDRECV])
        jb_fail(ctx, "--work needs a final MPI_Waitall to place work before: not pattern sendrecv");
}

static unsigned char payload(int src, int d, long call, size_t i)
{
    return (unsigned char)(src * 7 + d * 13 + call * 31 + (long)i);
}

/* One variant: a size, a pattern and where the work goes (work -1: none). */
typedef struct {
    int size_index, pattern, work, before;
} torus_variant;

/* One share of a variant's calls (jb_schedule); returns the wrong payload bytes received. */
static long run_share(jb_ctx *ctx, const jb_schedule *sch, torus_exchange *t, int pattern, jb_calls *st,
                      const char *work_place, size_t work_bytes)
{
    int n = 2 * t->ndims;
    long bad = 0;
    jb_calls_share(ctx, st, sch, "pattern %s, size %zu, work %s (%zu bytes),", torus_pattern_names[pattern], t->size,
                   work_place, work_bytes);
    for (long c = sch->first - sch->warm; c < sch->end; c++) {
        if (ctx->opt.validate)
            for (int d = 0; d < n; d++)
                for (size_t i = 0; i < t->size; i++)
                    t->send[d][i] = (char)payload(ctx->rank, d, c, i);
        double t0 = jb_call_start(ctx, st, t->comm, c);
        torus_exchange_run(t, pattern);
        double us = (MPI_Wtime() - t0) * 1e6;
        if (c >= 0)
            jb_calls_record(st, c, us);
        if (ctx->opt.validate)
            for (int from = 0; from < n; from++)
                for (size_t i = 0; i < t->size; i++)
                    bad += (unsigned char)t->recv[from][i] != payload(t->nb[from], from ^ 1, c, i);
    }
    return bad;
}

/* One result, after every round; returns its times (on every task). */
static torus_times report(jb_ctx *ctx, const torus_options *o, torus_exchange *t, int pattern, jb_calls *st,
                          long bad, const char *work_place, size_t work_bytes, const torus_times *saved_from)
{
    int n = 2 * t->ndims;
    jb_fail_if_any(ctx, bad != 0, "--validate: pattern %s received wrong payload bytes", torus_pattern_names[pattern]);
    jb_calls_reduce(st, t->comm);
    /* a trial is `calls` consecutive calls: its mean per-call MAX, the least of them the fastest */
    long best;
    torus_times times = {jb_calls_mean_max(st), jb_calls_fastest_trial(st, ctx->opt.calls, &best)};
    char shape[128] = "";
    for (int k = 0; k < t->ndims; k++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), k ? "x%d" : "%d", o->dims[k]);
    jb_result_begin(ctx);
    jb_result_str(ctx, "pattern", torus_pattern_names[pattern], 1);
    jb_result_str(ctx, "dims", shape, 1);
    jb_result_int(ctx, "ndims", t->ndims, 0);
    jb_result_int(ctx, "size", (long long)t->size, 1);
    jb_result_int(ctx, "work_bytes", (long long)work_bytes, 0);
    jb_result_str(ctx, "work", work_place, 1);
    jb_result_int(ctx, "tasks", ctx->size, 0);
    jb_result_int(ctx, "calls", st->calls, 0);
    jb_result_int(ctx, "trials", o->trials, 0);
    jb_calls_report(ctx, st, o->series);
    jb_result_num(ctx, "fastest_us", times.fastest, 0);
    jb_result_num(ctx, "bandwidth_mb_s", (double)n * t->size / times.mean_max, 1);
    if (saved_from) { /* work before the wait, against the same work after it */
        jb_result_num(ctx, "saved_us", saved_from->mean_max - times.mean_max, 0);
        jb_result_num(ctx, "saved_fraction", (saved_from->mean_max - times.mean_max) / saved_from->mean_max, 0);
        jb_result_num(ctx, "saved_fastest_us", saved_from->fastest - times.fastest, 0);
        jb_result_num(ctx, "saved_fastest_fraction", (saved_from->fastest - times.fastest) / saved_from->fastest, 0);
    }
    jb_result_end(ctx);
    MPI_Bcast(&times, 2, MPI_DOUBLE, 0, t->comm);
    return times;
}

static const char *work_place(const torus_variant *w) { return w->work < 0 ? "none" : w->before ? "before" : "after"; }

int main(int argc, char **argv)
{
    jb_ctx ctx;
    torus_options o;
    jb_init(&ctx, &argc, &argv, "torus", usage, 1000, 50);
    parse(&ctx, argc, argv, &o);

    torus_exchange t = {.ndims = o.ndims};
    int periods[TORUS_MAXDIMS];
    for (int k = 0; k < o.ndims; k++)
        periods[k] = 1;
    MPI_Cart_create(ctx.world, o.ndims, o.dims, periods, 0, &t.comm);
    for (int k = 0; k < o.ndims; k++)
        MPI_Cart_shift(t.comm, k, 1, &t.nb[2 * k], &t.nb[2 * k + 1]);

    size_t max_size = jb_largest(o.sizes, o.nsizes), max_work = jb_largest(o.works, o.nworks);
    for (int d = 0; d < 2 * o.ndims; d++) {
        t.send[d] = jb_alloc(&ctx, max_size + 1, 1, "--size");
        t.recv[d] = jb_alloc(&ctx, max_size + 1, 1, "--size");
    }
    /* MPI_Ibsend needs attached buffer space for every message in flight (checked in parse) */
    int bsend_bytes = (int)(2 * (size_t)o.ndims * (max_size + MPI_BSEND_OVERHEAD));
    char *bsend = jb_alloc(&ctx, (size_t)bsend_bytes, 1, "--size (MPI_Ibsend buffer)");
    MPI_Buffer_attach(bsend, bsend_bytes);
    vector_add work = {jb_alloc(&ctx, max_work / 8 + 1, 8, "--work"), jb_alloc(&ctx, max_work / 8 + 1, 8, "--work"), 0};

    jb_json *cfg = &ctx.config;
    jb_json_array(cfg, "dims");
    for (int k = 0; k < o.ndims; k++)
        jb_json_int(cfg, NULL, o.dims[k]);
    jb_json_end(cfg);
    jb_json_array(cfg, "rank0_neighbours"); /* per direction: down and up each dimension */
    int nb0[2 * TORUS_MAXDIMS];
    memcpy(nb0, t.nb, sizeof nb0);
    MPI_Bcast(nb0, 2 * TORUS_MAXDIMS, MPI_INT, 0, ctx.world);
    for (int d = 0; d < 2 * o.ndims; d++)
        jb_json_int(cfg, NULL, nb0[d]);
    jb_json_end(cfg);
    jb_json_str(cfg, "call", "a barrier (or --sync window), then the exchange (and the work, if any); timed on every task");
    jb_json_str(cfg, "bandwidth_mb_s", "bytes each task sends per call (2 ndims size) / max_us, MB = 10^6 bytes");
    jb_json_str(cfg, "saved_us", "work before the final MPI_Waitall: max_us with the work after it, less max_us");
    jb_json_str(cfg, "fastest_us", "of --trials runs of calls calls each, the least mean over the trial's calls of the "
                                   "per-call MAX over tasks (the study's fastest of N trials); saved_fastest_us the "
                                   "saving between the fastest trials");
    jb_json_int(cfg, "trials", o.trials);
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-torus: %d tasks on a periodic torus of %d dimension(s); %ld calls after %ld warm-up; "
               "times in us per call\n", ctx.size, o.ndims, ctx.opt.calls, ctx.opt.warmup);

    /* the variants, sizes outer, then patterns, then the work (after, then before), as the results list them */
    size_t most = (size_t)o.nsizes * NPATTERNS * (size_t)(o.nworks ? 2 * o.nworks : 1);
    torus_variant *vs = jb_alloc(&ctx, most, sizeof *vs, "--size x --pattern x --work");
    int variants = 0;
    for (int i = 0; i < o.nsizes; i++)
        for (int pattern = 0; pattern < NPATTERNS; pattern++) {
            if (!o.patterns[pattern])
                continue;
            if (!o.nworks)
                vs[variants++] = (torus_variant){i, pattern, -1, 0};
            for (int w = 0; w < o.nworks; w++) {
                vs[variants++] = (torus_variant){i, pattern, w, 0};
                vs[variants++] = (torus_variant){i, pattern, w, 1};
            }
        }
    jb_calls *st = jb_alloc(&ctx, (size_t)variants, sizeof *st, "--size x --pattern x --work");
    long *bad = jb_alloc(&ctx, (size_t)variants, sizeof *bad, "--size x --pattern x --work");
    for (int v = 0; v < variants; v++)
        jb_calls_init(&ctx, &st[v], o.timed);
    jb_schedule sch;
    jb_calls_schedule(&ctx, &sch, variants, o.timed);
    while (jb_schedule_next(&sch)) {
        const torus_variant *w = &vs[sch.variant];
        t.size = o.sizes[w->size_index];
        t.work = w->work >= 0 ? add_vectors : NULL;
        t.work_ctx = &work;
        t.work_before_wait = w->before;
        work.n = w->work >= 0 ? o.works[w->work] / 8 : 0;
        bad[sch.variant] += run_share(&ctx, &sch, &t, w->pattern, &st[sch.variant], work_place(w),
                                      w->work >= 0 ? o.works[w->work] : 0);
    }
    t.work = NULL;
    jb_calls_schedule_end(&ctx, &sch, st);
    torus_times after = {0, 0};
    for (int v = 0; v < variants; v++) {
        const torus_variant *w = &vs[v];
        t.size = o.sizes[w->size_index];
        torus_times times = report(&ctx, &o, &t, w->pattern, &st[v], bad[v], work_place(w),
                                   w->work >= 0 ? o.works[w->work] : 0, w->before ? &after : NULL);
        if (w->work >= 0 && !w->before)
            after = times; /* the same work after the wait: what work before it saves against */
        jb_calls_free(&st[v]);
    }
    free(st);
    free(bad);
    free(vs);
    MPI_Buffer_detach(&bsend, &bsend_bytes);
    free(bsend);
    free(work.a);
    free(work.b);
    for (int d = 0; d < 2 * o.ndims; d++) {
        free(t.send[d]);
        free(t.recv[d]);
    }
    MPI_Comm_free(&t.comm);
    return jb_finish(&ctx);
}
