"""The bases of the benchmarks' ReFrame checks (reframe_checks/): a jitterbench benchmark's check
(JitterbenchCheck: its build, eager limit, the machine its run says it ran on, its node judged
first, performance variables per swept value, its sanity), the per-call one (PerCallCheck) and a
paper's finding (PaperFinding).  What they are built on is in modules of its own: the job
(mpi_check.py), its launches and their load (launches.py), its rounds (rounds.py), its references
(system_references.py), the build (build.py), the partitions' sizes (partitions.py).

Only ReFrame's loader imports this module: the node counts and tasks per node of every check are
read from the system ReFrame runs on when the classes are defined (partitions.py).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import statistics

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.osext as osext
import reframe.utility.typecheck as typ
from reframe.core.builtins import fixture, parameter, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, ReframeError

from .. import benchmarks, findings, fingerprint, reframe_report, sweeps
from .build import JitterbenchBuild
from .launches import LaunchedCheck, median_over_launches
from .mpi_check import MpiCheck


class PaperFinding(rfm.RegressionMixin):
    """A paper's finding, reproduced (reframe_checks/papers.py, contention.py): its record
    (jitterbench/findings.py) gives its description, and the variables the report's findings table
    shows must be among those it reports, so a renamed variable fails the check, not the table."""

    @run_after("init")
    def describe_from_the_record(self):
        self.descr = findings.FINDINGS[type(self).__name__].claim

    @run_before("performance")
    def reports_what_the_record_shows(self):
        shown = findings.FINDINGS[type(self).__name__].shown or ()
        missing = [name for name in shown if name not in self.perf_variables]
        if missing:
            raise ReframeError(f"{type(self).__name__} reports no {', '.join(missing)}, which its record "
                               f"(jitterbench/findings.py) shows")


def listed(values):
    """A list option's value: 1024,16384."""
    return ",".join(map(str, values))


