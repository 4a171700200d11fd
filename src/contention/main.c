/* jb-contention: message latency against hops and against contention on a
 * torus or mesh (A. Bhatele, L. V. Kale, "An evaluative study on the effect
 * of contention on message latencies in large supercomputers", IPDPS 2009).
 *
 * One task per node takes part, at the node's coordinates (a topology file,
 * --dims over the tasks, or a ring of the nodes in rank order).  A call is a
 * barrier, then one ping-pong of every active pair at once; the side that
 * starts times the round trip.  latency = round trip / 2, as osu_latency. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "jb_core.h"
#include "pairs.h"

static const char usage[] =
    "Ping-pong latency against hop distance, with and without contention for links.\n"
    "  --pattern LIST        hops (one pair at a time, partner h hops away), pairs (all tasks\n"
    "                        paired n hops apart along --dim), link (k pairs whose routes share\n"
    "                        one link), random (random pairs every call), or all [all]\n"
    "  --size LIST           bytes per message: 8,1K or 8:1M [8:1M]\n"
    "  --hops LIST           h for hops, n for pairs [every distance the topology has]\n"
    "  --k LIST              pairs sharing the link, 1..H where H = dims[dim]/2 [1..H]\n"
    "  --dim D               the dimension of pairs and link [0]\n"
    "  --topology FILE       host name -> coordinates (see systems/topologies/)\n"
    "  --dims AxBxC          a logical torus over the tasks themselves, one task per node\n"
    "  --wrap LIST           with --dims: yes|no per dimension [yes for all]\n"
    "  default topology      a ring of the nodes in rank order\n";

enum { PAT_HOPS, PAT_PAIRS, PAT_LINK, PAT_RANDOM, NPATTERNS };
static const char *const pattern_names[] = {"hops", "pairs", "link", "random", NULL};
static const char *const pattern_descr[] = {
    "without contention: one pair at a time, the first participant and the first one h hops from it",
    "with contention: every participant paired n hops away along --dim, in blocks of 2n, all at once",
    "controlled contention: k pairs, each H hops apart along --dim, whose routes share one link",
    "random pairing, drawn again every call (the same draw on every rank)"};

typedef struct {
    int patterns[NPATTERNS];
    size_t *sizes;
    int nsizes;
    long *hops, *ks;
    int nhops, nks;
    long dim;
    const char *topology, *dims, *wrap;
} ct_options;

/* Who takes part, and where. */
typedef struct {
    topo_shape shape;
    long participants; /* nodes of the job (or tasks, with --dims) */
    long me;           /* this rank's participant number, or -1 */
    int *rank_of;      /* world rank of each participant */
    int *coords;       /* participants x ndims */
    long *occupant;    /* node index -> participant, or -1 */
    char source[512];
} layout;

