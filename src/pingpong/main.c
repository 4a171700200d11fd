/* jb-pingpong: multi-ping-pong (J. Hein, S. Booth, M. Bull, "Exchanging
 * multiple messages via MPI", EPCC/HPCx 2003, sections 3 to 5).
 *
 * Pairs (i, i + N/2) run at once; task i starts every cycle and times it.
 * speed = 2 n size / cycle time (MB/s, MB = 10^6 bytes, as OSU and IMB);
 * for n = 1 the latency is half the cycle, averaged over cycles: the
 * definition of osu_latency. */
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "jb_core.h"

static const char usage[] =
    "Multi-ping-pong: task i sends n messages to task i + N/2, which sends them back.\n"
    "  --mode LIST           send|isend|ssend|issend or all [all]\n"
    "  --size LIST           bytes per message: 8,1K or 8:64K [8:64K]\n"
    "  --messages LIST       n, messages per direction and cycle, 1 to 64 [1,2,4,8,16,32,64]\n"
    "  --total LIST          fixed-total mode: each total split into n messages (size = total / n)\n"
    "  --one-way             osu_bw's window instead: n messages there (MPI_Isend, one MPI_Waitall),\n"
    "                        one byte back; speed = n size / cycle (mode 'window')\n"
    "  --buffers B           multiple: each message its own buffer, as a code sends distinct data\n"
    "                        (osu_bw -b multiple); single: every message one buffer, which stays\n"
    "                        in cache (osu_bw's default) [multiple]\n"
    "  --series              per-cycle MAX and AVG over pairs in the JSON\n";

/* --one-way's cycle, beside the four send modes of a multi-ping-pong */
enum { MODE_WINDOW = NMODES };

static const char *const buffer_names[] = {"multiple", "single", NULL};

static const char *mode_name(int mode) { return mode == MODE_WINDOW ? "window" : send_mode_names[mode]; }

typedef struct {
    int modes[NMODES];
    size_t *sizes, *totals;
    int nsizes, ntotals;
    long *messages;
    int nmessages;
    int series, one_way, one_buffer;
} pp_options;

static unsigned char payload(int pair, int direction, int k, size_t i)
{
    return (unsigned char)(pair * 7 + direction * 5 + k * 13 + (long)i);
}

static long most_messages(const pp_options *o)
{
    long most = 0;
    for (int k = 0; k < o->nmessages; k++)
        most = o->messages[k] > most ? o->messages[k] : most;
    return most;
}

/* The largest message: a size, or a whole total (sent as one message when n = 1). */
static size_t largest_message(const pp_options *o)
{
    size_t sizes = jb_largest(o->sizes, o->nsizes), totals = jb_largest(o->totals, o->ntotals);
    return sizes > totals ? sizes : totals;
}

static void parse(jb_ctx *ctx, int argc, char **argv, pp_options *o)
{
    static const struct option longopts[] = {
        {"mode", required_argument, NULL, 'M'}, {"size", required_argument, NULL, 's'},
        {"messages", required_argument, NULL, 'n'}, {"total", required_argument, NULL, 'T'},
        {"series", no_argument, NULL, 'S'}, {"one-way", no_argument, NULL, 'W'},
        {"buffers", required_argument, NULL, 'b'}, JB_COMMON_LONGOPTS};
    int c, modes_given = 0, buffers[2];
    char err[JB_ERRLEN];
    memset(o, 0, sizeof *o);
    for (int m = 0; m < NMODES; m++)
        o->modes[m] = 1;
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'M':
            jb_option(ctx, "--mode", jb_parse_name_list(optarg, send_mode_names, NULL, o->modes, err), err);
            modes_given = 1;
            break;
        case 'W': o->one_way = 1; break;
        case 's': jb_option(ctx, "--size", jb_parse_size_list(optarg, &o->sizes, &o->nsizes, err), err); break;
        case 'n': jb_option(ctx, "--messages", jb_parse_long_list(optarg, 1, 64, &o->messages, &o->nmessages, err), err); break;
        case 'T': jb_option(ctx, "--total", jb_parse_size_list(optarg, &o->totals, &o->ntotals, err), err); break;
        case 'S': o->series = 1; break;
        case 'b':
            jb_option(ctx, "--buffers", jb_parse_name_list(optarg, buffer_names, NULL, buffers, err), err);
            if (buffers[0] + buffers[1] != 1)
                jb_fail(ctx, "--buffers: give one policy, multiple or single");
            o->one_buffer = buffers[1];
            break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    if (ctx->size % 2)
        jb_fail(ctx, "needs an even number of tasks (pairs i, i + N/2), not %d", ctx->size);
    if (o->sizes && o->totals)
        jb_fail(ctx, "give either --size or --total");
    if (o->one_way && modes_given)
        jb_fail(ctx, "--one-way has a cycle of its own: give no --mode");
    if (!o->sizes && !o->totals)
        jb_option(ctx, "--size", jb_parse_size_list("8:64K", &o->sizes, &o->nsizes, err), err);
    if (!o->messages)
        jb_option(ctx, "--messages", jb_parse_long_list("1,2,4,8,16,32,64", 1, 64, &o->messages, &o->nmessages, err), err);
    for (int t = 0; t < o->ntotals; t++)
        for (int k = 0; k < o->nmessages; k++)
            if (o->totals[t] % (size_t)o->messages[k])
                jb_fail(ctx, "--total %zu does not split into %ld equal messages", o->totals[t], o->messages[k]);
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > (size_t)1 << 30)
            jb_fail(ctx, "--size: sizes above 1G are not supported");
    for (int t = 0; t < o->ntotals; t++)
        if (o->totals[t] > (size_t)1 << 30)
            jb_fail(ctx, "--total: totals above 1G are not supported");

    jb_memory m = {0};
    jb_memory_add(&m, o->totals ? "--messages x --total (a send and a receive buffer per message)"
                                : "--messages x --size (a send and a receive buffer per message)",
                  2 * (size_t)most_messages(o), largest_message(o) + 1);
    long modes = o->one_way;
    for (int mode = 0; mode < MODE_WINDOW; mode++)
        modes += !o->one_way && o->modes[mode];
    jb_calls_memory_variants(&m, ctx->opt.calls, modes * o->nmessages * (o->nsizes + o->ntotals));
    jb_memory_check(ctx, &m);
}

