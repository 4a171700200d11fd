/* Output: readable table, one summary line per result, and the JSON
 * document with its metadata, written atomically at the end of the run (jb_finish). */
#include "jb_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jb_files.h"
#include "jb_json.h"
#include "jb_load.h"
#include "jb_network.h"
#include "jb_version.h" /* JB_VERSION, written at every build (src/version.cmake) */

extern char **environ;

/* Environment variables that change an MPI's protocols or placement:
 * recorded with every result, since they are factors of the measurement. */
static const char *const protocol_env_prefixes[] = {
    "OMPI_MCA_", "PMIX_MCA_", "UCX_", "MPICH_", "MPIR_CVAR_", "HYDRA_", "I_MPI_", "FI_",
    "MP_", "PSM2_", "PSM3_", "MV2_", "HCOLL_", "SLURM_CPU_BIND", "SLURM_DISTRIBUTION",
    "SLURM_TASKS_PER_NODE", "SLURM_JOB_NODELIST", "OMP_NUM_THREADS", NULL};

/* ... except what a launcher sets for its own wiring (addresses, session
 * directories, job ids): it differs every run and steers nothing. */
static const char *const launcher_env_prefixes[] = {
    "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "PMIX_MCA_psec", "PMIX_MCA_mca_base_component_show",
    "MPIR_CVAR_CH3_INTERFACE_HOSTNAME", NULL};

static int has_prefix(const char *entry, const char *const *prefixes)
{
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

static int is_protocol_env(const char *entry)
{
    return has_prefix(entry, protocol_env_prefixes) && !has_prefix(entry, launcher_env_prefixes);
}

/* Host names of the real nodes, one per node, gathered from the node
 * leaders only: O(nodes) on rank 0, never O(ranks x calls). */
static void node_list_json(jb_ctx *ctx, jb_json *j)
{
    MPI_Comm leaders = ctx->nodes.leaders;
    if (leaders == MPI_COMM_NULL)
        return;
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len, lrank, lsize;
    MPI_Get_processor_name(name, &len);
    MPI_Comm_rank(leaders, &lrank);
    MPI_Comm_size(leaders, &lsize);
    int writer = ctx->nodes.writer; /* rank 0 is a leader */
    char *all = lrank == writer ? jb_alloc(ctx, (size_t)lsize, MPI_MAX_PROCESSOR_NAME, "the node list") : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, writer, leaders);
    if (ctx->rank != 0)
        return;
    /* on stdout too: a batch system's record of the nodes can be missing (a job
     * that ends between two polls); the benchmark's own never is */
    printf("# node_list:");
    jb_json_array(j, "node_list");
    for (int i = 0; i < lsize; i++) {
        printf("%s%s", i ? "," : " ", all + (size_t)i * MPI_MAX_PROCESSOR_NAME);
        jb_json_str(j, NULL, all + (size_t)i * MPI_MAX_PROCESSOR_NAME);
    }
    jb_json_end(j);
    printf("\n");
    free(all);
}

static void metadata_json(jb_ctx *ctx, jb_json *j)
{
    int major, minor;
    MPI_Get_version(&major, &minor);

    jb_json_object(j, "metadata");
    jb_json_str(j, "benchmark_version", JB_VERSION);
    jb_json_str(j, "mpi_library", ctx->mpi_library);
    if (ctx->rank == 0) {
        jb_json_str(j, "cpu_model", ctx->cpu_model);
        jb_json_int(j, "cpus", ctx->cpus);
        jb_json_str(j, "hardware", ctx->hardware);
    }
    char std[16];
    snprintf(std, sizeof std, "%d.%d", major, minor);
    jb_json_str(j, "mpi_standard", std);
    jb_json_int(j, "ranks", ctx->size);
    jb_json_int(j, "nodes", ctx->nodes.nnodes);
    jb_json_int(j, "tasks_per_node", ctx->nodes.tasks_per_node);
    jb_json_int(j, "min_tasks_per_node", ctx->nodes.min_tpn);
    jb_json_int(j, "max_tasks_per_node", ctx->nodes.max_tpn);
    jb_json_bool(j, "virtual_nodes", ctx->nodes.virtual_nodes);
    jb_json_int(j, "real_nodes", ctx->nodes.real_nnodes);
    node_list_json(ctx, j);
    jb_network(ctx, j);
    if (ctx->rank == 0) {
        jb_json_raw(j, "placement", ctx->placement.buf);
        jb_load_json(ctx, j);
    }

    jb_json_array(j, "command_line");
    for (int i = 0; i < ctx->argc; i++)
        jb_json_str(j, NULL, ctx->argv[i]);
    jb_json_end(j);

    jb_json_object(j, "environment");
    for (char **e = environ; *e; e++) {
        if (!is_protocol_env(*e))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[256];
        size_t klen = (size_t)(eq - *e) < sizeof key - 1 ? (size_t)(eq - *e) : sizeof key - 1;
        memcpy(key, *e, klen);
        key[klen] = '\0';
        jb_json_str(j, key, eq + 1);
    }
    jb_json_end(j);

    jb_json_object(j, "timer");
    jb_json_str(j, "source", "MPI_Wtime");
    jb_json_num(j, "wtick_s", ctx->timer.wtick);
    jb_json_num(j, "resolution_s", ctx->timer.resolution);
    jb_json_num(j, "call_overhead_s", ctx->timer.overhead);
    jb_json_bool(j, "wtime_is_global", ctx->timer.wtime_global);
    jb_json_end(j);

    char when[64];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    jb_json_str(j, "finished_utc", when);
    jb_json_end(j);
}