static void parse(jb_ctx *ctx, int argc, char **argv, ct_options *o)
{
    static const struct option longopts[] = {
        {"pattern", required_argument, NULL, 'p'}, {"size", required_argument, NULL, 's'},
        {"hops", required_argument, NULL, 'H'}, {"k", required_argument, NULL, 'k'},
        {"dim", required_argument, NULL, 'D'}, {"topology", required_argument, NULL, 't'},
        {"dims", required_argument, NULL, 'd'}, {"wrap", required_argument, NULL, 'w'}, JB_COMMON_LONGOPTS};
    int c, given = 0;
    char err[JB_ERRLEN];
    memset(o, 0, sizeof *o);
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'p':
            jb_option(ctx, "--pattern", jb_parse_name_list(optarg, pattern_names, NULL, o->patterns, err), err);
            given = 1;
            break;
        case 's': jb_option(ctx, "--size", jb_parse_size_list(optarg, &o->sizes, &o->nsizes, err), err); break;
        case 'H': jb_option(ctx, "--hops", jb_parse_long_list(optarg, 1, 1 << 20, &o->hops, &o->nhops, err), err); break;
        case 'k': jb_option(ctx, "--k", jb_parse_long_list(optarg, 1, 1 << 20, &o->ks, &o->nks, err), err); break;
        case 'D': jb_option(ctx, "--dim", jb_parse_long(optarg, 0, TOPO_MAXDIMS - 1, &o->dim, err), err); break;
        case 't': o->topology = optarg; break;
        case 'd': o->dims = optarg; break;
        case 'w': o->wrap = optarg; break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    if (!given)
        for (int p = 0; p < NPATTERNS; p++)
            o->patterns[p] = 1;
    if (!o->sizes)
        jb_option(ctx, "--size", jb_parse_size_list("8:1M", &o->sizes, &o->nsizes, err), err);
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > (size_t)1 << 30)
            jb_fail(ctx, "--size: sizes above 1G are not supported");
    if (o->topology && o->dims)
        jb_fail(ctx, "give either --topology or --dims");
    if (o->wrap && !o->dims)
        jb_fail(ctx, "--wrap goes with --dims (a topology file has its own wrap line)");
    if (o->topology && ctx->nodes.virtual_nodes)
        jb_fail(ctx, "--topology places real hosts; it does not combine with --tasks-per-node");
}

/* This node's coordinates from the file; a host the file lacks is named. */
static void coordinates_from_file(jb_ctx *ctx, const char *path, layout *L, int leader, int *mine)
{
    /* read by rank 0 and broadcast: one reader, whatever the task count; 256 MiB
     * holds a line for each of millions of hosts */
    char *text = jb_read_input(ctx, "--topology", path, (size_t)1 << 28), err[JB_ERRLEN];
    topo_file file;
    if (topo_file_parse(text, &file, err) != 0)
        jb_fail(ctx, "--topology %s: %s", path, err);
    free(text);
    L->shape = file.shape;
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(host, &len);
    const int *c = leader ? topo_file_lookup(&file, host) : NULL;
    if (c)
        memcpy(mine, c, sizeof *mine * (size_t)file.shape.ndims);
    int missing = leader && !c ? ctx->rank : ctx->size, first_missing;
    MPI_Allreduce(&missing, &first_missing, 1, MPI_INT, MPI_MIN, ctx->world);
    if (first_missing < ctx->size) {
        MPI_Bcast(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, first_missing, ctx->world);
        jb_fail(ctx, "--topology %s: host '%s' of this job is not in the file", path, host);
    }
    topo_file_free(&file);
}