/* One variant: a mode, a size and a number of messages. */
typedef struct {
    int mode, n;
    size_t size;
} pp_variant;

/* One share of a variant's cycles (jb_schedule): its payloads, its warm-up and timed
 * cycles, then what arrived checked. */
static void run_share(jb_ctx *ctx, pingpong *p, int pair, const pp_variant *w, const jb_schedule *sch, jb_calls *st)
{
    int mode = w->mode, n = w->n;
    size_t size = w->size;
    p->n = n;
    p->size = size;
    int buffers = p->one_buffer ? 1 : n; /* one buffer: every message carries message 0's payload */
    for (int k = 0; k < buffers; k++) {
        for (size_t i = 0; i < size; i++)
            p->send[k][i] = (char)payload(pair, p->pinger, k, i);
        memset(p->recv[k], 0, size);
    }
    jb_calls_share(ctx, st, sch, "mode %s, size %zu, %d message(s),", mode_name(mode), size, n);
    MPI_Barrier(ctx->world);
    for (long c = sch->first - sch->warm; c < sch->end; c++) {
        double t0 = MPI_Wtime();
        if (mode == MODE_WINDOW)
            pingpong_window(p);
        else
            pingpong_cycle(p, mode);
        double us = (MPI_Wtime() - t0) * 1e6;
        if (c >= 0 && p->pinger)
            jb_calls_record(st, c, us);
    }
    long bad = 0;
    int received = mode != MODE_WINDOW || !p->pinger; /* a window's sender gets one byte back, no payload */
    for (int k = 0; received && k < buffers; k++)
        for (size_t i = 0; i < size; i++)
            bad += (unsigned char)p->recv[k][i] != payload(pair, !p->pinger, k, i);
    jb_fail_if_any(ctx, bad != 0, "mode %s: messages arrived with wrong payload bytes", mode_name(mode));
}

