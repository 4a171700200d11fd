"""What `jitterbench plan` models a run's time from: rough on purpose, a machine's own
run (plan --from) replaces it.  Each descriptor's `cost` is built from these."""
from __future__ import annotations

import math

LATENCY_S = 5e-6          # one message, small
BANDWIDTH_B_S = 1e9       # one message's bytes, large
WORK_B_S = 2e9            # the torus check's vector add (bytes of one array a second)


def message_s(size):
    return LATENCY_S + size / BANDWIDTH_B_S


def barrier_s(tasks):
    return 2 * math.ceil(math.log2(max(tasks, 2))) * LATENCY_S


def tasks(v):
    """A variant's tasks (a --describe record: nodes, tasks_per_node)."""
    return v["nodes"] * v["tasks_per_node"]


def sweep_s(v, warmup, per_call):
    """A run that sweeps sizes (msg_sizes) and words (patterns, send modes or methods, one
    after the other; with work, twice: after, before), each warmup + calls times per_call(size)."""
    words = len(v.get("patterns") or v.get("modes") or v.get("methods") or [None]) * (2 if v.get("work") else 1)
    return words * ((v.get("calls") or 0) + warmup) * sum(per_call(s) for s in v.get("msg_sizes") or [])
