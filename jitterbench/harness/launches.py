"""A case launched several times in its one job (docs/references.md, "Launches"), through the launch
loop (launches.sh): each launch's load read as the benchmark recorded it and judged by the
disturbed-launch rule (load.py; a launch disturbed through every try leaves the case inconclusive),
each launch's node figures kept, and each figure the median over the launches whose CPUs were near
(LaunchedCheck, the base of every benchmark's check).
"""
from __future__ import annotations

import json
import os
import re
import shutil

import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from .. import fingerprint, reframe_report, settings
from .load import disturbance, disturbed, load_samples, near, node_figures, pair_ns
from .mpi_check import MpiCheck
from .rounds import median_of_near

# the launch loop a case's job runs its benchmark through (LaunchedCheck.launch_several_times)
LAUNCH_LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launches.sh")


@sn.deferrable
def median_over_launches(test, values, name, what):
    """The median of values, one per launch of test; every launch's value is kept in the test's
    launch_values under name (set as the value is evaluated: a check that fails its performance
    still logs what each launch measured)."""
    if len(values) != test.launches:
        raise SanityError(f"{len(values)} JB_RESULT lines hold {what}: expected one per launch ({test.launches})")
    kept = json.loads(test.launch_values or "{}")
    kept[name] = values
    test.launch_values = json.dumps(kept, separators=(",", ":"))
    return median_of_near(test, values, test.near_launches(json.loads(test.launch_pair_ns or "[]")))


@sn.deferrable
def no_failed_launch(failed):
    """The lines of the failed launches (at most one: the first ends the loop), asserted none."""
    if failed:
        raise SanityError(failed[-1])
    return True


