/* jb-halo: the halo exchange of J. Hague, "Switch Jitter" (IBM, 2008).
 *
 * Each call is MPI_Barrier followed by one exchange with the four
 * neighbours; every task times its call from after the barrier to the end of
 * its exchange.  For call c and task t with time x[t][c]:
 *   MAX = mean over c of (max over t of x[t][c])
 *   AVG = mean over c of (mean over t of x[t][c]),  MIN likewise.
 * They come from reductions of length "calls" and a merged histogram, never
 * from gathering every task's times, so the benchmark scales to 100,000 tasks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decomp.h"
#include "exchange.h"
#include "jb_core.h"

#define MAX_TRACED 64

static const char usage[] =
    "Halo exchange on a 2-D grid of px (east-west) by N/px (north-south) tasks.\n"
    "  --pattern LIST        two-phase|irecv-isend|isend-recv|sendrecv (or a,b,c,d) or all [all]\n"
    "  --placement P         row | bunched: a node holds a row strip or a block [row]\n"
    "  --block AxB           the bunched block, A east-west by B north-south [squarest that tiles]\n"
    "  --px N                tasks east-west [16, or the largest divisor of N below it]\n"
    "  --non-periodic        no wrap-around: edge tasks have fewer neighbours\n"
    "  --self-messages       a dimension of extent 1 wraps onto the task: send it those\n"
    "                        messages too [none: no task sends to itself, as IMB Exchange]\n"
    "  --size LIST           message sizes, both directions: 848,1K or 8:64K [4K]\n"
    "  --ns-size S, --ew-size S  override the size of one direction (Jacobi: 848 and 1016;\n"
    "                        0: zero-byte messages, as --size 0)\n"
    JB_NOISE_USAGE
    "                        A chance: each task's call, inside the timed region\n"
    "  --target-width W      stop a variant once the median of its per-call MAX has a 95 %\n"
    "                        interval (order statistics) of relative half-width <= W, checked\n"
    "                        after each of its --rounds shares; --calls is the cap [0: off]\n"
    "  --series              per-call MAX and AVG in the JSON\n"
    "  --trace-tasks LIST    per-call times of these ranks of MPI_COMM_WORLD in the JSON (at most 64)\n";

static const char *const placement_names[] = {"row", "bunched", NULL};

typedef struct {
    halo_layout layout;
    int patterns[NPATTERNS];
    size_t *ns_sizes, *ew_sizes;
    int nsizes;
    jb_noise noise;
    int series;
    double target_width;
    long *traced;
    int ntraced;
} halo_options;

static void parse_options(jb_ctx *ctx, int argc, char **argv, halo_options *o)
{
    static const struct option longopts[] = {
        {"pattern", required_argument, NULL, 'p'},   {"placement", required_argument, NULL, 'P'},
        {"block", required_argument, NULL, 'b'},     {"px", required_argument, NULL, 'x'},
        {"non-periodic", no_argument, NULL, 'N'},    {"size", required_argument, NULL, 's'},
        {"self-messages", no_argument, NULL, 'M'},
        {"ns-size", required_argument, NULL, 'y'},   {"ew-size", required_argument, NULL, 'e'},
        {"inject", required_argument, NULL, 'i'},    {"inject-by", required_argument, NULL, 'B'}, JB_INJECT_TASKS_LONGOPT,
        {"series", no_argument, NULL, 'S'},           {"target-width", required_argument, NULL, 'W'},
        {"trace-tasks", required_argument, NULL, 't'}, JB_COMMON_LONGOPTS};
    halo_layout *L = &o->layout;
    size_t ns = 0, ew = 0;
    int ns_given = 0, ew_given = 0;
    long px = 0;
    int c, dims[2], ndims, place[2];
    char err[JB_ERRLEN];
    memset(o, 0, sizeof *o);
    L->periodic = 1;
    for (int p = 0; p < NPATTERNS; p++)
        o->patterns[p] = 1;
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'p':
            jb_option(ctx, "--pattern", jb_parse_name_list(optarg, halo_pattern_names, halo_pattern_letters, o->patterns, err), err);
            break;
        case 'P':
            jb_option(ctx, "--placement", jb_parse_name_list(optarg, placement_names, NULL, place, err), err);
            if (place[0] + place[1] != 1)
                jb_fail(ctx, "--placement: give one placement, row or bunched");
            L->placement = place[1] ? PLACE_BUNCHED : PLACE_ROW;
            break;
        case 'b':
            jb_option(ctx, "--block", jb_parse_dims(optarg, 2, dims, &ndims, err), err);
            if (ndims != 2)
                jb_fail(ctx, "--block: '%s' is not AxB", optarg);
            L->bx = dims[0];
            L->by = dims[1];
            break;
        case 'x': jb_option(ctx, "--px", jb_parse_long(optarg, 1, 1 << 24, &px, err), err); break;
        case 'N': L->periodic = 0; break;
        case 'M': L->self_messages = 1; break;
        case 's':
            free(o->ns_sizes);
            jb_option(ctx, "--size", jb_parse_size_list(optarg, &o->ns_sizes, &o->nsizes, err), err);
            break;
        case 'y':
            jb_option(ctx, "--ns-size", jb_parse_size(optarg, &ns, err), err);
            ns_given = 1;
            break;
        case 'e':
            jb_option(ctx, "--ew-size", jb_parse_size(optarg, &ew, err), err);
            ew_given = 1;
            break;
        case 'i': jb_noise_parse(ctx, "--inject", optarg, &o->noise); break;
        case 'B': jb_noise_parse_by(ctx, optarg, &o->noise); break;
        case JB_OPT_INJECT_TASKS: jb_noise_parse_tasks(ctx, optarg, &o->noise); break;
        case 'S': o->series = 1; break;
        case 'W': jb_option(ctx, "--target-width", jb_parse_double(optarg, 1e-6, 10, &o->target_width, err), err); break;
        case 't':
            jb_option(ctx, "--trace-tasks", jb_parse_long_list(optarg, 0, ctx->size - 1, &o->traced, &o->ntraced, err), err);
            if (o->ntraced > MAX_TRACED)
                jb_fail(ctx, "--trace-tasks: at most %d tasks", MAX_TRACED);
            break;
        default:
            jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);

    /* --size sweeps both directions; --ns-size / --ew-size override one direction */
    if (!o->ns_sizes)
        jb_option(ctx, "--size", jb_parse_size_list("4K", &o->ns_sizes, &o->nsizes, err), err);
    o->ew_sizes = jb_alloc(ctx, (size_t)o->nsizes, sizeof *o->ew_sizes, "--size");
    for (int i = 0; i < o->nsizes; i++) {
        o->ew_sizes[i] = ew_given ? ew : o->ns_sizes[i];
        o->ns_sizes[i] = ns_given ? ns : o->ns_sizes[i];
        if (o->ns_sizes[i] > (size_t)1 << 30 || o->ew_sizes[i] > (size_t)1 << 30)
            jb_fail(ctx, "message sizes above 1G are not supported");
    }

    if (L->placement == PLACE_ROW && (L->bx || L->by))
        jb_fail(ctx, "--block goes with --placement bunched");
    if (ctx->nodes.tasks_per_node == 0)
        jb_fail(ctx, "nodes hold different numbers of tasks (%d to %d); give --tasks-per-node",
                ctx->nodes.min_tpn, ctx->nodes.max_tpn);
    L->tpn = ctx->nodes.tasks_per_node;
    L->px = px ? (int)px : halo_default_px(ctx->size, 16);
    jb_option(ctx, "decomposition", halo_layout_setup(L, ctx->size, err), err);

    size_t ns_most = jb_largest(o->ns_sizes, o->nsizes), ew_most = jb_largest(o->ew_sizes, o->nsizes),
           largest = ns_most > ew_most ? ns_most : ew_most;
    jb_memory m = {0};
    /* named by the option that set the largest size: --ns-size or --ew-size where one overrides --size */
    const char *sized = ns_given && ns_most == largest ? "--ns-size" : ew_given && ew_most == largest ? "--ew-size" : "--size";
    char what[80];
    snprintf(what, sizeof what, "%s (a send and a receive buffer per direction)", sized);
    jb_memory_add(&m, what, 2 * NDIRS, largest + 1);
    long variants = 0;
    for (int p = 0; p < NPATTERNS; p++)
        variants += o->patterns[p] ? o->nsizes : 0;
    jb_calls_memory_variants(&m, ctx->opt.calls, variants);
    jb_memory_add(&m, "--calls x variants (noise injected per call)", (size_t)variants + 1,
                  (size_t)ctx->opt.calls * sizeof(double));
    jb_memory_add(&m, "--trace-tasks x --calls (on rank 0)", (size_t)o->ntraced, (size_t)ctx->opt.calls * sizeof(double));
    jb_memory_check(ctx, &m);
}