static void make_layout(jb_ctx *ctx, const ct_options *o, layout *L)
{
    memset(L, 0, sizeof *L);
    char err[JB_ERRLEN];
    int leader = o->dims || ctx->nodes.local_rank == 0;
    int mine[TOPO_MAXDIMS] = {0};
    if (o->dims) { /* every task is a node */
        jb_option(ctx, "--dims", jb_parse_dims(o->dims, TOPO_MAXDIMS, L->shape.dims, &L->shape.ndims, err), err);
        for (int d = 0; d < L->shape.ndims; d++)
            L->shape.wrap[d] = 1;
        if (o->wrap)
            jb_option(ctx, "--wrap", topo_parse_wrap(o->wrap, &L->shape, err), err);
        if (topo_size(&L->shape) != ctx->size)
            jb_fail(ctx, "--dims %s has %ld nodes, but there are %d tasks", o->dims, topo_size(&L->shape), ctx->size);
        topo_coords(&L->shape, ctx->rank, mine);
        snprintf(L->source, sizeof L->source, "--dims %s: a logical torus over the tasks", o->dims);
    } else if (o->topology) {
        coordinates_from_file(ctx, o->topology, L, leader, mine);
        snprintf(L->source, sizeof L->source, "topology file %s", o->topology);
    } else {
        L->shape = (topo_shape){.ndims = 1, .dims = {ctx->nodes.nnodes}, .wrap = {1}};
        mine[0] = ctx->nodes.node;
        snprintf(L->source, sizeof L->source, "a ring of the %d nodes in rank order", ctx->nodes.nnodes);
    }
    int nd = L->shape.ndims;
    /* every rank learns every participant's rank and coordinates: O(tasks) memory,
     * the least that lets each rank find its partner without asking anyone */
    int *all = jb_alloc(ctx, (size_t)ctx->size * (size_t)(nd + 1), sizeof *all, "every task's coordinates"),
        entry[TOPO_MAXDIMS + 1];
    entry[0] = leader;
    memcpy(entry + 1, mine, sizeof *mine * (size_t)nd);
    MPI_Allgather(entry, nd + 1, MPI_INT, all, nd + 1, MPI_INT, ctx->world);
    long size = topo_size(&L->shape);
    L->occupant = jb_alloc(ctx, (size_t)size, sizeof *L->occupant, "the topology's nodes");
    for (long i = 0; i < size; i++)
        L->occupant[i] = -1;
    L->rank_of = jb_alloc(ctx, (size_t)ctx->size, sizeof *L->rank_of, "every task's rank");
    L->coords = jb_alloc(ctx, (size_t)ctx->size * (size_t)nd, sizeof *L->coords, "every task's coordinates");
    L->me = -1;
    for (int r = 0; r < ctx->size; r++) {
        const int *e = all + (size_t)r * (size_t)(nd + 1);
        if (!e[0])
            continue;
        long p = L->participants++;
        if (r == ctx->rank)
            L->me = p;
        L->rank_of[p] = r;
        memcpy(L->coords + p * nd, e + 1, sizeof *e * (size_t)nd);
        L->occupant[topo_index(&L->shape, e + 1)] = p;
    }
    free(all);
    if (L->participants < 2)
        jb_fail(ctx, "needs at least 2 nodes (or --dims over the tasks), not %ld", L->participants);
}

static long max_distance(const ct_options *o, const layout *L, int pattern)
{
    if (pattern == PAT_HOPS)
        return topo_max_hops(&L->shape);
    return L->shape.dims[o->dim] / 2;
}

/* The distances (h, n or k) of a pattern: those asked for, or every one there is. */
static long *distances(jb_ctx *ctx, const ct_options *o, const layout *L, int pattern, int *count)
{
    long most = max_distance(o, L, pattern);
    const long *given = pattern == PAT_LINK ? o->ks : o->hops;
    int ngiven = pattern == PAT_LINK ? o->nks : o->nhops;
    const char *opt = pattern == PAT_LINK ? "--k" : "--hops";
    long *out = jb_alloc(ctx, (size_t)(most > ngiven ? most : ngiven) + 1, sizeof *out, opt);
    *count = 0;
    if (pattern == PAT_RANDOM) {
        out[(*count)++] = 0;
        return out;
    }
    if (given) {
        for (int i = 0; i < ngiven; i++) {
            if (given[i] > most)
                jb_fail(ctx, "%s %ld: pattern %s reaches at most %ld on this topology", opt, given[i],
                        pattern_names[pattern], most);
            out[(*count)++] = given[i];
        }
    } else
        for (long d = 1; d <= most; d++)
            out[(*count)++] = d;
    return out;
}

#define WHERE_LEN 160

/* The pairs of one result (random pairing draws them per call, in run_calls),
 * and where they meet: the partner's coordinates (hops), the shared link
 * (link), into where (WHERE_LEN bytes).  Returns 0 when a default distance has no pair (skipped). */