class JitterbenchCheck(LaunchedCheck):
    """A jitterbench benchmark: built by the fixture, launched as LaunchedCheck launches it, eager
    limit as a parameter, what the benchmark sweeps in one run (msg_sizes, ...) as performance
    variables, and its node's figures judged before them (judge_the_node_first).

    eager_limit 'default' leaves the MPI alone; a number of bytes is set
    through the variable the environment declares (extras 'eager_vars') for
    each transport the job's messages cross (fabrics_used): shared memory where
    a node holds two tasks, the partition's network (extras 'transports': tcp, a
    switch, a torus) when it spans nodes.  So one task a node needs no
    shared-memory variable (MPICH declares none).
    eager_var logs the names set.
    """

    tags = {"jitterbench", "acceptance"}
    benchmark = variable(str)
    # the MPI's own, and limits that put each size a run sweeps on either side of the
    # switch: halo's 4K and 40K are both above 2048, split by 8192 (32768 splits them the
    # same way, so it is left out) and both below 65536; likewise ping-pong's 8, 4K and 64K
    eager_limit = parameter(["default", "2048", "8192", "65536"], type=str, loggable=True)
    eager_var = variable(str, value="", loggable=True)
    mpi_library = variable(str, value="", loggable=True)
    cpu = variable(str, value="", loggable=True)  # rank 0's node: 'MODEL; N CPUs' ('# cpu:')
    hardware = variable(str, value="", loggable=True)  # rank 0's node: 'vendor=... family=...' ('# hardware:')
    # why the case was not judged where its node's figures were past their bounds (judge_the_node_first):
    # fingerprint.node_finding's, as JSON
    node_finding = variable(str, value="", loggable=True)
    node_list = variable(str, value="", loggable=True)  # the nodes the benchmark itself ran on
    # timed calls (cycles) per run; 0 keeps the benchmark's own default.  The quick
    # mode sets fewer with -S calls=N.
    calls = variable(int, value=0, loggable=True)
    # the benchmark's own watchdog (--timeout), below the job's time limit, so that a hung run
    # fails naming the variant and call it was in; -S timeout=N, 0: none
    timeout = variable(int, value=540, loggable=True)
    # message sizes the benchmark sweeps in its one run (--size), each a set of performance
    # variables (max_isend-recv_4096, ...); -S msg_sizes=A,B narrows them
    msg_sizes = variable(typ.List[int], value=[], loggable=True)
    build = fixture(JitterbenchBuild, scope="environment")
    quick_variant = {**MpiCheck.quick_variant, "eager_limit": ["default"]}

    # calibrated noise for the benchmarks that take --inject P:US (halo, jacobi): every task waits
    # US us, busy, at a call with chance P: a known slowdown, for the verdict's power
    # (benchmarks/verdict_rates.py); '' for none
    inject = variable(str, value="", loggable=True)

    def inject_options(self):
        if not self.inject:
            return []
        if not re.fullmatch(r"[0-9.]+:[0-9.]+", self.inject):  # the job script holds it unquoted
            raise ValueError(f"inject must be P:US, two numbers, got {self.inject!r}")
        return ["--inject", self.inject]

    def quantities(self, *names):
        """{quantity: (field, unit)} of the benchmark's record: the named ones, or without names
        every performance variable it declares (jitterbench/benchmarks/<benchmark>.py)."""
        return benchmarks.by_benchmark(self.benchmark).performance(*names)

    @run_after("setup")
    def set_executable(self):
        self.executable = shlex.quote(os.path.join(self.build.bindir, f"jb-{self.benchmark}"))  # a path, in a shell line

    @run_before("run")
    def set_calls(self):
        if self.calls:
            self.executable_opts += ["--calls", str(self.calls)]
        self.executable_opts += ["--timeout", str(self.timeout)]

    def lacks_eager_variables(self, partition, environ):
        """The transports of this job on partition that environ declares no eager-limit
        variable for (none with the MPI's default limit)."""
        names = environ.extras.get("eager_vars", {})
        return [] if self.eager_limit == "default" else [t for t in self.fabrics_used(partition) if t not in names]

    def takes(self, partition, environ):
        # an eager limit the MPI has no variable for is no case (MPICH on shared memory)
        return super().takes(partition, environ) and not self.lacks_eager_variables(partition, environ)

    @run_after("setup")
    def set_eager_limit(self):
        if self.eager_limit == "default":
            return
        missing = self.lacks_eager_variables(self.current_partition, self.current_environ)
        self.skip_if(bool(missing), f"{self.current_environ.name} declares no eager-limit variable for "
                                    f"{', '.join(missing)}")
        names = self.current_environ.extras["eager_vars"]
        variables = sorted({names[t] for t in self.fabrics_used(self.current_partition)})
        for name in variables:
            self.env_vars[name] = self.eager_limit
        self.eager_var = ",".join(variables)

    @run_before("performance")
    def record_mpi_library_and_nodes(self):
        if self.is_dry_run():  # --dry-run writes the job script and runs nothing: no output to read
            return
        stdout = os.path.join(self.stagedir, self.stdout.evaluate())
        self.mpi_library = sn.evaluate(sn.extractsingle(r"^# mpi_library: (.*)$", stdout, 1)).strip()
        self.cpu = sn.evaluate(sn.extractsingle(r"^# cpu: (.*)$", stdout, 1)).strip()
        hardware = re.search(r"^# hardware: (.*)$", open(stdout, errors="replace").read(), re.M)
        self.hardware = hardware[1].strip() if hardware else ""  # a benchmark built before it said none
        self.node_list = sn.evaluate(sn.extractsingle(r"^# node_list: (.*)$", stdout, 1)).strip()
        self.binding = sn.evaluate(sn.extractsingle(r"^# binding: (\S+)", stdout, 1))
        self.cpu_sets = sn.evaluate(sn.extractsingle(r"^# cpu_sets: (.*)$", stdout, 1)).strip()
        self.network = sn.evaluate(sn.extractsingle(r"^# network: (.*)$", stdout, 1)).strip()
        self.take_the_machines_references({"cpu": self.cpu, "hardware": self.hardware, "mpi_library": self.mpi_library,
                                           "transport": self.transport, "check": type(self).__name__,
                                           "launches": fingerprint.made_of(self.launches, self.rounds)})

    @run_before("performance")
    def add_the_node_figures(self):
        """The node's figures (fingerprint.NODE_FIGURES) as performance variables of the case, each
        the median over the launches its other figures are the median of, so that references bound
        them by the same rule.  Only where a node's CPUs are its own (reads_the_load: on the virtual
        cluster's nodes, which share two, the probe measures the other nodes' ranks), and the cores'
        round trip only where the case's figures are a median over launches whose CPUs were near
        (load.near): of one launch it is the hypervisor's passing state, not the node's (on the CI
        machine type a launch's round trip was 110-140 ns or, in 40 % of launches, 400-460 ns,
        while each 10-launch case's median over its near launches stayed within 107-138 ns:
        docs/references.md, "Node first").  A figure some launch did not give is none."""
        if self.is_dry_run() or not self.reads_the_load():
            return
        for name, figures in getattr(self, "node_launches", {}).items():
            if name == "node_pair_ns" and self.launches * self.rounds < 2:
                continue
            if figures and len(figures) == self.launches and all(value is not None for value, _ in figures):
                values = [value for value, _ in figures]
                self.perf_variables[name] = sn.make_performance_function(
                    median_over_launches(self, values, name, name), fingerprint.NODE_FIGURES[name][1])

    def before_the_verdict(self):  # after the rounds are pooled and the references chosen (Rounds)
        self.judge_the_node_first()

    def judge_the_node_first(self):
        """Node first (docs/references.md): where the case's node figures are past their references'
        bounds, the node moved, not the network: no figure of the case is judged (their references
        stay beside them, unbounded), and the case ends inconclusive naming the node and each figure
        (say_the_node_finding).  An earlier round of a case (Rounds) is judged by no reference.  A
        node figure its file does not reference is logged unjudged, also where references are
        required: a file made before they were is still a file of the network's references."""
        if self.is_dry_run() or not self.reference:
            return
        partition = self.current_partition.fullname
        reference = self._resolve_reference()

        def ref(name):
            try:
                return reference[f"{partition}:{name}"]
            except KeyError:
                return None
        with osext.change_dir(self.stagedir):
            measured = {name: sn.evaluate(self.perf_variables[name]) for name in fingerprint.NODE_FIGURES
                        if name in self.perf_variables and ref(name) is not None}
        hosts = {name: statistics.mode(host for _, host in self.node_launches[name]) for name in measured}
        finding = fingerprint.node_finding(measured, {name: ref(name) for name in measured}, hosts)
        # a file made before the node figures were referenced requires none of them (acceptance mode)
        unreferenced = {name: (0, None, None, fingerprint.NODE_FIGURES[name][1]) for name in fingerprint.NODE_FIGURES
                        if name in self.perf_variables and ref(name) is None and self.require_reference}
        if finding["past"]:
            self.node_finding = json.dumps(finding)
        if finding["past"] or unreferenced:
            self.reference = {partition: {**{name: (r[0], None, None, *r[3:]) if finding["past"] else r
                                             for name in self.perf_variables if (r := ref(name)) is not None},
                                          **unreferenced}}

    @run_after("performance")
    def say_the_node_finding(self):
        if self.node_finding:
            raise PerformanceError(f"{reframe_report.INCONCLUSIVE}: {fingerprint.node_said(json.loads(self.node_finding))}")

    def sweep_variables(self, quantities, lines):
        """The performance variables of the summary lines one run sweeps: lines holds
        (swept word or None, swept numbers, the fields that pick its line), e.g.
        ('isend-recv', {'msg_size': 4096}, {'pattern': 'isend-recv', 'ns_size': 4096});
        quantities {quantity: (field, unit)}.  Named by sweeps.name: max_isend-recv_4096."""
        named = {sweeps.name(quantity, word, **numbers): (field, unit, fields)
                 for word, numbers, fields in lines for quantity, (field, unit) in quantities.items()}
        return {name: sn.make_performance_function(self.result(field, where=fields, name=name), unit)
                for name, (field, unit, fields) in named.items()}

    @sanity_function
    def ran_and_validated(self):
        # a launch that failed on a node (a lost slurmd, say) is named first, node and all
        launch_errors = sn.extractall(r"^srun: error: (.*launch.*failed.*)$", self.stderr, 1)
        # ranks bound to a common core measure each other, not the network
        shared = sn.extractall(r"^# warning: (ranks \d+ and \d+ are bound to a common CPU.*)$", self.stdout, 1)
        return sn.all([
            sn.assert_false(launch_errors, msg="the launcher failed: {0}"),
            self.launched(),
            sn.assert_false(shared, msg="{0}"),
            sn.assert_eq(sn.count(sn.extractall(r"^# launch: \d+ of \d+, try \d+ of \d+$", self.stdout)),
                         self.launches if self.launch_loop else 0, msg="{0} of {1} launches ran"),
            sn.assert_found(r"^JB_RESULT ", self.stdout, msg="no JB_RESULT summary line"),
            # every launch validated; without the loop (the papers' findings, some with runs before
            # their main one), at least one
            sn.assert_eq(sn.count(sn.extractall(r"^# validate: every payload arrived intact$", self.stdout)),
                         self.launches, msg="payload validation passed in {0} of {1} launches")
            if self.launch_loop else
            sn.assert_found(r"every payload arrived intact", self.stdout, msg="payload validation did not pass"),
            self.transport_as_declared(),
            self.undisturbed(),
        ])


