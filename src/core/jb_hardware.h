/* The hardware of a node as its OS tells it (no MPI, unit-tested alone): the facts a reference
 * file's fingerprint matches, so that numbers made on one processor are never judged on another.
 * A hypervisor shows every EPYC host as "AMD EPYC": the model name alone does not tell two hosts
 * apart, their family, model, stepping and cache sizes do (docs/references.md, "The machine"). */
#ifndef JB_HARDWARE_H
#define JB_HARDWARE_H

#include <stddef.h>

/* One line of key=value words, no spaces inside a value, in this order:
 *   x86: vendor family model stepping;  Arm: implementer part variant revision
 *   then the first CPU's caches by level and type (l1d l1i l2 l3, as sysfs gives their sizes),
 *   cpus (online), and hypervisor: its vendor where the CPU names one, yes where /proc/cpuinfo's
 *   flags only say there is one, none where its flags name none, unknown where it has no flags (Arm).
 * Read from root ("" for this machine; a test's folder that mirrors proc/cpuinfo and
 * sys/devices/system/cpu/...).  A fact the OS does not give is left out; never fails. */
void jb_hardware_facts(const char *root, char *out, size_t len);

#endif