static int select_pairs(jb_ctx *ctx, const ct_options *o, const layout *L, int pattern, long distance, pairing *pr,
                        char *where)
{
    const topo_shape *t = &L->shape;
    char a[64], b[64];
    int c[TOPO_MAXDIMS];
    if (pattern == PAT_HOPS) {
        long partner = pairs_at_distance(t, L->coords, L->participants, 0, (int)distance, pr);
        if (partner < 0 && o->hops)
            jb_fail(ctx, "--hops %ld: no node of this job is that far from the first", distance);
        if (partner >= 0)
            topo_format(t, L->coords + partner * t->ndims, where, WHERE_LEN);
        return partner >= 0;
    }
    if (pattern == PAT_PAIRS) {
        pairs_along(t, L->coords, L->occupant, L->participants, (int)o->dim, (int)distance, pr);
        if (pr->pairs == 0)
            jb_fail(ctx, "pairs %ld hops apart along dimension %ld: the job has none", distance, o->dim);
    }
    if (pattern == PAT_LINK) {
        topo_link shared;
        long missing = pairs_sharing_link(t, L->coords, L->occupant, L->participants, (int)o->dim, (int)distance,
                                          (int)max_distance(o, L, PAT_LINK), pr, &shared);
        if (missing) {
            topo_coords(t, -missing - 1, c);
            topo_format(t, c, a, sizeof a);
            jb_fail(ctx, "pattern link: the job has no node at (%s)", a);
        }
        topo_coords(t, shared.from, c);
        topo_format(t, c, a, sizeof a);
        c[shared.dim] = (c[shared.dim] + 1) % t->dims[shared.dim];
        topo_format(t, c, b, sizeof b);
        snprintf(where, WHERE_LEN, "%s>%s", a, b);
    }
    return 1;
}

typedef struct {
    pingpong pp;
    pairing pr;
    long *perm;
    jb_calls st;
    double *mean_latency; /* per call: mean over pairs of the round trip / 2 */
    double hops_sum;      /* over pairs and calls (random pairing) */
    long bad_bytes;
} run_state;

static unsigned char payload(long participant, size_t i) { return (unsigned char)(participant * 7 + (long)i); }

/* warm-up and timed calls of one result; random pairing draws again every call */
static void run_calls(jb_ctx *ctx, const layout *L, int pattern, size_t size, run_state *s)
{
    long me = L->me;
    s->pp.size = size;
    if (me >= 0)
        for (size_t i = 0; i < size; i++)
            s->pp.send[0][i] = (char)payload(me, i);
    s->hops_sum = 0;
    jb_calls_begin(ctx, &s->st, "pattern %s, size %zu, %ld pair(s),", pattern_names[pattern], size, s->pr.pairs);
    for (long c = -ctx->opt.warmup; c < ctx->opt.calls; c++) {
        if (pattern == PAT_RANDOM) {
            pairs_random(L->participants, ctx->opt.seed, c + ctx->opt.warmup, s->perm, &s->pr);
            if (ctx->rank == 0 && c >= 0)
                for (long p = 0; p < L->participants; p++)
                    if (s->pr.pinger[p])
                        s->hops_sum += topo_hops(&L->shape, L->coords + p * L->shape.ndims,
                                                 L->coords + s->pr.partner[p] * L->shape.ndims);
        }
        long partner = me >= 0 ? s->pr.partner[me] : -1;
        /* every pair of the call starts together */
        double t0 = jb_call_start(ctx, &s->st, ctx->world, c);
        if (partner < 0)
            continue;
        s->pp.partner = L->rank_of[partner];
        s->pp.pinger = s->pr.pinger[me];
        pingpong_cycle(&s->pp, MODE_SEND);
        double us = (MPI_Wtime() - t0) * 1e6;
        if (c >= 0 && s->pp.pinger)
            jb_calls_record(&s->st, c, us);
        if (ctx->opt.validate)
            for (size_t i = 0; i < size; i++)
                s->bad_bytes += (unsigned char)s->pp.recv[0][i] != payload(partner, i);
    }
    jb_calls_reduce(&s->st, ctx->world);
}

static int by_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The commonest value of sorted x[0..n-1] and how often it occurs (n > 0). */
static long mode_of(const long *x, size_t n, long *count)
{
    long best = x[0], run = 0;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        run = i && x[i] == x[i - 1] ? run + 1 : 1;
        if (run > *count)
            *count = run, best = x[i];
    }
    return best;
}