/* One result, after every round. */
static void report(jb_ctx *ctx, const pp_options *o, const pingpong *p, MPI_Comm pingers, const pp_variant *w,
                   long off_node_pairs, jb_calls *st)
{
    int mode = w->mode, n = w->n;
    size_t size = w->size;
    if (!p->pinger)
        return;
    jb_calls_reduce(st, pingers);
    if (ctx->rank != 0)
        return;
    jb_result_begin(ctx);
    jb_result_str(ctx, "mode", mode_name(mode), 1);
    jb_result_int(ctx, "size", (long long)size, 1);
    jb_result_int(ctx, "messages", n, 1);
    jb_result_int(ctx, "total", (long long)size * n, 0);
    jb_result_str(ctx, "buffers", buffer_names[p->one_buffer], 0);
    jb_result_int(ctx, "pairs", ctx->size / 2, 0);
    jb_result_int(ctx, "pairs_off_node", off_node_pairs, 0);
    jb_result_int(ctx, "cycles", ctx->opt.calls, 0);
    jb_calls_report(ctx, st, o->series);
    double mean_max = 0, mean_avg = 0;
    for (long c = 0; c < st->calls; c++) {
        mean_max += st->max[c] / st->calls;
        mean_avg += st->sum[c] / st->tasks / st->calls;
    }
    jb_summary slowest;
    jb_summarize(st->max, (size_t)st->calls, &slowest);
    double moved = (mode == MODE_WINDOW ? 1.0 : 2.0) * n * size; /* bytes per cycle */
    jb_result_num(ctx, "speed_mb_s", moved / mean_max, 1);
    jb_result_num(ctx, "speed_p50_mb_s", moved / slowest.p50, 0);
    if (n == 1 && mode != MODE_WINDOW)
        jb_result_num(ctx, "latency_us", mean_avg / 2, 0);
    jb_result_end(ctx);
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    pp_options o;
    jb_init(&ctx, &argc, &argv, "pingpong", usage, 500, 20);
    parse(&ctx, argc, argv, &o);

    int half = ctx.size / 2;
    pingpong p = {.comm = ctx.world, .one_buffer = o.one_buffer};
    p.pinger = ctx.rank < half;
    p.partner = p.pinger ? ctx.rank + half : ctx.rank - half;
    int pair = p.pinger ? ctx.rank : ctx.rank - half;
    int partner_node;
    MPI_Sendrecv(&ctx.nodes.node, 1, MPI_INT, p.partner, 0, &partner_node, 1, MPI_INT, p.partner, 0,
                 ctx.world, MPI_STATUS_IGNORE);
    int crossed = partner_node != ctx.nodes.node;
    long off_node_pairs = 0, mine = p.pinger && crossed;
    /* the first 64 pairs that crossed nodes, as a bit set: bounded, whatever the task count */
    unsigned long long crossed_bits = pair < 64 && p.pinger && crossed ? 1ULL << pair : 0, crossed_all = 0;
    MPI_Reduce(&mine, &off_node_pairs, 1, MPI_LONG, MPI_SUM, 0, ctx.world);
    MPI_Reduce(&crossed_bits, &crossed_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_BOR, 0, ctx.world);
    MPI_Comm pingers;
    MPI_Comm_split(ctx.world, p.pinger, ctx.rank, &pingers);

    size_t max_bytes = largest_message(&o);
    long max_n = most_messages(&o);
    p.send = jb_alloc(&ctx, (size_t)max_n, sizeof *p.send, "--messages");
    p.recv = jb_alloc(&ctx, (size_t)max_n, sizeof *p.recv, "--messages");
    p.req = jb_alloc(&ctx, 2 * (size_t)max_n, sizeof *p.req, "--messages");
    for (int k = 0; k < max_n; k++) {
        p.send[k] = jb_alloc(&ctx, max_bytes + 1, 1, "--size");
        p.recv[k] = jb_alloc(&ctx, max_bytes + 1, 1, "--size");
    }

    jb_json *cfg = &ctx.config;
    jb_json_int(cfg, "pairs", half);
    jb_json_int(cfg, "pairs_off_node", off_node_pairs);
    jb_json_array(cfg, "off_node_pairs_below_64");
    for (int k = 0; k < 64 && k < half; k++)
        if (crossed_all >> k & 1)
            jb_json_int(cfg, NULL, k);
    jb_json_end(cfg);
    jb_json_str(cfg, "buffers", buffer_names[o.one_buffer]);
    jb_json_str(cfg, "buffers_means", "multiple: message k of a cycle is sent from and received into buffer k of n "
                                      "(osu_bw -b multiple); single: every message from one send buffer into one "
                                      "receive buffer (osu_bw's default), which stays in cache");
    jb_json_str(cfg, "call", "one cycle (calls = cycles), timed on task i of each pair: n messages there, n back");
    jb_json_str(cfg, "speed_mb_s", "2 n size / max_us (mode window: n size / max_us), MB = 10^6 bytes");
    jb_json_str(cfg, "latency_us", "n = 1 only: avg_us / 2, the mean half round trip (osu_latency's definition)");
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-pingpong: %d pair(s) (i, i + %d), %ld crossing nodes; %ld cycles after %ld warm-up; "
               "times in us per cycle (MAX/AVG over pairs), speed in MB/s\n",
               half, half, off_node_pairs, ctx.opt.calls, ctx.opt.warmup);

    /* the variants, modes outer, then message counts, then sizes and totals, as the results list them */
    pp_variant *vs = jb_alloc(&ctx, (size_t)(MODE_WINDOW + 1) * (size_t)o.nmessages * (size_t)(o.nsizes + o.ntotals),
                              sizeof *vs, "--mode x --messages x --size");
    int variants = 0;
    for (int mode = 0; mode <= MODE_WINDOW; mode++) {
        if (mode == MODE_WINDOW ? !o.one_way : o.one_way || !o.modes[mode])
            continue;
        for (int k = 0; k < o.nmessages; k++) {
            int n = (int)o.messages[k];
            for (int i = 0; i < o.nsizes; i++)
                vs[variants++] = (pp_variant){mode, n, o.sizes[i]};
            for (int t = 0; t < o.ntotals; t++)
                vs[variants++] = (pp_variant){mode, n, o.totals[t] / (size_t)n};
        }
    }
    jb_calls *st = jb_alloc(&ctx, (size_t)variants, sizeof *st, "--mode x --messages x --size");
    for (int v = 0; v < variants; v++)
        jb_calls_init(&ctx, &st[v], ctx.opt.calls);
    jb_schedule sch;
    jb_calls_schedule(&ctx, &sch, variants, ctx.opt.calls);
    while (jb_schedule_next(&sch))
        run_share(&ctx, &p, pair, &vs[sch.variant], &sch, &st[sch.variant]);
    jb_calls_schedule_end(&ctx, &sch, st);
    for (int v = 0; v < variants; v++) {
        report(&ctx, &o, &p, pingers, &vs[v], off_node_pairs, &st[v]);
        jb_calls_free(&st[v]);
    }
    free(st);
    free(vs);
    MPI_Comm_free(&pingers);
    return jb_finish(&ctx);
}
