/* jb-congestion: how much congestion costs, as GPCNeT (Chunduri et al., SC19) defines it.
 *
 * The nodes split in two: about a fifth carry the canaries, the rest the congestors.  The
 * canaries (random-ring latency and bandwidth, a small allreduce) are timed alone, then while the
 * congestors (all-to-all, incast, broadcast, a group each) load the network without pause; the
 * congestion impact factor of a canary is its congested time over its isolated time, for the mean
 * and for the 99th percentile.  The two phases alternate over --rounds, each round the other way
 * first, so that drift on the machine falls on both alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jb_core.h"
#include "kernels.h"

static const char usage[] =
    "GPCNeT's congestion impact: canaries timed alone and beside congestors on the other nodes.\n"
    "  --canary LIST         latency, bandwidth, allreduce, or all [all]\n"
    "  --congestors LIST     alltoall, incast, bcast, all, or none (no congestor: the factors'\n"
    "                        noise, the congested phase as idle as the isolated one) [all]\n"
    "  --canary-share F      the share of the nodes that carry the canaries (at least 2) [0.2]\n"
    "  --latency-size B      bytes of the latency canary's messages [8]\n"
    "  --bandwidth-size B    bytes of the bandwidth canary's messages [128K]\n"
    "  --congestor-size B    bytes of each congestor message [4K]\n"
    "  (--rounds R: the phases alternate over R rounds, each with 1/R of the calls [10])\n"
    "A congestor group of one task congests no link: give at least two congestor nodes a kind.\n";

typedef struct {
    int canaries[NCANARIES], congestors[NCONGESTORS], ncongestor_kinds;
    double share;
    size_t latency_size, bandwidth_size, congestor_size;
} cg_options;

enum { ISOLATED, CONGESTED, NPHASES };
static const char *const phase_names[] = {"isolated", "congested"};

static void parse(jb_ctx *ctx, int argc, char **argv, cg_options *o)
{
    static const struct option longopts[] = {
        {"canary", required_argument, NULL, 'c'},          {"congestors", required_argument, NULL, 'g'},
        {"canary-share", required_argument, NULL, 'f'},    {"latency-size", required_argument, NULL, 'l'},
        {"bandwidth-size", required_argument, NULL, 'b'},  {"congestor-size", required_argument, NULL, 's'},
        JB_COMMON_LONGOPTS};
    static const char *const congestor_or_none[] = {"alltoall", "incast", "bcast", "none", NULL};
    int c, given[NCONGESTORS + 1];
    char err[JB_ERRLEN];
    *o = (cg_options){.share = 0.2, .latency_size = 8, .bandwidth_size = 128 << 10, .congestor_size = 4 << 10};
    for (int k = 0; k < NCANARIES; k++)
        o->canaries[k] = 1;
    for (int k = 0; k < NCONGESTORS; k++)
        o->congestors[k] = 1;
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'c': jb_option(ctx, "--canary", jb_parse_name_list(optarg, canary_names, NULL, o->canaries, err), err); break;
        case 'g':
            jb_option(ctx, "--congestors", jb_parse_name_list(optarg, congestor_or_none, NULL, given, err), err);
            if (given[NCONGESTORS] && (given[0] || given[1] || given[2]))
                jb_fail(ctx, "--congestors: none goes alone");
            memcpy(o->congestors, given, sizeof o->congestors);
            break;
        case 'f': jb_option(ctx, "--canary-share", jb_parse_double(optarg, 0.01, 1, &o->share, err), err); break;
        case 'l': jb_option(ctx, "--latency-size", jb_parse_size(optarg, &o->latency_size, err), err); break;
        case 'b': jb_option(ctx, "--bandwidth-size", jb_parse_size(optarg, &o->bandwidth_size, err), err); break;
        case 's': jb_option(ctx, "--congestor-size", jb_parse_size(optarg, &o->congestor_size, err), err); break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    for (int k = 0; k < NCONGESTORS; k++)
        o->ncongestor_kinds += o->congestors[k];
    if (o->latency_size > (size_t)1 << 30 || o->bandwidth_size > (size_t)1 << 30 || o->congestor_size > (size_t)1 << 30)
        jb_fail(ctx, "message sizes above 1G are not supported");
    if (ctx->opt.sync != JB_SYNC_BARRIER)
        jb_fail(ctx, "--sync window: the canaries start each call after a barrier of theirs, while the "
                     "congestors run");
}

/* Node i carries canaries when (i C) mod N < C: C nodes spread evenly over the N, node 0 among
 * them (so world rank 0 is the canaries' rank 0). */