/* Payload byte i sent by grid task g towards d in call c: checked on receipt. */
static unsigned char payload(int g, int d, long c, size_t i)
{
    return (unsigned char)(g * 7 + d * 13 + c * 31 + (long)i);
}

static void fill_payloads(halo_exchange *h, int g, long call)
{
    for (int d = 0; d < NDIRS; d++)
        for (size_t i = 0; i < h->bytes[d]; i++)
            h->send[d][i] = (char)payload(g, d, call, i);
}

/* Returns the number of wrong bytes received in this call. */
static long check_payloads(const halo_exchange *h, long call)
{
    static const int opposite[NDIRS] = {SOUTH, NORTH, WEST, EAST};
    long bad = 0;
    for (int d = 0; d < NDIRS; d++) {
        if (h->nb[d] == MPI_PROC_NULL)
            continue;
        for (size_t i = 0; i < h->bytes[d]; i++)
            bad += (unsigned char)h->recv[d][i] != payload(h->nb[d], opposite[d], call, i);
    }
    return bad;
}

/* What one call sends, counted exactly from the layout (on rank 0, O(tasks)). */
typedef struct {
    int off_node_max;   /* off-node send/recvs of the busiest node */
    double off_node_mean;
    long messages;      /* messages sent, summed over the tasks */
    int messages_most;  /* the most one task sends */
} halo_traffic;