class PerCallCheck(JitterbenchCheck):
    """A benchmark that reports per-call MAX and AVG over tasks (us) for each pattern (or
    method) and message size it sweeps: halo, torus, all-to-all."""

    def per_size_variables(self, quantities, words, **fields):
        """The quantities ({quantity: (field, unit)}) of each word (pattern or method) and
        each size of msg_sizes, from the summary line of both that also holds fields: the
        record's swept word and size fields."""
        record = benchmarks.by_benchmark(self.benchmark)
        return self.sweep_variables(quantities, [
            (word, {"msg_size": size}, {**fields, **({record.swept: word} if word is not None else {}),
                                        record.size_field: size})
            for word in words for size in self.msg_sizes])

    def run_as_recorded(self, words, *more, first=()):
        """Runs jb-<benchmark> as its record states: the words it sweeps (--<swept> LIST; none
        where the record sweeps none) and msg_sizes (--size LIST), every payload validated, its
        JSON kept; the options first before those, more after; reads each quantity of the record
        for each word and size (max_<word>_<size>, ...).  The setup of the checks
        reframe_checks/records.py makes, and of a check of its own whose run differs from its
        record's only by options."""
        record = benchmarks.by_benchmark(self.benchmark)
        swept = ["--" + record.swept, listed(words)] if record.swept else []
        self.executable_opts = [*first, *swept, "--size", listed(self.msg_sizes), "--validate", *more, "--json",
                                f"{self.benchmark}.json"]
        self.keep_files = [f"{self.benchmark}.json"]
        self.perf_variables = self.per_size_variables(self.quantities(), words if record.swept else [None])
