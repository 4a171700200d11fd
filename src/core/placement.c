/* Where each rank runs: its node and the CPUs it may run on, as the launcher
 * bound it.  Recorded for every rank (O(ranks) on rank 0, once per run), and
 * checked per node: ranks bound to CPUs that another rank of the node may use
 * as well share a core, which a benchmark's placement never intends. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jb_placement.h"
#include "jb_json.h"

#define CPU_LIST_LEN 64
#define CPU_SETS_LOGGED 64 /* ranks whose CPUs the '# cpu_sets:' line names */

/* "0-3,8": the CPUs of set, in ranges; "?" when the system cannot say. */
static void cpu_list(const cpu_set_t *set, int known, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int cpu = 0; known && cpu < CPU_SETSIZE && at + 1 < len; cpu++) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        int n = last > cpu ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", cpu, last)
                           : snprintf(buf + at, len - at, "%s%d", at ? "," : "", cpu);
        at += n > 0 ? (size_t)n : 0;
        cpu = last;
    }
    if (!buf[0])
        snprintf(buf, len, "?");
}

/* On one node: are the ranks bound (each to fewer CPUs than the node has), and
 * do two of them share a CPU?  Returns the first such pair, if bound. */
static void check_node(const cpu_set_t *sets, int n, long online, int *bound, int *shared_a, int *shared_b)
{
    *bound = 1;
    *shared_a = *shared_b = -1;
    for (int i = 0; i < n; i++)
        if (CPU_COUNT(&sets[i]) >= online)
            *bound = 0;
    for (int i = 0; *bound && i < n && *shared_a < 0; i++)
        for (int j = i + 1; j < n; j++) {
            cpu_set_t both;
            CPU_AND(&both, &sets[i], &sets[j]);
            if (CPU_COUNT(&both)) {
                *shared_a = i;
                *shared_b = j;
                break;
            }
        }
}

