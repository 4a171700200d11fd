/* jb-eager: the MPI's effective eager limit, measured, for a pair of tasks on
 * one node and (when the job spans nodes) a pair on two nodes.  This is what
 * shows that an eager-limit variable really moved the protocol switch. */
#include <stdlib.h>
#include <string.h>

#include "jb_core.h"
#include "probe.h"

static const char usage[] =
    "Probes the largest message MPI_Send sends eagerly (without waiting for the receiver).\n"
    "  --delay US            the receiver's wait before it posts the receive [50000]\n"
    "  --repeats N           probes per size; the fastest decides [3]\n"
    "  --max-size S          the largest size probed [4M]\n";

typedef struct {
    jb_json log; /* the sizes probed and the sender's fastest time */
} probe_log;

static void log_probe(void *ctx, size_t size, double s)
{
    probe_log *l = ctx;
    jb_json_array(&l->log, NULL);
    jb_json_int(&l->log, NULL, (long long)size);
    jb_json_num(&l->log, NULL, s * 1e6);
    jb_json_end(&l->log);
}

/* The lowest rank other than 0 on rank 0's node (same_node) or on another node. */
static int find_partner(jb_ctx *ctx, int same_node)
{
    int node0 = ctx->nodes.node;
    MPI_Bcast(&node0, 1, MPI_INT, 0, ctx->world);
    int fits = ctx->rank != 0 && ((ctx->nodes.node == node0) == same_node);
    int mine = fits ? ctx->rank : ctx->size, partner;
    MPI_Allreduce(&mine, &partner, 1, MPI_INT, MPI_MIN, ctx->world);
    return partner < ctx->size ? partner : -1;
}

static void probe_pair(jb_ctx *ctx, const char *where, int partner, double delay_s, long repeats, size_t max_size)
{
    int in_pair = ctx->rank == 0 || ctx->rank == partner;
    eager_pair p = {.delay_s = delay_s, .repeats = (int)repeats, .max_size = max_size};
    MPI_Comm_split(ctx->world, in_pair ? 0 : MPI_UNDEFINED, ctx->rank, &p.comm);
    if (!in_pair) {
        MPI_Barrier(ctx->world);
        return;
    }
    MPI_Comm_rank(p.comm, &p.me);
    p.buf = jb_alloc(ctx, max_size + 1, 1, "--max-size");
    jb_watch("the %s pair (ranks 0 and %d),", where, partner);
    probe_log l;
    jb_json_init(&l.log);
    jb_json_array(&l.log, NULL);
    size_t limit = eager_limit(&p, log_probe, &l);
    jb_json_end(&l.log);
    double at_limit = limit ? eager_send_time(&p, limit) : 0;
    double above = limit < max_size ? eager_send_time(&p, limit + 8) : 0;
    free(p.buf);
    MPI_Comm_free(&p.comm);
    MPI_Barrier(ctx->world);

    jb_result_begin(ctx);
    jb_result_str(ctx, "pair", where, 1);
    jb_result_int(ctx, "partner", partner, 1);
    jb_result_int(ctx, "eager_limit_bytes", (long long)limit, 1);
    jb_result_int(ctx, "eager_up_to_max", limit >= max_size, 0);
    jb_result_num(ctx, "eager_send_us", at_limit * 1e6, 1);
    jb_result_num(ctx, "rendezvous_send_us", above * 1e6, 1);
    jb_result_num(ctx, "delay_us", delay_s * 1e6, 0);
    if (ctx->rank == 0)
        jb_json_raw(jb_result_json(ctx), "probes_size_us", l.log.buf);
    jb_result_end(ctx);
    jb_json_free(&l.log);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"delay", required_argument, NULL, 'd'}, {"repeats", required_argument, NULL, 'r'},
        {"max-size", required_argument, NULL, 'm'}, JB_COMMON_LONGOPTS};
    jb_ctx ctx;
    long delay_us = 50000, repeats = 3;
    size_t max_size = 4 << 20;
    int c;
    char err[JB_ERRLEN];
    jb_init(&ctx, &argc, &argv, "eager", usage, 1, 0);
    while ((c = jb_getopt(&ctx, longopts)) != -1) {
        switch (c) {
        case 'd': jb_option(&ctx, "--delay", jb_parse_long(optarg, 100, 10000000, &delay_us, err), err); break;
        case 'r': jb_option(&ctx, "--repeats", jb_parse_long(optarg, 1, 63, &repeats, err), err); break;
        case 'm': jb_option(&ctx, "--max-size", jb_parse_size(optarg, &max_size, err), err); break;
        default: jb_common_option(&ctx, c, optarg);
        }
    }
    jb_options_done(&ctx, optind);
    if (max_size < 8 || max_size > (size_t)1 << 30)
        jb_fail(&ctx, "--max-size: give 8 bytes to 1G");
    if (ctx.size < 2)
        jb_fail(&ctx, "needs at least 2 tasks (a sender and a receiver)");

    jb_json_int(&ctx.config, "delay_us", delay_us);
    jb_json_int(&ctx.config, "repeats", repeats);
    jb_json_int(&ctx.config, "max_size", (long long)max_size);
    jb_json_str(&ctx.config, "method",
                "receiver waits delay_us (progressing MPI, not matching) before MPI_Recv; sender times MPI_Send; "
                "eager if the fastest of repeats < delay/2; powers of two, then bisection to 8 bytes");
    if (ctx.rank == 0)
        printf("# jb-eager: MPI_Send to a receiver that waits %ld us; eager if it returns in under half that\n",
               delay_us);

    int on_node = find_partner(&ctx, 1), off_node = find_partner(&ctx, 0);
    if (on_node >= 0)
        probe_pair(&ctx, "on-node", on_node, delay_us * 1e-6, repeats, max_size);
    if (off_node >= 0)
        probe_pair(&ctx, "off-node", off_node, delay_us * 1e-6, repeats, max_size);
    return jb_finish(&ctx);
}
