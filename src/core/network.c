/* The network devices each node offers, as the kernel reports them: every
 * interface but loopback with its state and speed (/sys/class/net), and every
 * RDMA port with its state, rate and link layer (/sys/class/infiniband, as
 * ibv_devinfo reads them).  A run records them so that two runs on different
 * links (a port down, a slower rate, no RDMA device at all) can be told apart.
 *
 * Node leaders describe their node; rank 0 gathers one fixed-size description
 * per node (O(nodes), like the node list) and groups the nodes that agree. */
#include "jb_network.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIPTION 1024 /* bytes of one node's description; longer ones end in "..." */

typedef struct {
    char node[MPI_MAX_PROCESSOR_NAME];
    char devices[DESCRIPTION];
} node_network;

/* The first line of a small sysfs file, without its newline, or "?" */
static void read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)len, f))
        snprintf(out, len, "?");
    else
        out[strcspn(out, "\n")] = '\0';
    if (f)
        fclose(f);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in a folder (not "." and ".."), sorted, at most max; returns how many. */
static int list_dir(const char *path, char names[][256], char **sorted, int max)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; n < max && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(names[n], 256, "%s", e->d_name);
        sorted[n] = names[n];
        n++;
    }
    closedir(d);
    qsort(sorted, (size_t)n, sizeof *sorted, by_name);
    return n;
}

static void append(char *buf, const char *text)
{
    size_t used = strlen(buf);
    if (used >= 3 && strcmp(buf + used - 3, "...") == 0)
        return; /* truncated already: a shorter entry after the mark would read as complete */
    if (used + strlen(text) + 1 < DESCRIPTION)
        memcpy(buf + used, text, strlen(text) + 1);
    else if (used + 4 < DESCRIPTION)
        memcpy(buf + used, "...", 4);
}

#define MAX_ENTRIES 64

/* "eth0 up 10000Mb/s; mlx5_0/1 ACTIVE 100 Gb/sec (4X EDR) InfiniBand", or "none" */
static void describe_node(char *out)
{
    static char names[MAX_ENTRIES][256], ports[MAX_ENTRIES][256];
    char *sorted[MAX_ENTRIES], *sorted_ports[MAX_ENTRIES];
    char path[1024], state[64], speed[64], rate[64], layer[64], item[512];
    out[0] = '\0';
    int n = list_dir("/sys/class/net", names, sorted, MAX_ENTRIES);
    for (int i = 0; i < n; i++) {
        if (strcmp(sorted[i], "lo") == 0)
            continue;
        snprintf(path, sizeof path, "/sys/class/net/%s/operstate", sorted[i]);
        read_line(path, state, sizeof state);
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", sorted[i]);
        read_line(path, speed, sizeof speed); /* fails (EINVAL) while the link is down */
        if (strcmp(speed, "-1") == 0) /* the driver does not know (virtual links) */
            snprintf(speed, sizeof speed, "?");
        snprintf(item, sizeof item, "%s%s %s %sMb/s", out[0] ? "; " : "", sorted[i], state, speed);
        append(out, item);
    }
    n = list_dir("/sys/class/infiniband", names, sorted, MAX_ENTRIES);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports", sorted[i]);
        int np = list_dir(path, ports, sorted_ports, MAX_ENTRIES);
        for (int p = 0; p < np; p++) {
            const char *files[] = {"state", "rate", "link_layer"};
            char *values[] = {state, rate, layer};
            for (int f = 0; f < 3; f++) {
                snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/%s", sorted[i], sorted_ports[p],
                         files[f]);
                read_line(path, values[f], 64);
            }
            /* state reads "4: ACTIVE": the name is what ibv_devinfo shows */
            const char *colon = strchr(state, ':');
            const char *state_name = colon ? colon + 1 + strspn(colon + 1, " ") : state;
            snprintf(item, sizeof item, "%s%s/%s %s %s %s", out[0] ? "; " : "", sorted[i], sorted_ports[p],
                     state_name, rate, layer);
            append(out, item);
        }
    }
    if (!out[0])
        snprintf(out, DESCRIPTION, "none");
}

void jb_network(jb_ctx *ctx, jb_json *j)
{
    MPI_Comm leaders = ctx->nodes.leaders;
    if (leaders == MPI_COMM_NULL)
        return;
    node_network mine;
    memset(&mine, 0, sizeof mine);
    int len, lrank, lsize;
    MPI_Get_processor_name(mine.node, &len);
    describe_node(mine.devices);
    MPI_Comm_rank(leaders, &lrank);
    MPI_Comm_size(leaders, &lsize);
    int writer = ctx->nodes.writer; /* rank 0 is a leader */
    node_network *all = lrank == writer ? jb_alloc(ctx, (size_t)lsize, sizeof *all, "the nodes' network devices") : NULL;
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, writer, leaders);
    if (ctx->rank != 0)
        return;
    /* nodes that report the same devices form one group, in node order: one line
     * for a uniform machine however many nodes it has */
    int *group = jb_alloc(ctx, (size_t)lsize, sizeof *group, "the nodes' network groups");
    for (int i = 0; i < lsize; i++) {
        group[i] = i;
        for (int k = 0; k < i; k++)
            if (group[k] == k && strcmp(all[k].devices, all[i].devices) == 0) {
                group[i] = k;
                break;
            }
    }
    printf("# network:");
    jb_json_array(j, "network");
    for (int k = 0, first = 1; k < lsize; k++) {
        if (group[k] != k)
            continue;
        printf("%s", first ? " " : " | ");
        first = 0;
        jb_json_object(j, NULL);
        jb_json_str(j, "devices", all[k].devices);
        jb_json_array(j, "nodes");
        for (int i = k, shown = 0; i < lsize; i++)
            if (group[i] == k) {
                printf("%s%s", shown++ ? "," : "", all[i].node);
                jb_json_str(j, NULL, all[i].node);
            }
        jb_json_end(j);
        jb_json_end(j);
        printf(": %s", all[k].devices);
    }
    jb_json_end(j);
    printf("\n");
    free(group);
    free(all);
}