/* The slowest pair and its path: for each call, the pair whose round trip was the per-call MAX
 * (its pinger held it: the core's MPI_MAXLOC), its routes there and back, and over the calls the
 * commonest such pair and the directed link that most calls' slowest pair crossed.  Rank 0;
 * O(calls x hops), the random pairing drawn again for each call as every rank drew it. */
static void report_slowest_path(jb_ctx *ctx, const layout *L, int pattern, run_state *s)
{
    const topo_shape *t = &L->shape;
    long calls = s->st.calls, P = L->participants, found = 0;
    size_t crossed = 0, most = 2 * (size_t)topo_max_hops(t);
    long *participant = jb_alloc(ctx, (size_t)ctx->size, sizeof *participant, "the tasks");
    long *pairs = jb_alloc(ctx, (size_t)calls + 1, sizeof *pairs, "--calls");
    long *links = jb_alloc(ctx, (size_t)calls * most + 1, sizeof *links, "--calls x hops");
    topo_link *route = jb_alloc(ctx, most + 1, sizeof *route, "hops");
    for (long r = 0; r < ctx->size; r++)
        participant[r] = -1;
    for (long p = 0; p < P; p++)
        participant[L->rank_of[p]] = p;
    for (long c = 0; c < calls; c++) {
        long a = participant[s->st.slowest.at[c].task];
        if (pattern == PAT_RANDOM)
            pairs_random(P, ctx->opt.seed, c + ctx->opt.warmup, s->perm, &s->pr);
        long b = a >= 0 ? s->pr.partner[a] : -1;
        if (b < 0)
            continue;
        pairs[found++] = a * P + b;
        for (int way = 0; way < 2; way++) {
            long from = way ? b : a, to = way ? a : b;
            int n = topo_route(t, L->coords + from * t->ndims, L->coords + to * t->ndims, route);
            for (int h = 0; h < n; h++) /* a directed link as one number: its node, dimension, direction */
                links[crossed++] = (route[h].from * t->ndims + route[h].dim) * 2 + (route[h].dir > 0);
        }
    }
    if (found) {
        char a_at[64], b_at[64], text[200];
        long count, pair;
        qsort(pairs, (size_t)found, sizeof *pairs, by_long);
        pair = mode_of(pairs, (size_t)found, &count);
        topo_format(t, L->coords + (pair / P) * t->ndims, a_at, sizeof a_at);
        topo_format(t, L->coords + (pair % P) * t->ndims, b_at, sizeof b_at);
        snprintf(text, sizeof text, "%ld(%s)-%ld(%s)", pair / P, a_at, pair % P, b_at); /* no blank: a summary-line value */
        jb_result_str(ctx, "slowest_pair", text, 0);
        jb_result_int(ctx, "slowest_pair_calls", count, 0);
        printf("# slowest pair: %s in %ld of %ld calls", text, count, calls);
        if (crossed) {
            qsort(links, crossed, sizeof *links, by_long);
            long link = mode_of(links, crossed, &count), node = link / 2 / t->ndims;
            int c[TOPO_MAXDIMS];
            topo_coords(t, node, c);
            topo_format(t, c, a_at, sizeof a_at);
            snprintf(text, sizeof text, "(%s)%cdim%ld", a_at, link % 2 ? '+' : '-', link / 2 % t->ndims);
            jb_result_str(ctx, "slowest_link", text, 0);
            jb_result_int(ctx, "slowest_link_calls", count, 0);
            printf("; the link its path crossed most: %s, in %ld calls", text, count);
        }
        printf("\n");
    }
    free(participant);
    free(pairs);
    free(links);
    free(route);
}

/* One result line: the per-call statistics of the round trip over the pairs,
 * the latency, and the slow-down against the baseline (0: none). */