void jb_placement(jb_ctx *ctx)
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    int known = sched_getaffinity(0, sizeof mine, &mine) == 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    /* per node: who is bound, who shares; summed over nodes by rank 0 */
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    int local_rank, local_size;
    MPI_Comm_rank(node_comm, &local_rank);
    MPI_Comm_size(node_comm, &local_size);
    cpu_set_t *sets = local_rank == 0 ? jb_alloc(ctx, (size_t)local_size, sizeof *sets, "the node's CPU sets") : NULL;
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, sets, (int)sizeof mine, MPI_BYTE, 0, node_comm);
    int counts[3] = {0, 0, 0}, all[3]; /* nodes whose ranks are all bound; where bound ranks share; oversubscribed */
    int shared[2] = {-1, -1}, first_shared;
    struct { int excess, rank; } crowded = {-(1 << 30), ctx->rank}, most_crowded;
    int crowd[3] = {0, 0, 0}; /* the most crowded node's index, ranks and CPUs */
    if (local_rank == 0) {
        int bound, a, b;
        /* the CPUs the job was given here: every rank's set, united */
        cpu_set_t given;
        CPU_ZERO(&given);
        for (int i = 0; i < local_size; i++)
            CPU_OR(&given, &given, &sets[i]);
        ctx->node_job_cpus = known ? CPU_COUNT(&given) : 0;
        counts[2] = known && local_size > ctx->node_job_cpus;
        crowded.excess = known ? local_size - ctx->node_job_cpus : crowded.excess;
        check_node(sets, local_size, online, &bound, &a, &b);
        counts[0] = bound;
        counts[1] = a >= 0;
        free(sets);
        if (a >= 0) { /* their world ranks, for the warning */
            shared[0] = a;
            shared[1] = b;
        }
    }
    MPI_Bcast(shared, 2, MPI_INT, 0, node_comm);
    if (shared[0] >= 0) { /* node-local indices to world ranks */
        int r[2];
        MPI_Group node_group, world_group;
        MPI_Comm_group(node_comm, &node_group);
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_translate_ranks(node_group, 2, shared, world_group, r);
        MPI_Group_free(&node_group);
        MPI_Group_free(&world_group);
        shared[0] = r[0];
        shared[1] = r[1];
    }
    MPI_Comm_free(&node_comm);
    MPI_Reduce(counts, all, 3, MPI_INT, MPI_SUM, 0, ctx->world);
    /* more ranks on a node than CPUs the job was given there: they time-slice */
    MPI_Allreduce(&crowded, &most_crowded, 1, MPI_2INT, MPI_MAXLOC, ctx->world);
    if (ctx->rank == most_crowded.rank) {
        crowd[0] = ctx->nodes.listed;
        crowd[1] = local_size;
        crowd[2] = ctx->node_job_cpus;
    }
    MPI_Bcast(crowd, 3, MPI_INT, most_crowded.rank, ctx->world);
    /* the first pair that shares, lowest ranks first */
    int candidate = shared[0] >= 0 ? shared[0] : ctx->size;
    MPI_Allreduce(&candidate, &first_shared, 1, MPI_INT, MPI_MIN, ctx->world);
    int partner = candidate == first_shared ? shared[1] : ctx->size, first_partner;
    MPI_Allreduce(&partner, &first_partner, 1, MPI_INT, MPI_MIN, ctx->world);

    /* every rank's node and CPUs, on rank 0, in MPI_COMM_WORLD's order (the slots, whatever
     * --rank-order made them play) */
    typedef struct {
        int world_rank, node;
        char cpus[CPU_LIST_LEN];
    } slot;
    slot entry = {ctx->world_rank, ctx->nodes.listed, ""}, *gathered = NULL, *entries = NULL;
    cpu_list(&mine, known, entry.cpus, sizeof entry.cpus);
    if (ctx->rank == 0) {
        gathered = jb_alloc(ctx, (size_t)ctx->size, sizeof entry, "every rank's CPUs");
        entries = jb_alloc(ctx, (size_t)ctx->size, sizeof entry, "every rank's CPUs");
    }
    MPI_Gather(&entry, (int)sizeof entry, MPI_BYTE, gathered, (int)sizeof entry, MPI_BYTE, 0, ctx->world);
    if (ctx->rank != 0)
        return;
    for (int r = 0; r < ctx->size; r++)
        entries[gathered[r].world_rank] = gathered[r];
    free(gathered);

    int nodes = ctx->nodes.real_nnodes;
    const char *binding = all[0] == nodes ? (all[1] ? "shared" : "cores") : all[0] ? "partial" : "none";
    snprintf(ctx->binding, sizeof ctx->binding, "%s", binding);
    jb_json *j = &ctx->placement;
    jb_json_init(j);
    jb_json_object(j, NULL);
    jb_json_str(j, "binding", binding);
    jb_json_str(j, "binding_means", "cores: every rank bound to fewer CPUs than its node has, none shared; "
                                    "shared: bound, but two ranks of a node share a CPU; partial: some nodes "
                                    "bound; none: every rank may run on all of its node's CPUs");
    jb_json_int(j, "nodes_bound", all[0]);
    jb_json_int(j, "nodes_sharing_cpus", all[1]);
    jb_json_int(j, "nodes_oversubscribed", all[2]);
    jb_json_str(j, "oversubscribed_means", "a node runs more of the job's ranks than CPUs its ranks may use "
                                           "(the union of their affinity sets): they time-slice");
    if (all[2]) {
        jb_json_object(j, "oversubscribed");
        jb_json_int(j, "node", crowd[0]);
        jb_json_int(j, "ranks", crowd[1]);
        jb_json_int(j, "cpus", crowd[2]);
        jb_json_end(j);
    }
    jb_json_array(j, "rank_node_cpus"); /* per rank: node index (of node_list) and CPU list */
    for (int r = 0; r < ctx->size; r++) {
        jb_json_array(j, NULL);
        jb_json_int(j, NULL, entries[r].node);
        jb_json_str(j, NULL, entries[r].cpus);
        jb_json_end(j);
    }
    jb_json_end(j);
    jb_json_end(j);
    printf("# binding: %s (rank 0 on CPUs %s; %d of %d node(s) bound)\n", binding, entries[0].cpus, all[0], nodes);
    /* the first ranks' node and CPUs, for the perflog (ReFrame logs this line); the JSON holds every rank's */
    printf("# cpu_sets:");
    for (int r = 0; r < ctx->size && r < CPU_SETS_LOGGED; r++)
        printf(" n%d:%s", entries[r].node, entries[r].cpus);
    if (ctx->size > CPU_SETS_LOGGED)
        printf(" ... (%d ranks; the JSON's metadata.placement holds all)", ctx->size);
    printf("\n");
    if (all[2])
        printf("# warning: oversubscribed: node n%d runs %d ranks on the %d CPU(s) the job was given there "
               "(%d of %d node(s) oversubscribed): the ranks time-slice, the times measure the scheduler\n",
               crowd[0], crowd[1], crowd[2], all[2], nodes);
    if (first_shared < ctx->size)
        printf("# warning: ranks %d and %d are bound to a common CPU on one node: they share a core\n", first_shared,
               first_partner);
    free(entries);
}
