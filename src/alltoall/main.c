/* jb-alltoall: the pairwise-exchange all-to-all of Tabe, Hardwick and Stout
 * (IBM SP2), beside MPI_Alltoall.  Per call (barrier, then one all-to-all):
 * MAX/AVG over tasks of the whole all-to-all; per exchange and task: the
 * exchange time and the idle time, as merged histograms, and a bounded
 * number of raw exchange times for the simulator (jitterbench simulate).
 * The timed region holds the exchanges and nothing else: idle time comes from
 * the partners' start times on synchronised clocks, swapped after the call. */
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "jb_core.h"
#include "schedule.h"

static const char usage[] =
    "All-to-all of size bytes between every pair of tasks.\n"
    "  --method LIST         pairwise (round-robin MPI_Sendrecv) | alltoall (MPI_Alltoall) | all [all]\n"
    "  --size LIST           bytes to each other task: 1K,1M or 8:64K [1K]\n"
    "  --samples FILE        raw pairwise exchange times, one value in us per line (for the simulator)\n"
    "  --max-samples N       how many raw exchange times at most, spread over the tasks [10000]\n"
    "  --idle HOW            pairwise: timestamps (a clock read between rounds; idle from the\n"
    "                        partner's start on synchronised clocks, swapped after the call) |\n"
    "                        handshake (a zero-byte exchange first, inside the timed region:\n"
    "                        instrumented) | none (the plain algorithm, no exchange times) [timestamps]\n"
    "  --procs LIST          all-to-alls of the first P tasks for each P (the others wait at\n"
    "                        the barrier), throughput against P in one run [all tasks]\n"
    JB_NOISE_USAGE
    "                        A chance: each pairwise exchange, inside it\n"
    "  --series              per-call MAX and AVG in the JSON\n";

static const char *const method_names[] = {"pairwise", "alltoall", NULL};
static const char *const idle_names[] = {"timestamps", "handshake", "none", NULL};
enum { IDLE_TIMESTAMPS, IDLE_HANDSHAKE, IDLE_NONE };

static unsigned char payload(int from, int to, size_t i) { return (unsigned char)(from * 7 + to * 13 + (long)i); }

static void fill(alltoall_run *a)
{
    for (int q = 0; q < a->nprocs; q++)
        for (size_t i = 0; i < a->size; i++)
            a->send[(size_t)q * a->size + i] = (char)payload(a->me, q, i);
    memset(a->recv, 0, (size_t)a->nprocs * a->size);
}

/* wrong bytes received from the other tasks (a task sends nothing to itself) */
static long check(const alltoall_run *a)
{
    long bad = 0;
    for (int q = 0; q < a->nprocs; q++)
        for (size_t i = 0; q != a->me && i < a->size; i++)
            bad += (unsigned char)a->recv[(size_t)q * a->size + i] != payload(q, a->me, i);
    return bad;
}
enum { METHOD_PAIRWISE, METHOD_ALLTOALL };