static void report(jb_ctx *ctx, const halo_options *o, int pattern, int s, const jb_calls *st,
                   long injected, const double *injected_per_call, double **traces, const halo_traffic *t)
{
    jb_result_begin(ctx);
    jb_result_str(ctx, "placement", placement_names[o->layout.placement], 1);
    jb_result_str(ctx, "pattern", halo_pattern_names[pattern], 1);
    jb_result_int(ctx, "ns_size", (long long)o->ns_sizes[s], 1);
    jb_result_int(ctx, "ew_size", (long long)o->ew_sizes[s], 1);
    jb_result_int(ctx, "tasks", ctx->size, 0);
    jb_result_int(ctx, "nodes", ctx->nodes.nnodes, 0);
    jb_result_int(ctx, "tasks_per_node", o->layout.tpn, 0);
    jb_result_int(ctx, "off_node_per_node", t->off_node_max, 0);
    jb_result_int(ctx, "messages_per_call", t->messages, 0);
    jb_result_int(ctx, "messages_per_task", t->messages_most, 0);
    jb_result_int(ctx, "calls", st->calls, 0);
    jb_result_int(ctx, "injected_task_calls", injected, 0);
    jb_calls_report(ctx, st, o->series);
    if (ctx->rank == 0) {
        /* the study's "GB/s per node": what the busiest node sends off-node in a call, over
         * the call's time as the step waits for it (the per-call MAX, mean over calls) */
        double bytes = halo_off_node_bytes_per_node(&o->layout, o->ns_sizes[s], o->ew_sizes[s]);
        double max_us = jb_calls_mean_max(st);
        jb_result_num(ctx, "off_node_bytes_per_node", bytes, 0);
        jb_result_num(ctx, "gb_s_per_node", max_us > 0 ? bytes / max_us * 1e-3 : 0, 1);
    }
    if (ctx->rank == 0 && o->series && o->noise.p > 0) /* which calls got noise, on how many tasks */
        jb_json_nums(jb_result_json(ctx), "injected_tasks_per_call", injected_per_call, (size_t)st->calls);
    if (ctx->rank == 0 && o->ntraced) {
        jb_json *j = jb_result_json(ctx);
        jb_json_object(j, "traces");
        for (int k = 0; k < o->ntraced; k++) {
            char key[32];
            snprintf(key, sizeof key, "%ld", o->traced[k]);
            jb_json_nums(j, key, traces[k], (size_t)st->calls);
        }
        jb_json_end(j);
    }
    jb_result_end(ctx);
}

/* Sends the traced tasks' per-call times to rank 0 (a bounded number of tasks).  A traced task is
 * a world rank, as --inject-tasks's, whatever role --rank-order gave it.  (Not MPI_ANY_SOURCE:
 * MPICH over UCX between virtual nodes never matched it.) */