class LaunchedCheck(MpiCheck):
    """A check whose benchmark is launched `launches` times in its job (the launch loop), each
    launch's load judged by the disturbed-launch rule, its figures the median over the launches:
    what every benchmark's check (checks.JitterbenchCheck) is built on."""

    # the load beside each launch, as the benchmark recorded it ('# load:'): the busiest node's
    # runnable tasks, 1-minute load, CPUs and this job's tasks there, at the start and the end
    # ('; ' between launches)
    load_before = variable(str, value="", loggable=True)
    load_after = variable(str, value="", loggable=True)
    # whether the disturbed-run rule fails the check (-S judge_load=0: the load is still logged; for
    # runs that test something else on a machine shared with other work)
    judge_load = variable(typ.Bool, value=True, loggable=True)

    # Launches (docs/references.md, "Launches"): launch-to-launch variation dominates call-to-call
    # variation, so more calls per launch do not make a verdict surer and more launches do.  A
    # case launches its benchmark `launches` times in its one job, each a launcher call of its
    # own (jitterbench/harness/launches.sh), and each performance variable is the median over the
    # launches; JB_LAUNCHES sets a site's default (settings.LAUNCHES).  A launch the benchmark
    # finds disturbed (src/core/load.c) is launched again, `launch_tries` tries in all; a case
    # with a launch still disturbed is inconclusive (undisturbed).  A check whose verdict one
    # launch decides sets over_launches False and says why: it launches once, through the same
    # loop (a disturbed launch launched again).  The papers' findings, which read their documents
    # from the stage folder, set launch_loop False: one launch, a disturbed one inconclusive.
    launches = variable(int, value=settings.launches(), loggable=True)
    launch_tries = variable(int, value=3, loggable=True)
    over_launches = True
    launch_loop = True
    # -S rotate_roles=1: each launch rotates the ranks' roles one step further (--rank-order, counting
    # on over the case's launches and rounds), so that the culprit over launches names a slot, not
    # a role.  Off by default: the roles are not alike everywhere (Intel MPI's pairwise all-to-all
    # of 1 KiB took 2.6x as long with rank 0 on the second slot here, docs/references.md), so a
    # rotated run's figures are not those of a reference made without it.
    rotate_roles = variable(typ.Bool, value=False)
    # every launch's value of each performance variable, {variable: [launch 1, launch 2, ...]} (JSON)
    launch_values = variable(str, value="", loggable=True)
    # each launch's round trip between two of its tasks on a node, ns (JSON, null where unknown),
    # and the launches whose CPUs were far apart by it (load.near), left out of the case's medians
    launch_pair_ns = variable(str, value="", loggable=True)
    launches_set_aside = variable(int, value=0, loggable=True)

    @run_after("init")
    def one_launch_unless_over_launches(self):
        if not self.over_launches:
            self.launches = 1

    @run_before("run", always_last=True)
    def launch_several_times(self):
        """The job runs the benchmark through the launch loop, by the launcher's own modifier
        (`sh launches.sh L TRIES FIRST srun ... jb-halo ...`), each launch in its own folder: the
        folders are kept whole (their JSON documents, stdout and stderr)."""
        if not self.launch_loop:
            return
        if not 1 <= self.launches <= settings.MAX_LAUNCHES or self.launch_tries < 1:
            raise ValueError(f"launches must be 1 to {settings.MAX_LAUNCHES} and launch_tries at least 1, "
                             f"got {self.launches} and {self.launch_tries}")
        shutil.copy(LAUNCH_LOOP, os.path.join(self.stagedir, "launches.sh"))
        # where no rule reads the load (reads_the_load), a launch's verdict is no reason to launch
        # again: the virtual cluster's nodes, which share the CPUs, would try every launch 3 times
        if not self.reads_the_load():
            self.launch_tries = 1
        self.job.launcher.modifier = "sh"
        # rotate_roles: each launch of each round its own rotation of the ranks' roles (launches.sh);
        # a check one launch decides keeps them (its own figures name its nodes in the node list's
        # order: jb-pairs, jb-noise)
        rotate = self.rotate_roles and self.over_launches
        first = getattr(self, reframe_report.ROUND, 0) * self.launches + 1 if rotate else "-"
        self.job.launcher.modifier_options = ["launches.sh", str(self.launches), str(self.launch_tries), str(first)]
        self.keep_files = ["launches.sh", "launch-[0-9]*"]

    @run_before("sanity")
    def read_the_load(self):
        """The load lines, one per launch kept, and what the disturbed-launch rule made of them
        (the benchmark's verdict, src/core/load.c); load_before and load_after log every launch's,
        separated by '; '."""
        self.disturbances = []
        if self.is_dry_run():
            return
        path = os.path.join(self.stagedir, self.stdout.evaluate())
        text = open(path, errors="replace").read() if os.path.exists(path) else ""
        logged = {"before": [], "after": []}
        pairs = []
        self.node_launches = {name: [] for name in fingerprint.NODE_FIGURES}  # {figure: [(value, node), ...]}
        for launch, line in enumerate(re.findall(r"^# load: (.*)$", text, re.M), 1):
            samples = load_samples(line)
            pairs.append(pair_ns(samples))
            for name, figure in node_figures(samples).items():
                self.node_launches[name].append(figure)
            for when, sample in samples.items():
                logged[when].append(" ".join(f"{k}={v}" for k, v in sample.items()))
                if disturbed(sample):
                    tried = f" of {self.launches}, disturbed in all {self.launch_tries} tries" if self.launch_loop else ""
                    self.disturbances.append(f"launch {launch}{tried}: {disturbance(when, sample)}")
        for when, samples in logged.items():
            setattr(self, f"load_{when}", "; ".join(samples))
        self.launch_pair_ns = json.dumps(pairs)

    def reads_the_load(self):
        """Whether the disturbed-launch rule applies: judge_load, and the partition's nodes have
        their CPUs to themselves.  Where they share them with each other (extras binding other
        than 'cores': the virtual cluster's containers on one host), a node's view of the
        runnable tasks holds the job's ranks of the other nodes: no rule reads it."""
        return self.judge_load and self.current_partition.extras.get("binding", "cores") == "cores"

    def near_launches(self, pairs):
        """Which launches the case's figures are the median over (load.near: those whose CPUs were
        not far apart), where the disturbed-launch rule applies (reads_the_load); elsewhere all."""
        return near(pairs) if self.reads_the_load() else [True] * len(pairs)

    def launched(self):
        """Fails a case whose launch failed, in launches.sh's line naming it and its first error
        line; a check's sanity asserts it first, before what the failed launch did not print."""
        return no_failed_launch(sn.extractall(r"^# (launch: \d+ of \d+ failed with exit status .*)$", self.stdout, 1))

    def undisturbed(self):
        """Fails, as inconclusive, a case whose launch something else on a node disturbed through
        every try (the rule: `disturbed`), naming the node and its load: nothing of it is judged,
        and `jitterbench table` says to run it again."""
        return sn.assert_false(self.reads_the_load() and self.disturbances,
                               msg=f"{reframe_report.INCONCLUSIVE}: {'; '.join(self.disturbances)}")

    def result(self, key, conv=float, where=None, name=None):
        """A field of the benchmark's JB_RESULT summary lines, one per launch: of the lines that
        hold every field=value of `where` (no `where`: the only line of each launch), the
        median over the launches; every launch's value is kept in launch_values (under name,
        else key)."""
        select = "".join(rf"(?=.*\s{re.escape(field)}={re.escape(str(value))}(?:\s|$))"
                         for field, value in (where or {}).items())
        what = " ".join(f"{field}={value}" for field, value in (where or {}).items()) or "a result"
        return median_over_launches(self, sn.extractall(rf"^JB_RESULT{select}.*\s{re.escape(key)}=(\S+)",
                                                        self.stdout, 1, conv), name or key, f"{key} for {what}")