/* --samples: one value a line, written whole or not at all */
static void write_samples(jb_ctx *ctx, const char *path, const double *samples, size_t n)
{
    char tmp[4096], err[JB_ERRLEN];
    FILE *f = jb_output_open(path, tmp, sizeof tmp, err);
    for (size_t k = 0; f && k < n; k++)
        fprintf(f, "%.6g\n", samples[k]);
    if (!f || jb_output_close(f, tmp, path, err) != 0) {
        fprintf(stderr, "jb-alltoall: error: --samples: %s\n", err);
        ctx->write_failed = 1;
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"method", required_argument, NULL, 'M'}, {"size", required_argument, NULL, 's'},
        {"samples", required_argument, NULL, 'f'}, {"max-samples", required_argument, NULL, 'n'},
        {"series", no_argument, NULL, 'S'}, {"idle", required_argument, NULL, 'I'},
        {"procs", required_argument, NULL, 'P'}, {"inject", required_argument, NULL, 'i'},
        {"inject-by", required_argument, NULL, 'B'}, JB_INJECT_TASKS_LONGOPT, JB_COMMON_LONGOPTS};
    jb_ctx ctx;
    int methods[2] = {1, 1}, series = 0, nsizes = 0, c, idle = IDLE_TIMESTAMPS;
    size_t *sizes = NULL;
    long *procs = NULL;
    int nprocs = 0;
    jb_noise noise = {0};
    const char *samples_path = NULL;
    long max_samples = 10000;
    char err[JB_ERRLEN];
    jb_init(&ctx, &argc, &argv, "alltoall", usage, 200, 10);
    while ((c = jb_getopt(&ctx, longopts)) != -1) {
        switch (c) {
        case 'M': jb_option(&ctx, "--method", jb_parse_name_list(optarg, method_names, NULL, methods, err), err); break;
        case 's': jb_option(&ctx, "--size", jb_parse_size_list(optarg, &sizes, &nsizes, err), err); break;
        case 'f': samples_path = optarg; break;
        case 'n': jb_option(&ctx, "--max-samples", jb_parse_long(optarg, 1, 10000000, &max_samples, err), err); break;
        case 'S': series = 1; break;
        case 'P':
            free(procs);
            jb_option(&ctx, "--procs", jb_parse_long_list(optarg, 2, ctx.size, &procs, &nprocs, err), err);
            break;
        case 'i': jb_noise_parse(&ctx, "--inject", optarg, &noise); break;
        case 'B': jb_noise_parse_by(&ctx, optarg, &noise); break;
        case JB_OPT_INJECT_TASKS: jb_noise_parse_tasks(&ctx, optarg, &noise); break;
        case 'I':
            if ((idle = jb_lookup(optarg, idle_names)) < 0)
                jb_fail(&ctx, "--idle: '%s' is not timestamps, handshake or none", optarg);
            break;
        default: jb_common_option(&ctx, c, optarg);
        }
    }
    jb_options_done(&ctx, optind);
    if (!sizes)
        jb_option(&ctx, "--size", jb_parse_size_list("1K", &sizes, &nsizes, err), err);
    size_t max_size = jb_largest(sizes, nsizes), per_call;
    for (int i = 0; i < nsizes; i++) {
        /* MPI counts are int: a whole send buffer, as MPI_Alltoall's displacements see it, stays below 2^31 */
        if (jb_mul(sizes[i], (size_t)ctx.size, &per_call) || per_call > 0x7fffffff)
            jb_fail(&ctx, "--size: %zu bytes to each of %d tasks is 2G or more per task", sizes[i], ctx.size);
    }
    if (!procs) {
        procs = jb_alloc(&ctx, 1, sizeof *procs, "--procs");
        procs[nprocs++] = ctx.size;
    }
    if (noise.p > 0 && methods[METHOD_ALLTOALL])
        jb_fail(&ctx, "--inject delays the pairwise exchanges: give --method pairwise");
    if (samples_path && !methods[METHOD_PAIRWISE])
        jb_fail(&ctx, "--samples needs the pairwise method");
    if (samples_path && idle == IDLE_NONE)
        jb_fail(&ctx, "--samples needs exchange times: not --idle none");
    if (samples_path)
        jb_check_output(&ctx, "--samples", samples_path);
    /* raw samples: the same bounded number on every task, gathered to rank 0 */
    long per_task = (max_samples + ctx.size - 1) / ctx.size;
    jb_memory m = {0};
    jb_memory_add(&m, "--size x tasks (a send and a receive buffer)", 2, max_size * (size_t)ctx.size + 1);
    jb_memory_add(&m, "tasks (four times per round)", 4 * (size_t)ctx.size, sizeof(double));
    long variants_most = (long)nprocs * nsizes * (methods[0] + methods[1]);
    jb_memory_add(&m, "--max-samples (on rank 0)", (size_t)per_task * (size_t)ctx.size, sizeof(double));
    jb_memory_add(&m, "--max-samples x variants", (size_t)per_task * (size_t)variants_most, sizeof(double));
    jb_calls_memory_variants(&m, ctx.opt.calls, variants_most);
    jb_memory_check(&ctx, &m);

    alltoall_run a = {.comm = ctx.world, .noise = &noise};
    a.send = jb_alloc(&ctx, (size_t)ctx.size * max_size + 1, 1, "--size");
    a.recv = jb_alloc(&ctx, (size_t)ctx.size * max_size + 1, 1, "--size");
    alltoall_times times = {.handshake = idle == IDLE_HANDSHAKE};
    /* at most P rounds for P tasks */
    times.start = jb_alloc(&ctx, (size_t)ctx.size, sizeof *times.start, "the rounds");
    times.ready = jb_alloc(&ctx, (size_t)ctx.size, sizeof *times.ready, "the rounds");
    times.end = jb_alloc(&ctx, (size_t)ctx.size, sizeof *times.end, "the rounds");
    double *partner_start = jb_alloc(&ctx, (size_t)ctx.size, sizeof *partner_start, "the rounds");
    double *samples = ctx.rank == 0 ? jb_alloc(&ctx, (size_t)per_task * (size_t)ctx.size, sizeof *samples,
                                               "--max-samples") : NULL;

    jb_json *cfg = &ctx.config;
    jb_json_str(cfg, "call", "MPI_Barrier of all tasks, then one all-to-all of the first P; timed on each of the P");
    jb_json_str(cfg, "throughput_mb_s", "per task, as the paper's Table 1: 2 (P - 1) size / max_us, MB = 10^6 bytes");
    jb_json_str(cfg, "idle_method", idle_names[idle]);
    jb_json_str(cfg, "idle", idle == IDLE_HANDSHAKE
                ? "pairwise: a zero-byte MPI_Sendrecv with the partner before each exchange, inside the timed "
                  "region (instrumented): its time is waiting for a partner still busy with a previous exchange"
                : "pairwise: how much later the partner started the round, on clocks synchronised at the start "
                  "of the result; the exchange time runs from the later start to the end");
    jb_noise_start(&ctx, &noise);
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-alltoall: %d tasks; %ld calls after %ld warm-up; times in us\n", ctx.size, ctx.opt.calls,
               ctx.opt.warmup);

    /* the variants, task counts outer, then sizes, then methods, as the results list them */
    int variants = 0, most = nprocs * nsizes * 2;
    struct variant {
        int k, i, method;
        long kept, bad, unknown, injected;
        jb_hist exchanges, idles;
    } *vs = jb_alloc(&ctx, (size_t)most, sizeof *vs, "--procs x --size x --method");
    for (int k = 0; k < nprocs; k++)
        for (int i = 0; i < nsizes; i++)
            for (int method = 0; method < 2; method++)
                if (methods[method])
                    vs[variants++] = (struct variant){.k = k, .i = i, .method = method};
    jb_calls *st = jb_alloc(&ctx, (size_t)variants, sizeof *st, "--procs x --size x --method");
    double *mine = jb_alloc(&ctx, (size_t)variants * (size_t)per_task, sizeof *mine, "--max-samples");
    for (int v = 0; v < variants; v++)
        jb_calls_init(&ctx, &st[v], ctx.opt.calls);
    /* the first P tasks exchange; the others take part in each call's barrier only */
    MPI_Comm *comms = jb_alloc(&ctx, (size_t)nprocs, sizeof *comms, "--procs");
    for (int k = 0; k < nprocs; k++)
        MPI_Comm_split(ctx.world, ctx.rank < procs[k] ? 0 : MPI_UNDEFINED, ctx.rank, &comms[k]);

    jb_schedule sch;
    jb_calls_schedule(&ctx, &sch, variants, ctx.opt.calls);
    while (jb_schedule_next(&sch)) {
        struct variant *w = &vs[sch.variant];
        int method = w->method, member = ctx.rank < procs[w->k];
        a.comm = comms[w->k];
        a.nprocs = (int)procs[w->k];
        a.me = ctx.rank;
        a.rounds = alltoall_rounds(a.nprocs);
        a.size = sizes[w->i];
        jb_calls *s = &st[sch.variant];
        jb_calls_share(&ctx, s, &sch, "%d tasks, method %s, size %zu,", a.nprocs, method_names[method], a.size);
        int timed_rounds = member && method == METHOD_PAIRWISE && idle != IDLE_NONE;
        double *kept_times = mine + (size_t)sch.variant * (size_t)per_task;
        long injected_before = a.injected;
        for (long call = sch.first - sch.warm; call < sch.end; call++) {
            if (member && ctx.opt.validate)
                fill(&a);
            if (call == 0)
                injected_before = a.injected; /* the timed calls' */
            double t0 = jb_call_start(&ctx, s, ctx.world, call);
            if (!member)
                continue;
            if (method == METHOD_PAIRWISE)
                alltoall_pairwise(&a, timed_rounds ? &times : NULL, t0);
            else
                alltoall_collective(&a);
            double t1 = MPI_Wtime(), us = (t1 - t0) * 1e6;
            if (timed_rounds)
                alltoall_pairwise_end(&a, &times, t1);
            if (timed_rounds && idle == IDLE_TIMESTAMPS)
                alltoall_partner_starts(&a, &times, ctx.clock.offset, partner_start);
            if (ctx.opt.validate)
                w->bad += check(&a);
            if (call < 0)
                continue;
            jb_calls_record(s, call, us);
            for (int r = 0; timed_rounds && r < a.rounds; r++) {
                if (times.start[r] < 0)
                    continue;
                /* the exchange can move data once both have started.  A partner's start
                 * that looks later than this end breaks causality (its data arrived
                 * here): the clocks disagree by more than the exchange took, so its
                 * exchange and idle times are unknown, counted and left out, never 0 */
                double both = idle == IDLE_HANDSHAKE ? times.ready[r]
                              : partner_start[r] > times.start[r] ? partner_start[r] : times.start[r];
                double exchange_us = (times.end[r] - both) * 1e6;
                if (!(exchange_us > 0)) {
                    w->unknown++;
                    continue;
                }
                jb_hist_add(&w->exchanges, exchange_us);
                jb_hist_add(&w->idles, (both - times.start[r]) * 1e6);
                if (w->kept < per_task)
                    kept_times[w->kept++] = exchange_us;
            }
        }
        w->injected += a.injected - injected_before;
    }
    jb_calls_schedule_end(&ctx, &sch, st);

    for (int v = 0; v < variants; v++) {
        struct variant *w = &vs[v];
        int method = w->method, member = ctx.rank < procs[w->k];
        a.nprocs = (int)procs[w->k];
        a.rounds = alltoall_rounds(a.nprocs);
        a.size = sizes[w->i];
        jb_hist all_exchanges, all_idles;
        long all_unknown = 0, all_injected = 0;
        int timed_rounds = member && method == METHOD_PAIRWISE && idle != IDLE_NONE;
        jb_fail_if_any(&ctx, w->bad != 0, "--validate: method %s received wrong payload bytes", method_names[method]);
        jb_calls_reduce(&st[v], ctx.world);
        MPI_Reduce(w->exchanges.count, all_exchanges.count, JB_HIST_NBINS, MPI_UINT64_T, MPI_SUM, 0, ctx.world);
        MPI_Reduce(w->idles.count, all_idles.count, JB_HIST_NBINS, MPI_UINT64_T, MPI_SUM, 0, ctx.world);
        MPI_Reduce(&w->unknown, &all_unknown, 1, MPI_LONG, MPI_SUM, 0, ctx.world);
        MPI_Reduce(&w->injected, &all_injected, 1, MPI_LONG, MPI_SUM, 0, ctx.world);
        if (!member)
            continue;
        long kept_min = w->kept; /* the same number from every exchanging task */
        MPI_Allreduce(&w->kept, &kept_min, 1, MPI_LONG, MPI_MIN, comms[w->k]);
        if (timed_rounds)
            MPI_Gather(mine + (size_t)v * (size_t)per_task, (int)kept_min, MPI_DOUBLE, samples, (int)kept_min,
                       MPI_DOUBLE, 0, comms[w->k]);
        if (ctx.rank != 0)
            continue;
        jb_result_begin(&ctx);
        jb_result_str(&ctx, "method", method_names[method], 1);
        jb_result_int(&ctx, "size", (long long)a.size, 1);
        jb_result_int(&ctx, "tasks", a.nprocs, nprocs > 1);
        jb_result_int(&ctx, "rounds", a.rounds, 0);
        jb_result_int(&ctx, "calls", st[v].calls, 0);
        jb_calls_report(&ctx, &st[v], series);
        jb_result_num(&ctx, "throughput_mb_s", 2.0 * (a.nprocs - 1) * a.size / jb_calls_mean_max(&st[v]), 1);
        if (method == METHOD_PAIRWISE) {
            jb_result_str(&ctx, "idle_method", idle_names[idle], 0);
            jb_result_num(&ctx, "inject_probability", noise.p, 0);
            jb_result_int(&ctx, "injected_exchanges", all_injected, 0);
        }
        if (timed_rounds) {
            jb_result_num(&ctx, "exchange_p50_us", jb_hist_percentile(&all_exchanges, 50), 0);
            jb_result_num(&ctx, "exchange_p99_us", jb_hist_percentile(&all_exchanges, 99), 0);
            jb_result_num(&ctx, "idle_p50_us", jb_hist_percentile(&all_idles, 50), 0);
            jb_result_num(&ctx, "idle_p99_us", jb_hist_percentile(&all_idles, 99), 0);
            jb_result_int(&ctx, "exchanges_unknown", all_unknown, 0);
            jb_json *j = jb_result_json(&ctx);
            jb_json_hist(j, "exchange_histogram", &all_exchanges);
            jb_json_hist(j, "idle_histogram", &all_idles);
            jb_json_nums(j, "samples_us", samples, (size_t)kept_min * (size_t)a.nprocs);
            if (samples_path && w->i == 0 && w->k == nprocs - 1)
                write_samples(&ctx, samples_path, samples, (size_t)kept_min * (size_t)a.nprocs);
        }
        jb_result_end(&ctx);
    }
    for (int v = 0; v < variants; v++)
        jb_calls_free(&st[v]);
    for (int k = 0; k < nprocs; k++)
        if (comms[k] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[k]);
    free(comms);
    free(st);
    free(vs);
    free(a.send);
    free(a.recv);
    free(times.start);
    free(times.ready);
    free(times.end);
    free(partner_start);
    free(mine);
    free(samples);
    free(sizes);
    free(procs);
    return jb_finish(&ctx);
}