static void collect_traces(jb_ctx *ctx, const halo_options *o, const double *mine, double **traces)
{
    long calls = ctx->opt.calls;
    for (int k = 0; k < o->ntraced; k++) {
        int src = jb_rank_of_world(ctx, (int)o->traced[k]);
        if (src == 0 && ctx->rank == 0)
            memcpy(traces[k], mine, (size_t)calls * sizeof *mine);
        else if (ctx->rank == src)
            MPI_Send(mine, (int)calls, MPI_DOUBLE, 0, 77, ctx->world);
        else if (ctx->rank == 0)
            MPI_Recv(traces[k], (int)calls, MPI_DOUBLE, src, 77, ctx->world, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    halo_options o;
    jb_init(&ctx, &argc, &argv, "halo", usage, 1000, 50);
    parse_options(&ctx, argc, argv, &o);
    halo_layout *L = &o.layout;
    long calls = ctx.opt.calls;

    /* a communicator whose ranks are the grid indices of this placement */
    int g = halo_grid_index(L, ctx.nodes.node, ctx.nodes.local_rank);
    halo_exchange h = {0};
    MPI_Comm_split(ctx.world, 0, g, &h.comm);
    int nb[NDIRS];
    halo_neighbours(L, g, nb);
    for (int d = 0; d < NDIRS; d++)
        h.nb[d] = nb[d] < 0 ? MPI_PROC_NULL : nb[d];
    halo_traffic traffic = {0};
    if (ctx.rank == 0) {
        halo_off_node_per_node(L, &traffic.off_node_max, &traffic.off_node_mean);
        traffic.messages = halo_messages_per_call(L, &traffic.messages_most);
    }

    jb_json *cfg = &ctx.config;
    jb_json_int(cfg, "px", L->px);
    jb_json_int(cfg, "py", L->py);
    jb_json_bool(cfg, "periodic", L->periodic);
    jb_json_str(cfg, "placement", placement_names[L->placement]);
    if (L->placement == PLACE_BUNCHED) {
        jb_json_int(cfg, "block_x", L->bx);
        jb_json_int(cfg, "block_y", L->by);
    }
    jb_json_int(cfg, "tasks_per_node", L->tpn);
    jb_json_bool(cfg, "self_messages", L->self_messages);
    jb_json_int(cfg, "off_node_per_node", traffic.off_node_max);
    jb_json_num(cfg, "off_node_per_node_mean", traffic.off_node_mean);
    jb_json_int(cfg, "messages_per_call", traffic.messages);
    jb_json_str(cfg, "messages_per_call_means", "messages one call sends, summed over the tasks (as many are "
                                                "received); none to a task itself unless self_messages");
    jb_json_int(cfg, "messages_per_task", traffic.messages_most);
    jb_noise_start(&ctx, &o.noise);
    if (o.target_width > 0)
        jb_json_num(cfg, "target_width", o.target_width);
    jb_json_str(cfg, "call", "a barrier (or --sync window), then the exchange; each task times from its start to the end of its exchange");
    jb_calls_describe(cfg);

    if (ctx.rank == 0) {
        printf("# jb-halo: %d tasks as %d east-west x %d north-south%s, %s placement",
               ctx.size, L->px, L->py, L->periodic ? " (periodic)" : "", placement_names[L->placement]);
        if (L->placement == PLACE_BUNCHED)
            printf(" (%dx%d blocks)", L->bx, L->by);
        printf(", %d nodes of %d tasks%s, %d off-node send/recvs per node per call, %ld messages per call "
               "(at most %d a task)\n", ctx.nodes.nnodes, L->tpn, ctx.nodes.virtual_nodes ? " (virtual)" : "",
               traffic.off_node_max, traffic.messages, traffic.messages_most);
        printf("# %ld calls after %ld warm-up; MAX/AVG/MIN = mean over calls of max/mean/min over tasks;"
               " p50/p99 = percentiles of the per-call MAX; times in us\n", calls, ctx.opt.warmup);
    }

    /* the variants, sizes outer and patterns inner as the results list them */
    int variants = 0, *variant_size = jb_alloc(&ctx, (size_t)o.nsizes * NPATTERNS, sizeof(int), "--size"),
        *variant_pattern = jb_alloc(&ctx, (size_t)o.nsizes * NPATTERNS, sizeof(int), "--size");
    for (int s = 0; s < o.nsizes; s++)
        for (int pattern = 0; pattern < NPATTERNS; pattern++)
            if (o.patterns[pattern]) {
                variant_size[variants] = s;
                variant_pattern[variants++] = pattern;
            }
    jb_calls *st = jb_alloc(&ctx, (size_t)variants, sizeof *st, "--size x --pattern");
    for (int v = 0; v < variants; v++)
        jb_calls_init(&ctx, &st[v], calls);
    long *injected = jb_alloc(&ctx, (size_t)variants, sizeof *injected, "--size x --pattern"),
         *bad_bytes = jb_alloc(&ctx, (size_t)variants, sizeof *bad_bytes, "--size x --pattern");
    /* which calls got noise, per variant, only when the series shows it */
    int noise_series = o.series && o.noise.p > 0;
    double *injected_mine = jb_alloc(&ctx, (noise_series ? (size_t)variants : 1) * (size_t)calls,
                                     sizeof *injected_mine, "--calls");
    double *injected_per_call = jb_alloc(&ctx, (size_t)calls, sizeof *injected_per_call, "--calls");
    double **traces = jb_alloc(&ctx, (size_t)o.ntraced + 1, sizeof *traces, "--trace-tasks");
    for (int k = 0; ctx.rank == 0 && k < o.ntraced; k++)
        traces[k] = jb_alloc(&ctx, (size_t)calls, sizeof **traces, "--trace-tasks x --calls");
    size_t largest = jb_largest(o.ns_sizes, o.nsizes) > jb_largest(o.ew_sizes, o.nsizes)
                         ? jb_largest(o.ns_sizes, o.nsizes) : jb_largest(o.ew_sizes, o.nsizes);
    for (int d = 0; d < NDIRS; d++) {
        h.send[d] = jb_alloc(&ctx, largest + 1, 1, "--size");
        h.recv[d] = jb_alloc(&ctx, largest + 1, 1, "--size");
    }

    jb_schedule sch;
    jb_calls_schedule(&ctx, &sch, variants, ctx.opt.calls);
    while (jb_schedule_next(&sch)) {
        int v = sch.variant, s = variant_size[v], pattern = variant_pattern[v];
        double *injected_of = injected_mine + (noise_series ? (size_t)v * (size_t)calls : 0);
        for (int d = 0; d < NDIRS; d++)
            h.bytes[d] = d == NORTH || d == SOUTH ? o.ns_sizes[s] : o.ew_sizes[s];
        jb_calls_share(&ctx, &st[v], &sch, "pattern %s, sizes %zu (north-south) and %zu (east-west),",
                       halo_pattern_names[pattern], o.ns_sizes[s], o.ew_sizes[s]);
        for (long c = sch.first - sch.warm; c < sch.end; c++) {
            if (ctx.opt.validate)
                fill_payloads(&h, g, c);
            double t0 = jb_call_start(&ctx, &st[v], h.comm, c);
            int inject = jb_noise_maybe(&o.noise);
            jb_call_entered(&ctx, &st[v], c);
            halo_exchange_run(&h, pattern);
            double us = (MPI_Wtime() - t0) * 1e6;
            if (ctx.opt.validate)
                bad_bytes[v] += check_payloads(&h, c);
            if (c >= 0) {
                jb_calls_record(&st[v], c, us);
                injected[v] += inject;
                injected_of[c] = inject;
            }
        }
        if (o.target_width > 0 && jb_calls_settled(&st[v], &sch, ctx.world, o.target_width))
            jb_schedule_settle(&sch, v);
    }
    jb_calls_schedule_end(&ctx, &sch, st);

    for (int v = 0; v < variants; v++) {
        int s = variant_size[v], pattern = variant_pattern[v];
        long injected_all = 0;
        jb_calls_reduce(&st[v], ctx.world);
        MPI_Reduce(&injected[v], &injected_all, 1, MPI_LONG, MPI_SUM, 0, ctx.world);
        if (noise_series)
            MPI_Reduce(injected_mine + (size_t)v * (size_t)calls, injected_per_call, (int)calls, MPI_DOUBLE, MPI_SUM,
                       0, ctx.world);
        collect_traces(&ctx, &o, st[v].mine, traces);
        jb_fail_if_any(&ctx, bad_bytes[v] != 0, "--validate: pattern %s received wrong payload bytes",
                       halo_pattern_names[pattern]);
        if (ctx.rank == 0)
            report(&ctx, &o, pattern, s, &st[v], injected_all, injected_per_call, traces, &traffic);
        jb_calls_free(&st[v]);
    }
    for (int d = 0; d < NDIRS; d++) {
        free(h.send[d]);
        free(h.recv[d]);
    }
    for (int k = 0; k < o.ntraced; k++)
        free(traces[k]);
    free(traces);
    free(st);
    free(injected);
    free(bad_bytes);
    free(injected_mine);
    free(injected_per_call);
    free(variant_size);
    free(variant_pattern);
    MPI_Comm_free(&h.comm);
    return jb_finish(&ctx);
}