static int canary_node(long node, long nodes, long canary_nodes) { return (node * canary_nodes) % nodes < canary_nodes; }

/* The congestors' endless loop for one congested phase: a turn to warm up, release the canaries
 * (start), then turns until the canaries say they are done; the members of a group agree after
 * each turn, since their collectives need them all. */
static long congest(const cg_options *o, int kind, MPI_Comm world, MPI_Comm group, char *send, char *recv,
                    MPI_Request *req)
{
    MPI_Request start, done;
    long turns = 0;
    int finished = 0, all_finished = 0;
    congestor_turn(kind, group, send, recv, o->congestor_size, req);
    MPI_Ibarrier(world, &start);
    MPI_Wait(&start, MPI_STATUS_IGNORE);
    MPI_Ibarrier(world, &done);
    while (!all_finished) {
        congestor_turn(kind, group, send, recv, o->congestor_size, req);
        turns++;
        if (!finished)
            MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
        MPI_Allreduce(&finished, &all_finished, 1, MPI_INT, MPI_MIN, group);
    }
    if (!finished)
        MPI_Wait(&done, MPI_STATUS_IGNORE);
    return turns;
}

/* A fresh random ring of the canaries for call c of canary k, the same on every canary. */
static void draw_ring(unsigned long long seed, int k, long c, long *perm, long n)
{
    jb_rng rng;
    jb_rng_seed(&rng, seed, 0xc0ffee00ULL + (uint64_t)(c * NCANARIES + k));
    jb_rng_shuffle(&rng, perm, n);
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    cg_options o;
    jb_init(&ctx, &argc, &argv, "congestion", usage, 200, 10);
    parse(&ctx, argc, argv, &o);
    long nodes = ctx.nodes.nnodes, calls = ctx.opt.calls, rounds = ctx.opt.rounds;
    long canary_nodes = (long)llround(o.share * (double)nodes);
    canary_nodes = canary_nodes < 2 ? 2 : canary_nodes;
    if (o.ncongestor_kinds && canary_nodes > nodes - 1)
        canary_nodes = nodes - 1;
    if (canary_nodes < 2 || canary_nodes > nodes)
        jb_fail(&ctx, "%ld node(s): the canaries need 2 nodes%s (--tasks-per-node K makes virtual nodes of K ranks)",
                nodes, o.ncongestor_kinds ? " and the congestors 1 more" : "");
    int canary = canary_node(ctx.nodes.node, nodes, canary_nodes);
    MPI_Comm canaries, congestors = MPI_COMM_NULL, group = MPI_COMM_NULL;
    MPI_Comm_split(ctx.world, canary ? 0 : 1, ctx.rank, &canaries);
    int me, ncanary;
    MPI_Comm_rank(canaries, &me);
    MPI_Comm_size(canaries, &ncanary);
    /* a congestor node's kind: the enabled kinds dealt over the congestor nodes in turn */
    int kinds[NCONGESTORS], nk = 0, kind = -1;
    for (int k = 0; k < NCONGESTORS; k++)
        if (o.congestors[k])
            kinds[nk++] = k;
    if (!canary) {
        long index = 0; /* this node among the congestor nodes */
        for (long i = 0; i < ctx.nodes.node; i++)
            index += !canary_node(i, nodes, canary_nodes);
        kind = nk ? kinds[index % nk] : -1;
        congestors = canaries; /* the split's other half */
        MPI_Comm_split(congestors, kind >= 0 ? kind : MPI_UNDEFINED, ctx.rank, &group);
    }
    int members = 1;
    if (group != MPI_COMM_NULL)
        MPI_Comm_size(group, &members);

    jb_memory m = {0};
    jb_calls_memory_variants(&m, calls, NCANARIES * NPHASES);
    jb_memory_add(&m, "--bandwidth-size (a canary's 2 send and 2 receive buffers)", 4,
                  (o.bandwidth_size > o.latency_size ? o.bandwidth_size : o.latency_size) + 1);
    jb_memory_add(&m, "--congestor-size x a congestor group's tasks (send and receive)", 2 * (size_t)ctx.size,
                  o.congestor_size + 1);
    jb_memory_check(&ctx, &m);

    jb_json *cfg = &ctx.config;
    jb_json_int(cfg, "nodes", nodes);
    jb_json_int(cfg, "canary_nodes", canary_nodes);
    jb_json_int(cfg, "latency_size", (long long)o.latency_size);
    jb_json_int(cfg, "bandwidth_size", (long long)o.bandwidth_size);
    jb_json_int(cfg, "congestor_size", (long long)o.congestor_size);
    jb_json_int(cfg, "rounds", rounds);
    jb_json_str(cfg, "placement", "node i carries canaries when (i x canary_nodes) mod nodes < canary_nodes: spread "
                                  "evenly; the congestor nodes take the congestors in turn");
    jb_json_str(cfg, "phases", "isolated (the congestors wait in a barrier) and congested (each congestor group "
                               "loops its congestor from before the canaries' first call to after their last), "
                               "alternating over rounds, each round the other one first");
    jb_json_str(cfg, "canaries", "latency and bandwidth: a random ring of the canary tasks drawn afresh each call "
                                 "(--seed), a message each way with both neighbours; allreduce: MPI_Allreduce of 8 "
                                 "bytes over the canaries; each call after a barrier of the canaries");
    jb_json_str(cfg, "impact", "impact_avg: congested avg_us / isolated avg_us; impact_p99: the same of p99_us (the "
                               "99th percentile over calls of the per-call MAX over canary tasks); GPCNeT's "
                               "factors are of the mean and the 99th percentile of every rank's samples");
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-congestion: %ld nodes, canaries on %ld (%d tasks), congestors %s on %ld; %ld calls a canary and "
               "phase in %ld rounds\n", nodes, canary_nodes, ncanary, nk ? "" : "none", nodes - canary_nodes, calls,
               rounds);

    size_t largest = o.bandwidth_size > o.latency_size ? o.bandwidth_size : o.latency_size;
    char *send = jb_alloc(&ctx, 2 * largest + 2, 1, "--bandwidth-size"),
         *recv = jb_alloc(&ctx, 2 * largest + 2, 1, "--bandwidth-size");
    char *cg_send = NULL, *cg_recv = NULL;
    MPI_Request *cg_req = NULL;
    if (!canary && kind >= 0) {
        cg_send = jb_alloc(&ctx, (size_t)members, o.congestor_size + 1, "--congestor-size x group");
        cg_recv = jb_alloc(&ctx, (size_t)members, o.congestor_size + 1, "--congestor-size x group");
        cg_req = jb_alloc(&ctx, (size_t)members, sizeof *cg_req, "the group");
    }
    jb_calls st[NCANARIES][NPHASES];
    long *perm = jb_alloc(&ctx, (size_t)ncanary, sizeof *perm, "the canaries");
    for (int k = 0; canary && k < NCANARIES; k++)
        for (int p = 0; p < NPHASES; p++) {
            jb_calls_init(&ctx, &st[k][p], calls);
            jb_calls_clear(&st[k][p]);
        }
    long turns = 0;
    double congested_s = 0;
    for (long r = 0; r < rounds; r++) {
        long first = r * calls / rounds, end = (r + 1) * calls / rounds;
        for (int turn = 0; turn < NPHASES; turn++) {
            int phase = (int)((turn + r) % NPHASES); /* round 0 isolated first, round 1 congested first, ... */
            jb_watch("round %ld of %ld, %s,", r + 1, rounds, phase_names[phase]);
            jb_sync_clocks(&ctx.clock, ctx.world);
            double t0 = MPI_Wtime();
            if (!canary) {
                if (phase == CONGESTED && kind >= 0)
                    turns += congest(&o, kind, ctx.world, group, cg_send, cg_recv, cg_req);
                else if (phase == CONGESTED) { /* no congestor: the canaries' protocol, idle */
                    MPI_Request start, done;
                    MPI_Ibarrier(ctx.world, &start);
                    MPI_Wait(&start, MPI_STATUS_IGNORE);
                    MPI_Ibarrier(ctx.world, &done);
                    MPI_Wait(&done, MPI_STATUS_IGNORE);
                }
                if (phase == CONGESTED)
                    congested_s += MPI_Wtime() - t0;
                else
                    MPI_Barrier(ctx.world);
                continue;
            }
            MPI_Request start, done;
            if (phase == CONGESTED) {
                MPI_Ibarrier(ctx.world, &start);
                MPI_Wait(&start, MPI_STATUS_IGNORE);
            }
            for (int k = 0; k < NCANARIES; k++) {
                if (!o.canaries[k])
                    continue;
                jb_calls *s = &st[k][phase];
                if (ctx.clock.error_bound > s->error_bound)
                    s->error_bound = ctx.clock.error_bound;
                size_t size = k == CANARY_BANDWIDTH ? o.bandwidth_size : o.latency_size;
                for (long c = first - (r == 0 ? ctx.opt.warmup : 0); c < end; c++) {
                    int left = 0, right = 0;
                    if (k != CANARY_ALLREDUCE) {
                        draw_ring(ctx.opt.seed, k, c + ctx.opt.warmup, perm, ncanary);
                        ring_neighbours(perm, ncanary, me, &left, &right);
                    }
                    double t = jb_call_start(&ctx, s, canaries, c);
                    if (k == CANARY_ALLREDUCE) {
                        double x = me, sum;
                        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, canaries);
                    } else {
                        ring_exchange(canaries, left, right, send, recv, size);
                    }
                    double us = (MPI_Wtime() - t) * 1e6;
                    if (c >= 0)
                        jb_calls_record(s, c, us);
                }
            }
            if (phase == CONGESTED) {
                MPI_Ibarrier(ctx.world, &done);
                MPI_Wait(&done, MPI_STATUS_IGNORE);
            } else {
                MPI_Barrier(ctx.world);
            }
        }
    }

    /* the congestors' load: turns and bytes a task sent a second, per kind (rank 0) */
    double load[2 * NCONGESTORS] = {0}, all_load[2 * NCONGESTORS];
    if (!canary && kind >= 0) {
        load[2 * kind] = (double)turns;
        load[2 * kind + 1] = congested_s;
    }
    MPI_Reduce(load, all_load, 2 * NCONGESTORS, MPI_DOUBLE, MPI_SUM, 0, ctx.world);
    long tasks_of[NCONGESTORS] = {0}, all_tasks_of[NCONGESTORS];
    if (!canary && kind >= 0)
        tasks_of[kind] = 1;
    MPI_Reduce(tasks_of, all_tasks_of, NCONGESTORS, MPI_LONG, MPI_SUM, 0, ctx.world);
    if (ctx.rank == 0) {
        jb_json_array(cfg, "congestors");
        for (int k = 0; k < NCONGESTORS; k++) {
            if (!o.congestors[k] || !all_tasks_of[k])
                continue;
            jb_json_object(cfg, NULL);
            jb_json_str(cfg, "congestor", congestor_names[k]);
            jb_json_int(cfg, "tasks", all_tasks_of[k]);
            jb_json_num(cfg, "turns_per_s", all_load[2 * k + 1] > 0 ? all_load[2 * k] / all_load[2 * k + 1] : 0);
            jb_json_end(cfg);
        }
        jb_json_end(cfg);
    }

    if (canary) {
        for (int k = 0; k < NCANARIES; k++) {
            if (!o.canaries[k])
                continue;
            double avg[NPHASES], p99[NPHASES];
            size_t size = k == CANARY_BANDWIDTH ? o.bandwidth_size : o.latency_size;
            for (int p = 0; p < NPHASES; p++) {
                jb_calls *s = &st[k][p];
                jb_calls_reduce(s, canaries);
                if (ctx.rank != 0)
                    continue;
                avg[p] = s->tasks ? 0 : NAN;
                for (long c = 0; c < calls; c++)
                    avg[p] += s->sum[c] / s->tasks / (double)calls;
                jb_summary max;
                jb_summarize(s->max, (size_t)calls, &max);
                p99[p] = max.p99;
                jb_result_begin(&ctx);
                jb_result_str(&ctx, "canary", canary_names[k], 1);
                jb_result_str(&ctx, "phase", phase_names[p], 1);
                jb_result_int(&ctx, "size", k == CANARY_ALLREDUCE ? 8 : (long long)size, 1);
                jb_result_int(&ctx, "tasks", s->tasks, 0);
                jb_result_int(&ctx, "calls", calls, 0);
                if (k == CANARY_BANDWIDTH) /* GPCNeT's per rank: both neighbours' messages out, MB = 1e6 B */
                    jb_result_num(&ctx, "bandwidth_mb_s", avg[p] > 0 ? 2.0 * (double)size / avg[p] : 0, 1);
                if (p == CONGESTED) {
                    jb_result_num(&ctx, "impact_avg", avg[CONGESTED] / avg[ISOLATED], 1);
                    jb_result_num(&ctx, "impact_p99", p99[CONGESTED] / p99[ISOLATED], 1);
                }
                jb_calls_report(&ctx, s, 0);
                jb_result_end(&ctx);
            }
            for (int p = 0; p < NPHASES; p++)
                jb_calls_free(&st[k][p]);
        }
    }
    free(send);
    free(recv);
    free(cg_send);
    free(cg_recv);
    free(cg_req);
    free(perm);
    if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
    MPI_Comm_free(&canaries);
    return jb_finish(&ctx);
}
