"""The load beside a run, as a benchmark records it ('# load:', src/core/load.c), and the rule
that calls a run disturbed: read by the ReFrame checks (jitterbench/harness/launches.py), no ReFrame here."""
from __future__ import annotations

import re


def load_samples(line: str) -> dict:
    """The samples of a '# load:' line, {'before': {'node': 'vm', 'runnable': 6, ...}, 'after': ...}:
    numbers as numbers."""
    samples = {}
    for key, value in re.findall(r"(\w+)=(\S+)", line):
        when, _, field = key.partition("_")
        if when in ("before", "after") and field:
            try:
                value = int(value)
            except ValueError:
                try:
                    value = float(value)
                except ValueError:
                    pass
            samples.setdefault(when, {})[field] = value
    return samples


# A launch's CPUs are far apart when a cache line's round trip between two of its tasks on a node
# (the '# load:' line's pair_ns, src/core/load.c) is more than FAR_APART times the nearest of the
# case's launches.  On the 2-core CI VM the round trip is 50-115 ns most of the time and 300-420 ns
# for seconds at a time, with no load or steal to show it; in 300 launches of MPICH's halo exchange
# every one of the 12 far-apart launches was 2.3x slower, and no launch between the two modes
# (docs/references.md, "CPUs far apart"): any factor from 2 to 4 splits them alike.
FAR_APART = 3


def pair_ns(samples: dict) -> float | None:
    """A launch's round trip: the larger of its samples' pair_ns (before and after), None where no
    node held two tasks (-1) or the benchmark did not say."""
    known = [s["pair_ns"] for s in samples.values() if isinstance(s.get("pair_ns"), (int, float)) and s["pair_ns"] > 0]
    return max(known) if known else None


def near(pairs: list) -> list[bool]:
    """Which launches a case's figures are the median over: those whose round trip (pair_ns, None:
    unknown, kept) is at most FAR_APART times the nearest launch's.  A launch whose CPUs the
    hypervisor held far apart measured the hypervisor's placement, not the MPI: it is set aside
    (counted in the check's launches_set_aside, its values kept in launch_values, every launch's
    round trip in launch_pair_ns)."""
    known = [p for p in pairs if p is not None]
    nearest = min(known, default=None)
    return [p is None or p <= FAR_APART * nearest for p in pairs]


def disturbed(sample: dict) -> bool:
    """Whether the benchmark found the sample disturbed: the rule is stated once, in the benchmark
    (src/core/load.c: on a node, runnable - job_tasks > max(cpus - job_tasks, 0), the runnable
    tasks the median of 5 reads over 20 ms, this job's included: something else takes a CPU
    from one of the job's ranks, so the times measure the scheduler), which writes its verdict
    as `_disturbed=1`; the checks' launch loop reads the same."""
    return sample.get("disturbed") == 1


def disturbance(when: str, sample: dict) -> str:
    """One line naming the node and its load, for a disturbed sample."""
    return (f"disturbed run: on {sample.get('node', '?')} {when} the run, {sample.get('runnable')} runnable tasks "
            f"(1-min load {sample.get('load1')}, steal {sample.get('steal_pct')} %) for {sample.get('cpus')} CPUs "
            f"and {sample.get('job_tasks')} tasks of this job: others take a CPU from the job "
            f"(rule: runnable - job tasks > the CPUs the job leaves free)")


def node_figures(samples) -> dict:
    """A launch's node figures from its load samples (load_samples): {figure: (value, node)}, the
    compute probe taken before the launch, the farthest pair of its two samples (None: no node
    held two tasks); the node that held each, '?' where the benchmark did not say."""
    before = samples.get("before", {})
    probe = before.get("probe_us")
    pair = pair_ns(samples)
    farthest = max(samples.values(), key=lambda s: s.get("pair_ns") if isinstance(s.get("pair_ns"), (int, float)) else -1,
                   default={})
    return {"node_probe_us": (probe if isinstance(probe, (int, float)) and probe > 0 else None,
                              str(before.get("probe_node", "?"))),
            "node_pair_ns": (pair, str(farthest.get("pair_node", "?")))}