/* ---- results ------------------------------------------------------------ */

static void line_add(jb_ctx *ctx, const char *key, const char *value)
{
    size_t room = sizeof ctx->line - ctx->line_len;
    int n = snprintf(ctx->line + ctx->line_len, room, " %s=", key);
    ctx->line_len += (size_t)n < room ? (size_t)n : room - 1;
    /* values never carry blanks, so the line splits on white space */
    for (const char *p = value; *p && ctx->line_len + 1 < sizeof ctx->line; p++)
        ctx->line[ctx->line_len++] = (*p == ' ' || *p == '\t') ? '_' : *p;
    ctx->line[ctx->line_len] = '\0';
}

static void table_add(jb_ctx *ctx, const char *key, const char *value)
{
    int width = (int)strlen(key) > 10 ? (int)strlen(key) : 10;
    size_t hl = strlen(ctx->table_header), rl = strlen(ctx->table_row);
    if (!ctx->table_started)
        snprintf(ctx->table_header + hl, sizeof ctx->table_header - hl, " %*s", width, key);
    snprintf(ctx->table_row + rl, sizeof ctx->table_row - rl, " %*s", width, value);
}

void jb_result_begin(jb_ctx *ctx)
{
    if (ctx->rank != 0)
        return;
    jb_json_object(&ctx->results, NULL);
    ctx->entry = &ctx->results;
    ctx->line_len = (size_t)snprintf(ctx->line, sizeof ctx->line, "JB_RESULT benchmark=%s", ctx->name);
    ctx->table_row[0] = '\0';
}

void jb_result_str(jb_ctx *ctx, const char *key, const char *value, int show)
{
    if (ctx->rank != 0)
        return;
    jb_json_str(ctx->entry, key, value);
    line_add(ctx, key, value);
    if (show)
        table_add(ctx, key, value);
}

void jb_result_int(jb_ctx *ctx, const char *key, long long value, int show)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    if (ctx->rank != 0)
        return;
    jb_json_int(ctx->entry, key, value);
    line_add(ctx, key, text);
    if (show)
        table_add(ctx, key, text);
}

void jb_result_num(jb_ctx *ctx, const char *key, double value, int show)
{
    char text[32], shown[32];
    snprintf(text, sizeof text, "%.6g", value);
    snprintf(shown, sizeof shown, "%.2f", value);
    if (ctx->rank != 0)
        return;
    jb_json_num(ctx->entry, key, value);
    line_add(ctx, key, text);
    if (show)
        table_add(ctx, key, shown);
}

jb_json *jb_result_json(jb_ctx *ctx) { return ctx->rank == 0 ? ctx->entry : NULL; }

void jb_result_end(jb_ctx *ctx)
{
    if (ctx->rank != 0)
        return;
    jb_json_end(ctx->entry);
    ctx->entry = NULL;
    if (!ctx->table_started) {
        printf("#%s\n", ctx->table_header);
        ctx->table_started = 1;
    }
    printf(" %s\n%s\n", ctx->table_row, ctx->line);
    fflush(stdout);
}

/* ---- the JSON document ---------------------------------------------------- */

static int write_atomically(const char *path, const char *text, char *err)
{
    char tmp[4096];
    FILE *f = jb_output_open(path, tmp, sizeof tmp, err);
    if (!f)
        return -1;
    fputs(text, f);
    fputc('\n', f);
    return jb_output_close(f, tmp, path, err);
}

int jb_output_document(jb_ctx *ctx)
{
    jb_json doc;
    jb_json_init(&doc);
    jb_json_object(&doc, NULL);
    jb_json_str(&doc, "benchmark", ctx->name);
    metadata_json(ctx, &doc); /* collective: every rank takes part */
    int rc = 0;
    if (ctx->rank == 0 && ctx->opt.json_path) {
        jb_json_end(&ctx->config);
        jb_json_end(&ctx->results);
        jb_json_raw(&doc, "config", ctx->config.buf);
        jb_json_raw(&doc, "results", ctx->results.buf);
        jb_json_end(&doc);
        char err[JB_ERRLEN];
        if (doc.failed || ctx->config.failed || ctx->results.failed) /* a part is missing: write none of it */
            snprintf(err, sizeof err, "cannot write '%s': out of memory for the JSON document", ctx->opt.json_path);
        if (doc.failed || ctx->config.failed || ctx->results.failed ||
            write_atomically(ctx->opt.json_path, doc.buf, err) != 0) {
            fprintf(stderr, "jb-%s: error: %s\n", ctx->name, err);
            rc = -1;
        }
    }
    jb_json_free(&doc);
    return rc;
}
