"""The load beside a run, as a benchmark records it ('# load:', src/core/load.c), and the rule
that calls a run disturbed: read by the ReFrame checks (jitterbench/harness/checks.py), no ReFrame here."""
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