static double report(jb_ctx *ctx, const layout *L, int pattern, size_t size, long hops, long k, run_state *s,
                     const char *where, double baseline)
{
    jb_fail_if_any(ctx, s->bad_bytes != 0, "pattern %s, %zu bytes: messages arrived with wrong payload bytes",
                   pattern_names[pattern], size);
    if (ctx->rank != 0)
        return 0;
    const jb_calls *st = &s->st;
    double mean = 0;
    for (long c = 0; c < st->calls; c++) {
        s->mean_latency[c] = st->sum[c] / st->tasks / 2;
        mean += s->mean_latency[c] / st->calls;
    }
    jb_summary lat;
    jb_summarize(s->mean_latency, (size_t)st->calls, &lat);
    jb_result_begin(ctx);
    jb_result_str(ctx, "pattern", pattern_names[pattern], 1);
    jb_result_int(ctx, "size", (long long)size, 1);
    if (pattern == PAT_RANDOM)
        jb_result_num(ctx, "hops", s->hops_sum / st->tasks / st->calls, 1);
    else
        jb_result_num(ctx, "hops", (double)hops, 1);
    jb_result_int(ctx, "pairs", st->tasks, 1);
    jb_result_int(ctx, "idle", L->participants - 2L * st->tasks, 0);
    if (pattern == PAT_LINK)
        jb_result_int(ctx, "k", k, 0);
    if (where)
        jb_result_str(ctx, pattern == PAT_LINK ? "shared_link" : "partner", where, 0);
    jb_result_num(ctx, "latency_us", mean, 1);
    jb_result_num(ctx, "latency_p50_us", lat.p50, 1);
    jb_result_num(ctx, "slowdown", baseline > 0 ? lat.p50 / baseline : NAN, 1);
    report_slowest_path(ctx, L, pattern, s);
    jb_calls_report(ctx, st, 0);
    jb_result_end(ctx);
    return lat.p50;
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    ct_options o;
    layout L;
    jb_init(&ctx, &argc, &argv, "contention", usage, 100, 10);
    parse(&ctx, argc, argv, &o);
    make_layout(&ctx, &o, &L);
    const topo_shape *t = &L.shape;
    if (o.dim >= t->ndims || t->dims[o.dim] < 2)
        jb_fail(&ctx, "--dim %ld: the topology has no such dimension of 2 or more nodes", o.dim);

    size_t max_bytes = jb_largest(o.sizes, o.nsizes);
    jb_memory m = {0};
    jb_memory_add(&m, "--size (a send and a receive buffer)", 2, max_bytes + 1);
    jb_memory_add(&m, "--calls (mean latency per call)", (size_t)ctx.opt.calls, sizeof(double));
    jb_calls_memory(&m, ctx.opt.calls);
    jb_memory_add(&m, "the participants (pairings)", (size_t)L.participants, 4 * sizeof(long));
    jb_memory_check(&ctx, &m);
    run_state s = {.pp = {.comm = ctx.world, .n = 1}};
    char *send = jb_alloc(&ctx, max_bytes + 1, 1, "--size"), *recv = jb_alloc(&ctx, max_bytes + 1, 1, "--size");
    MPI_Request req;
    s.pp.send = &send;
    s.pp.recv = &recv;
    s.pp.req = &req;
    s.perm = jb_alloc(&ctx, (size_t)L.participants, sizeof *s.perm, "the participants");
    jb_fail_if_any(&ctx, pairing_init(&s.pr, L.participants) != 0, "out of memory for %ld participants' pairings",
                   L.participants);
    jb_calls_init(&ctx, &s.st, ctx.opt.calls);
    s.mean_latency = jb_alloc(&ctx, (size_t)ctx.opt.calls, sizeof *s.mean_latency, "--calls");

    jb_json *cfg = &ctx.config;
    char shape[128] = "";
    for (int d = 0; d < t->ndims; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%d%s", d ? "x" : "", t->dims[d],
                 t->wrap[d] ? "" : "(mesh)");
    jb_json_object(cfg, "topology");
    jb_json_str(cfg, "source", L.source);
    jb_json_str(cfg, "dims", shape);
    jb_json_int(cfg, "participants", L.participants);
    jb_json_int(cfg, "dim", o.dim);
    jb_json_str(cfg, "routing", "dimension-ordered, lowest dimension first, the shorter way round (a tie goes +)");
    jb_json_end(cfg);
    jb_json_object(cfg, "patterns");
    for (int p = 0; p < NPATTERNS; p++)
        jb_json_str(cfg, pattern_names[p], pattern_descr[p]);
    jb_json_end(cfg);
    jb_json_str(cfg, "call", "a barrier, then one ping-pong of every active pair at once, timed by the side that starts");
    jb_json_str(cfg, "latency_us", "mean over calls of the mean over pairs of the round trip / 2");
    jb_json_str(cfg, "latency_p50_us", "median over calls of the mean over pairs of the round trip / 2");
    jb_json_str(cfg, "slowest_pair slowest_link", "over the calls, the commonest pair whose round trip was the "
                                                  "per-call MAX ('a(coordinates)-b(coordinates)'), and the directed "
                                                  "link that most calls' slowest pair crossed there or back ('(its "
                                                  "node's coordinates)+dimD', the + or - way); _calls: in how many "
                                                  "calls");
    jb_json_str(cfg, "slowdown", "pairs: latency_p50_us over that of hops at the same size and distance in this run; "
                                 "link: over that of k = 1 (null: no baseline in this run)");
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-contention: %ld participants (one task per node) on %s, %s; %ld calls after %ld warm-up; "
               "times in us per round trip (MAX/AVG over pairs)\n",
               L.participants, shape, L.source, ctx.opt.calls, ctx.opt.warmup);

    /* latency_p50 of hops per (size, h), the baseline of pairs; of k = 1 per size, of link */
    int max_hops = topo_max_hops(t);
    double *hops_p50 = jb_alloc(&ctx, (size_t)o.nsizes * (size_t)(max_hops + 1), sizeof *hops_p50, "--size x hops");
    double *link_p50 = jb_alloc(&ctx, (size_t)o.nsizes, sizeof *link_p50, "--size");
    for (int pattern = 0; pattern < NPATTERNS; pattern++) {
        if (!o.patterns[pattern])
            continue;
        int nd;
        long *dist = distances(&ctx, &o, &L, pattern, &nd);
        for (int i = 0; i < o.nsizes; i++)
            for (int j = 0; j < nd; j++) {
                char where[WHERE_LEN] = "";
                if (!select_pairs(&ctx, &o, &L, pattern, dist[j], &s.pr, where))
                    continue;
                double baseline = pattern == PAT_PAIRS  ? hops_p50[(size_t)i * (size_t)(max_hops + 1) + (size_t)dist[j]]
                                  : pattern == PAT_LINK ? link_p50[i]
                                                        : 0;
                run_calls(&ctx, &L, pattern, o.sizes[i], &s);
                long hops = pattern == PAT_LINK ? max_distance(&o, &L, PAT_LINK) : dist[j];
                double p50 = report(&ctx, &L, pattern, o.sizes[i], hops, dist[j], &s, where[0] ? where : NULL, baseline);
                if (pattern == PAT_HOPS)
                    hops_p50[(size_t)i * (size_t)(max_hops + 1) + (size_t)dist[j]] = p50;
                if (pattern == PAT_LINK && dist[j] == 1)
                    link_p50[i] = p50;
            }
        free(dist);
    }
    free(hops_p50);
    free(link_p50);
    jb_calls_free(&s.st);
    pairing_free(&s.pr);
    free(s.perm);
    free(s.mean_latency);
    free(send);
    free(recv);
    return jb_finish(&ctx);
}
