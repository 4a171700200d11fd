"""The load beside a run, as a benchmark records it ('# load:', src/core/load.c), and the rule
that calls a run disturbed: read by the ReFrame checks (jitterbench/checks.py), no ReFrame here."""
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


def disturbed(sample: dict) -> bool:
    """The disturbed-run rule: at the start or the end of a run, the runnable tasks on a node
    (the median of 5 reads over 20 ms, this job's included) exceed the node's online CPUs by
    more than the job's own tasks there, runnable - job_tasks > cpus: what else runs there
    could keep every CPU busy by itself, so the job's ranks wait for a CPU and the times
    measure the scheduler.  A sample the kernel did not give (runnable < 0) is no evidence."""
    runnable, tasks, cpus = (sample.get(k, -1) for k in ("runnable", "job_tasks", "cpus"))
    return runnable >= 0 and cpus > 0 and runnable - tasks > cpus


def disturbance(when: str, sample: dict) -> str:
    """One line naming the node and its load, for a disturbed sample."""
    return (f"disturbed run: on {sample.get('node', '?')} {when} the run, {sample.get('runnable')} runnable tasks "
            f"(1-min load {sample.get('load1')}, steal {sample.get('steal_pct')} %) for {sample.get('cpus')} CPUs "
            f"and {sample.get('job_tasks')} tasks of this job: others exceed the CPUs "
            f"(rule: runnable - job tasks > CPUs)")
