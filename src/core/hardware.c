/* The node's hardware from /proc/cpuinfo and sysfs (lscpu's sources), as key=value words. */
#include "jb_hardware.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cpuinfo's first value of each field the facts take: x86 and Arm name the CPU differently */
static const struct {
    const char *field, *key;
} CPUINFO[] = {
    {"vendor_id", "vendor"},         {"cpu family", "family"}, {"model", "model"},
    {"stepping", "stepping"},        {"CPU implementer", "implementer"}, {"CPU part", "part"},
    {"CPU variant", "variant"},      {"CPU revision", "revision"},
};
enum { FIELDS = sizeof CPUINFO / sizeof CPUINFO[0] };

typedef struct {
    char *out;
    size_t len, used;
} facts_t;

/* key=value, the value as one word (spaces and controls made '_') so that the line splits on spaces */
static void add(facts_t *f, const char *key, const char *value)
{
    if (!*value || f->used >= f->len)
        return;
    int n = snprintf(f->out + f->used, f->len - f->used, "%s%s=", f->used ? " " : "", key);
    if (n < 0 || (size_t)n >= f->len - f->used) {
        f->out[f->used] = '\0';
        return;
    }
    size_t at = f->used + (size_t)n;
    if (strlen(value) >= f->len - at) { /* a fact whole or not at all */
        f->out[f->used] = '\0';
        return;
    }
    for (const char *p = value; *p; p++)
        f->out[at++] = isgraph((unsigned char)*p) ? *p : '_';
    f->out[at] = '\0';
    f->used = at;
}

static FILE *open_at(const char *root, const char *path)
{
    char full[4096];
    int n = snprintf(full, sizeof full, "%s%s", root, path);
    return n > 0 && (size_t)n < sizeof full ? fopen(full, "r") : NULL;
}

/* a one-line file's text without its newline, "" where it cannot be read */
static void read_line(const char *root, const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = open_at(root, path);
    if (!f)
        return;
    if (!fgets(out, (int)len, f))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* the CPUs a sysfs list names ("0-3,8,10-11"), -1 where it is no list */
static long count_list(const char *list)
{
    long count = 0;
    const char *p = list;
    while (*p) {
        char *end;
        long first = strtol(p, &end, 10), last = first;
        if (end == p || first < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            last = strtol(p, &end, 10);
            if (end == p || last < first)
                return -1;
        }
        count += last - first + 1;
        if (*end != ',' && *end != '\0')
            return -1;
        p = *end ? end + 1 : end;
    }
    return count;
}

/* The hypervisor's own name for itself: CPUID leaf 0x40000000's twelve bytes (what lscpu reads),
 * on x86 only, and only where the CPU's flags say one runs (the leaf is undefined otherwise). */
static void hypervisor_signature(char *out, size_t len)
{
    out[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax = 0x40000000u, ebx = 0, ecx = 0, edx = 0;
    __asm__ volatile("cpuid" : "+a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx));
    char sig[13];
    memcpy(sig, &ebx, 4);
    memcpy(sig + 4, &ecx, 4);
    memcpy(sig + 8, &edx, 4);
    sig[12] = '\0';
    static const struct {
        const char *sig, *name;
    } KNOWN[] = {{"KVMKVMKVM", "KVM"},         {"Microsoft Hv", "Microsoft"}, {"VMwareVMware", "VMware"},
                 {"XenVMMXenVMM", "Xen"},      {"TCGTCGTCGTCG", "TCG"},       {"ACRNACRNACRN", "ACRN"},
                 {"bhyve bhyve ", "bhyve"},    {" lrpepyh  vr", "Parallels"}, {"QNXQVMBSQG", "QNX"}};
    for (size_t k = 0; k < sizeof KNOWN / sizeof KNOWN[0]; k++)
        if (strncmp(sig, KNOWN[k].sig, 12) == 0) {
            snprintf(out, len, "%s", KNOWN[k].name);
            return;
        }
    snprintf(out, len, "%s", sig);
#else
    (void)len;
#endif
}

void jb_hardware_facts(const char *root, char *out, size_t len)
{
    if (!len)
        return;
    facts_t f = {out, len, 0};
    out[0] = '\0';
    char values[FIELDS][128] = {{0}};
    int hypervisor_flag = 0, flags_seen = 0;
    FILE *cpuinfo = open_at(root, "/proc/cpuinfo");
    char line[8192];
    while (cpuinfo && fgets(line, sizeof line, cpuinfo)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t name_len = (size_t)(colon - line);
        while (name_len && (line[name_len - 1] == ' ' || line[name_len - 1] == '\t'))
            name_len--;
        char *value = colon + 1 + strspn(colon + 1, " \t");
        value[strcspn(value, "\n")] = '\0';
        if (name_len == 5 && strncmp(line, "flags", 5) == 0) {
            flags_seen = 1;
            hypervisor_flag |= strstr(value, "hypervisor") != NULL;
        }
        for (int k = 0; k < FIELDS; k++)
            if (!values[k][0] && strlen(CPUINFO[k].field) == name_len && strncmp(line, CPUINFO[k].field, name_len) == 0)
                snprintf(values[k], sizeof values[k], "%s", value);
    }
    if (cpuinfo)
        fclose(cpuinfo);
    for (int k = 0; k < FIELDS; k++)
        add(&f, CPUINFO[k].key, values[k]);

    /* the first CPU's caches, as sysfs lists them (index0 ... index9) */
    for (int index = 0; index < 10; index++) {
        char path[128], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        read_line(root, path, level, sizeof level);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        read_line(root, path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        read_line(root, path, size, sizeof size);
        if (!level[0] || !size[0])
            continue;
        char key[48];
        const char *kind = strcmp(type, "Data") == 0 ? "d" : strcmp(type, "Instruction") == 0 ? "i" : "";
        snprintf(key, sizeof key, "l%s%s", level, kind);
        add(&f, key, size);
    }

    char online[256], count[24];
    read_line(root, "/sys/devices/system/cpu/online", online, sizeof online);
    long cpus = online[0] ? count_list(online) : -1;
    if (cpus < 0 && !*root)
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0) {
        snprintf(count, sizeof count, "%ld", cpus);
        add(&f, "cpus", count);
    }

    /* Xen names itself in sysfs; elsewhere the CPU does, and only on this machine (not a test's root) */
    char hypervisor[64];
    read_line(root, "/sys/hypervisor/type", hypervisor, sizeof hypervisor);
    if (!hypervisor[0] && hypervisor_flag && !*root)
        hypervisor_signature(hypervisor, sizeof hypervisor);
    add(&f, "hypervisor", hypervisor[0] ? hypervisor : hypervisor_flag ? "yes" : flags_seen ? "none" : "unknown");
}
