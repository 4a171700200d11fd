"""The bases of jitterbench's ReFrame checks (reframe_checks/): the build fixture, the
shape of a job fitted to the partition, eager limits, references per system, and
performance variables per swept value.

Only ReFrame's loader imports this module: the node counts and tasks per node of
every check are read from the system ReFrame runs on when the classes are
defined (see MpiCheck).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import statistics

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
import reframe.utility.osext as osext
import reframe.utility.typecheck as typ
from reframe.core.builtins import fixture, parameter, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, ReframeError, SanityError

from .. import benchmarks, checkout, findings, fingerprint, references, reframe_report, roles, settings, sweeps, transports
from .load import disturbance, disturbed, load_samples, near, pair_ns
from .configuration import install_prefix, per_node_scale, scale


def partitions(feature="mpi"):
    """The partitions with feature of the system ReFrame runs on (--system, or the
    first whose hostnames match)."""
    return [p for p in rt.runtime().system.partitions if feature in p.features]


def partition_scale(extra, sizes, feature="mpi"):
    """The sizes the partitions with feature run at: sizes(extras[extra]) of each one
    (scale of max_nodes, per_node_scale of max_tasks_per_node), merged without duplicates."""
    return sorted({n for p in partitions(feature) for n in sizes(p.extras.get(extra, 1))})


def partition_distributions(feature="mpi"):
    """block, and cyclic where a partition can deal ranks round-robin: srun
    (--distribution) on more than one node.  The other launchers here place ranks
    block-wise only."""
    cyclic = any(p.launcher_type.registered_name == "srun" and p.extras.get("max_nodes", 1) > 1
                 for p in partitions(feature))
    return ["block", "cyclic"] if cyclic else ["block"]


def partition_rails(feature="mpi"):
    """1, and every rail count up to the most network devices a partition lists (extras
    rails: the devices of each rail, e.g. ["mlx5_0:1", "mlx5_1:1"])."""
    return sorted({1, *(n for p in partitions(feature) for n in range(1, len(p.extras.get("rails", [])) + 1))})


def first_environments(test):
    """The findings are the network's and the noise's, not one MPI's: each partition's first
    environment of those the test admits runs them (-S valid_prog_environs=... picks others)."""
    admitted = rt.valid_sysenv_comb(test.valid_systems, test.valid_prog_environs)
    return sorted({environs[0].name for environs in admitted.values() if environs})


# Environments that run an MPI over another of its transports (the virtual cluster's Open MPI
# over UCX, MPICH over OFI) carry this feature instead of `mpi`: the checks that prove a
# transport's path (eager limit, ping-pong, halo) take them; the whole suite runs over each
# MPI's own transport.
TRANSPORT_VARIANTS = ["+transport-variant"]


# The quick mode runs two tasks a node (ranks that share a node and ranks that do not,
# in one job), or one where the partitions hold no more (sp2, the torus).
QUICK_TASKS_PER_NODE = min(2, max(partition_scale("max_tasks_per_node", per_node_scale), default=1))
# It runs on two nodes, the network's first pair (one where a partition has one): a smoke test
# whose cases and their costs are the same at any site size (plan prints its cap,
# plan.QUICK_CAP_S).  A partition's whole size is the acceptance mode's: an all-to-all over
# every task of a large machine alone outlasts any smoke test.
QUICK_NODES = partition_scale("max_nodes", lambda most: [min(2, most)])
# The checks whose one run spans a whole partition (every node pair, the congestion study) run
# quick on at most this many of its nodes: enough to name one node among others.
QUICK_MACHINE_NODES = 8


def machine_scale(min_nodes, quick=False):
    """The node counts of a check that runs across a whole partition (at least min_nodes): each
    partition's size, and with quick, the quick mode's count (QUICK_MACHINE_NODES of them at most)."""
    return partition_scale("max_nodes", lambda most: sorted({min(most, QUICK_MACHINE_NODES), *(() if quick else (most,))})
                           if most >= min_nodes else [])


class JitterbenchBuild(rfm.CompileOnlyRegressionTest):
    """Builds src/ with CMake once per programming environment, or takes the
    binaries of an installed prefix (install_prefix: JB_PREFIX, or the Spack
    view of JB_SPACK_VIEWS).  With install_root, the build is also installed
    there, in <install_root>/<environ> (the GitLab pipeline's build stage)."""

    build_system = "CustomBuild"
    build_locally = True
    sourcesdir = None
    prefix_template = variable(str, value=install_prefix("JB_PREFIX"))
    install_root = variable(str, value="")

    @run_after("setup")
    def skip_an_mpi_the_views_lack(self):
        """Spack builds for the MPIs a system's definitions.yaml names, one view each: an
        environment whose view holds no jitterbench is an MPI not built there, skipped (and
        every check on it), not failed.  A JB_PREFIX is named by hand: missing, it fails."""
        if os.environ.get("JB_PREFIX") or not os.environ.get("JB_SPACK_VIEWS"):
            return
        view = self.prefix_template.format(environ=self.current_environ.name)
        self.skip_if(not os.access(os.path.join(view, "bin", "jb-halo"), os.X_OK),
                     f"no jitterbench in the Spack view {view}: spack.yaml built none for "
                     f"{self.current_environ.name} on this system")

    @run_before("compile")
    def cmake_or_prefix(self):
        if self.prefix_template:
            self.bindir = os.path.join(self.prefix_template.format(environ=self.current_environ.name), "bin")
            # quoted, as every value in these shell lines: a variable's content (JB_PREFIX,
            # JB_SPACK_VIEWS, a pipeline's form) is a path, never a command
            self.build_system.commands = [f"test -x {shlex.quote(os.path.join(self.bindir, 'jb-halo'))}"]
            return
        self.bindir = os.path.join(self.stagedir, "build")
        cc = shlex.quote(self.current_environ.cc)
        self.build_system.commands = [
            f'cmake -S {shlex.quote(str(checkout.sources()))} -B build -DMPI_C_COMPILER="$(command -v {cc})" -DBUILD_TESTING=OFF',
            "cmake --build build -j 2",
        ]
        if self.install_root:
            prefix = os.path.join(self.install_root, self.current_environ.name)
            self.build_system.commands.append(f"cmake --install build --prefix {shlex.quote(prefix)}")
            self.bindir = os.path.join(prefix, "bin")

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isdir(self.bindir), f"no binaries in {self.bindir}")


class SystemReferences(rfm.RegressionTestPlugin):
    """References from <system>.yaml through ReFrame's `$ref`: the machine's own (the main job's
    baseline), else reference_data's (checkout.reference_files).  With strict_references
    (acceptance mode) a missing file fails the test; a malformed one always does, naming the
    entry.  The check runs against its own entry of the file, with the variables the rules do
    not assert unbounded (roles.asserted_only: maxima over calls, percentiles this run's
    calls cannot bound), written into its stage folder; not_asserted names them.  A check whose
    run says what machine it ran on takes the first file whose fingerprint that run matches
    (take_the_machines_references); references_from names the file, or why none."""

    strict_references = variable(typ.Bool, value=False)
    not_asserted = variable(str, value="", loggable=True)
    references_from = variable(str, value="", loggable=True)

    @run_after("setup")
    def system_references(self):
        self.reference_docs = []
        for path in checkout.reference_files(self.current_system.name):
            try:
                self.reference_docs.append((path, references.load(path)))
            except references.ReferenceFileError as e:
                raise ReframeError(str(e)) from None
        if not self.reference_docs:
            if self.strict_references:
                raise ReframeError(f"no reference file for system '{self.current_system.name}' in "
                                   f"{' or '.join(map(str, checkout.reference_dirs()))}")
            self.references_from = "none: no file for this system"
            return
        self.reference = {"$ref": self.stage_references(*self.reference_docs[0])}

    def stage_references(self, path, doc):
        """Writes this check's entry of doc, asserted variables only, as the stage's references.yaml."""
        own, released = roles.asserted_only(doc, type(self).__name__, getattr(self, "calls", None) or None)
        self.not_asserted = ",".join(released)
        self.references_from = os.path.relpath(path, checkout.root()) if path.startswith(f"{checkout.root()}{os.sep}") else path
        mine = os.path.join(self.stagedir, "references.yaml")
        with open(mine, "w") as f:
            f.write(references.dump(own))
        return mine

    def take_the_machines_references(self, facts):
        """After the run: the first file whose fingerprint matches what the run said of its
        machine (facts: cpu, mpi_library, transport), else none, saying why (strict: a failure)."""
        if not self.reference_docs:
            return
        why = []
        for path, doc in self.reference_docs:
            differ = fingerprint.differences(doc.get("fingerprint"), facts, self.current_environ.name)
            if not differ:
                if path != self.reference_docs[0][0]:
                    self.stage_references(path, doc)
                    self.reference.resolve_external_references(self)
                return
            why.append(f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}: {'; '.join(differ)}")
        path, doc = self.reference_docs[0]
        self.stage_references(path, {"provenance": doc["provenance"]})  # no entry: nothing asserted
        self.reference.resolve_external_references(self)
        self.references_from = "none of this machine: " + " | ".join(why)
        if self.strict_references:
            raise ReframeError(f"no references of this machine: {' | '.join(why)}")


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


# the cases a session ran so far of the case each round belongs to (Rounds.pool_the_rounds):
# {(case, partition, environ): {round: {variable: [values]}}}.  A ReFrame session runs every test's
# hooks in its one process, so the rounds of a case meet here.
_ROUNDS_RUN = {}


class Rounds(rfm.RegressionTestPlugin):
    """The suite in rounds (docs/references.md, "Launches"): the modes run every case several times
    in one session (ReFrame's --repeat, settings.ROUNDS), in a random order, so a case's launches
    lie apart in time, not within one slow episode of the machine.  Each round is a test case of
    its own; the last of a case's rounds to run holds the case's figure (rounds_pooled = rounds):
    each performance variable the median over every launch of every round (over the rounds' own
    values where a variable is no launch's: a ratio of medians, OSU's one launch a round), judged
    against the references, and launch_values holds them all in round order.  An earlier round
    logs its own values, judged by no reference: readers take the last round's
    (reframe_report.last_attempts, runs.read_perflog).  A check whose verdict one launch decides
    (over_launches False) runs in the first round only."""

    rounds = variable(int, value=1, loggable=True)
    # the rounds this case's values are the median over: its own, or all where it is the case's last
    rounds_pooled = variable(int, value=1, loggable=True)

    @run_after("init")
    def count_the_rounds(self):
        space = type(self).param_space
        self.rounds = len(space[reframe_report.ROUND]) if reframe_report.ROUND in space.params else 1
        if not getattr(self, "over_launches", True) and self.rounds > 1:
            self.skip_if(getattr(self, reframe_report.ROUND) > 0, "one launch decides this check: it runs in the first round only")
            self.rounds = 1

    @run_before("performance", always_last=True)  # after the references are chosen (SystemReferences)
    def pool_the_rounds(self):
        if self.is_dry_run():
            return
        if self.rounds == 1:
            self.before_the_verdict()
            return
        with osext.change_dir(self.stagedir):  # where ReFrame evaluates them: the output's names are relative
            own = {name: sn.evaluate(function) for name, function in self.perf_variables.items()}
        launches = json.loads(getattr(self, "launch_values", "") or "{}")
        case = (reframe_report.case_name(self.display_name), self.current_partition.fullname, self.current_environ.name)
        run = _ROUNDS_RUN.setdefault(case, {})
        run[getattr(self, reframe_report.ROUND)] = ({name: launches.get(name, [value]) for name, value in own.items()},
                                                    json.loads(getattr(self, "launch_pair_ns", "") or "[]"))
        if len(run) < self.rounds:
            self.reference = {}  # an earlier round: its own values are logged, never judged
            return
        del _ROUNDS_RUN[case]
        every = {name: [v for r in sorted(run) for v in run[r][0][name]] for name in own}
        if hasattr(self, "launch_values"):
            self.launch_values = json.dumps(every, separators=(",", ":"))
        pairs = [p for r in sorted(run) for p in run[r][1]]
        if hasattr(self, "launch_pair_ns"):
            self.launch_pair_ns = json.dumps(pairs)
        kept = self.near_launches(pairs) if hasattr(self, "near_launches") else []
        self.perf_variables = {name: sn.make_performance_function(sn.defer(_median_of_near(self, values, kept)),
                                                                  self.perf_variables[name].unit)
                               for name, values in every.items()}
        self.rounds_pooled = self.rounds
        self.before_the_verdict()

    def before_the_verdict(self):
        """A check's last word on the case's figure, once its rounds are pooled, before ReFrame judges
        it: called here, after the pooling, as ReFrame orders no hook after another's always-last one
        (JitterbenchCheck judges its node first).  An earlier round, judged by nothing, has none."""


class MpiCheck(rfm.RunOnlyRegressionTest, SystemReferences, Rounds):
    """What every MPI check here shares: a job of `nodes` x `tasks_per_node` tasks
    dealt by `distribution`, run only on the partitions it fits, and references
    from reference_data/<system>.yaml (SystemReferences)."""

    valid_systems = ["+mpi"]
    valid_prog_environs = ["+mpi"]
    # Node counts, tasks per node and distributions come from the partitions (extras
    # max_nodes and max_tasks_per_node, the launcher), read from the configuration when the
    # class is defined: ReFrame fixes a test's parameters then, and parameterises from the
    # system the same way in its own reframe.utility.find_modules.  So a 120-node partition
    # runs 1, 2, 4, ..., 64 and 120 nodes, and the listing names real counts; a symbolic
    # scale resolved in a setup hook instead would list cases named by index, some never
    # run.  -P nodes=N (or tasks_per_node=N) picks any other.
    nodes = parameter(partition_scale("max_nodes", scale), type=int, loggable=True)
    tasks_per_node = parameter(partition_scale("max_tasks_per_node", per_node_scale), type=int, loggable=True)
    # how the launcher deals ranks to nodes: block fills a node before the next,
    # cyclic deals them round-robin (which ranks share a node decides which pairs cross)
    distribution = parameter(partition_distributions(), type=str, loggable=True)
    # what the job asked of the launcher (bind_ranks) and what the benchmark found ('# binding:')
    binding_asked = variable(str, value="none", loggable=True)
    binding = variable(str, value="", loggable=True)
    cpu_sets = variable(str, value="", loggable=True)  # node:CPUs of the first 64 ranks ('# cpu_sets:')
    # the network devices a job may use: the first `rails` of the partition's (extras rails),
    # through the variable the environment's transport declares for them (a second switch
    # plane, as Hein's two, or today's second adapter)
    rails = parameter(partition_rails(), type=int, loggable=True)
    # what the MPI itself said it used, per node (transports.account), and the devices the
    # benchmark found on each node ('# network:')
    transport = variable(str, value="", loggable=True)
    network = variable(str, value="", loggable=True)
    # a hung MPI (a lost node, a finalize that never returns) fails its check, not the run
    time_limit = "10m"
    # more tasks on a node than it has cores, where the partition allows it (see overcommits)
    overcommit_ok = False
    # the variants the quick mode runs, {parameter: values}: the init hook tags them `quick`
    quick_variant = {"nodes": QUICK_NODES, "tasks_per_node": [QUICK_TASKS_PER_NODE], "distribution": ["block"],
                     "rails": [1]}

    def fits(self, partition):
        """Whether this variant's job can run on partition."""
        extras = partition.extras
        if self.nodes > extras.get("max_nodes", 1) or (self.tasks_per_node > extras.get("max_tasks_per_node", 1)
                                                       and not self.overcommits(partition)):
            return False
        if self.rails > 1 and (self.nodes < 2 or self.rails > len(extras.get("rails", []))):
            return False  # a second rail carries nothing within a node
        if self.nodes * self.tasks_per_node < 2:  # one task sends its messages to itself: no communication
            return False
        # on one node every distribution is block; launchers other than srun place ranks block-wise only
        return self.distribution == "block" or (self.nodes > 1 and partition.launcher_type.registered_name == "srun")

    def overcommits(self, partition):
        """Whether this check places more tasks on a node than it has cores: only a check that
        measures the links, not the cores (overcommit_ok), and only where the partition's
        rate-limited links decide the time (extras overcommit: the emulated torus)."""
        return (self.overcommit_ok and partition.extras.get("overcommit", False)
                and self.tasks_per_node > partition.extras.get("max_tasks_per_node", 1))

    def takes(self, partition, environ):
        """Whether this variant runs with environ on partition: with more than one rail,
        only where the environment can name that many devices of its network."""
        devices, most = environ.extras.get("devices_vars", {}), environ.extras.get("max_devices", {})
        return self.rails == 1 or all(f in devices and self.rails <= most.get(f, self.rails)
                                      for f in self.fabrics_used(partition) if f != "shm")

    def fabrics_used(self, partition):
        """The partition's fabrics (extras transports) this job's messages cross: shared memory
        where a node holds two tasks, the others where the job spans nodes."""
        return [f for f in partition.extras.get("transports", ["shm"])
                if (self.tasks_per_node > 1 if f == "shm" else self.nodes > 1)]

    @run_after("init")
    def only_where_it_fits(self):
        """The partitions (of those the class's specs admit, by ReFrame's own matching)
        that the job fits and the environments it takes there, by name: so a listing,
        `jitterbench plan` and a run hold the same cases.  Where partitions take different
        environments, a setup hook still skips the combinations they do not."""
        admitted = rt.valid_sysenv_comb(self.valid_systems, self.valid_prog_environs)
        fitting = {p: [e.name for e in environs if self.takes(p, e)]
                   for p, environs in admitted.items() if self.fits(p)}
        self.valid_systems = [p.fullname for p, environs in fitting.items() if environs]
        self.valid_prog_environs = sorted({name for environs in fitting.values() for name in environs})

    @run_after("init")
    def tag_the_quick_variant(self):
        if all(getattr(self, name) in values for name, values in self.quick_variant.items()):
            self.tags = {*self.tags, "quick"}

    @run_after("setup")
    def shape_the_job(self):
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node
        if self.overcommits(self.current_partition):
            # sbatch(1), srun(1): more than one task per CPU.  Slurm refuses --ntasks-per-node above
            # the node's CPUs even so: the job asks for its nodes, and block distribution fills them
            self.num_tasks_per_node = None
            self.job.options += ["--overcommit", f"--nodes={self.nodes}"]
            if self.job.launcher.registered_name == "srun":
                self.job.launcher.options += ["--overcommit"]
        if self.job.launcher.registered_name == "srun":
            # a rank that dies ends the job step at once: its peers would wait on it until the time limit
            self.job.launcher.options += [f"--distribution={self.distribution}", "--kill-on-bad-exit=1"]

    @run_after("setup")
    def bind_ranks(self):
        """Each rank to a core of its own, as the halo study binds its tasks, by the
        launcher's own means: srun's --cpu-bind=cores (srun(1)), else the variables the
        environment's MPI declares (extras bind_vars).  Only where the partition's cores
        are its job's own (extras binding, default 'cores'; the virtual cluster's nodes
        share theirs) and its nodes hold as many cores as this job has tasks there."""
        extras = self.current_partition.extras
        if extras.get("binding", "cores") != "cores" or self.tasks_per_node > extras.get("max_tasks_per_node", 1):
            return
        if self.job.launcher.registered_name == "srun":
            self.job.launcher.options += ["--cpu-bind=cores"]
        elif self.current_environ.extras.get("bind_vars"):
            self.env_vars.update(self.current_environ.extras["bind_vars"])
        else:
            return
        self.binding_asked = "cores"

    @run_after("setup")
    def restrict_to_rails(self):
        rails = self.current_partition.extras.get("rails")
        if not rails or self.nodes < 2:
            return
        devices = ",".join(rails[:self.rails])
        names = self.current_environ.extras.get("devices_vars", {})
        for fabric in self.fabrics_used(self.current_partition):
            if fabric in names:
                self.env_vars[names[fabric]] = devices

    @run_after("setup")
    def ask_for_the_transport_account(self):
        self.env_vars.update(transports.ACCOUNT_VARS.get(self.current_environ.extras.get("family"), {}))

    @run_before("sanity")
    def read_the_transport_account(self):
        """The MPI's own account of its transport per node, and the fabrics whose declared
        transport (the environment's extras transports) it contradicts."""
        self.transport_problems = []
        family = self.current_environ.extras.get("family")
        if self.is_dry_run() or family not in transports.ACCOUNT_VARS:
            return
        text = ""
        for name in (self.stdout.evaluate(), self.stderr.evaluate()):
            path = os.path.join(self.stagedir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    text += f.read()
        first = re.search(r"^# node_list: ([^,\s]+)", text, re.M)
        first_node = first[1] if first else (self.job.nodelist or ["rank 0"])[0]
        accounts = transports.account(family, text, first_node)
        self.transport = transports.summary(accounts)
        declared = self.current_environ.extras.get("transports", {})
        for fabric in self.fabrics_used(self.current_partition):
            if fabric not in declared:
                continue
            wanted = transports.TRANSPORTS[declared[fabric]]
            if wanted.account and not accounts:
                self.transport_problems.append(f"{family} gave no account of its transport ({fabric})")
            for node, said in transports.mismatches(wanted, accounts).items():
                self.transport_problems.append(f"{node}: {family} used '{said}' for {fabric}, not the declared "
                                               f"{wanted.name} (/{wanted.account}/)")

    def transport_as_declared(self):
        return sn.assert_false(self.transport_problems, msg="; ".join(self.transport_problems[:3]))

    def launch_command(self):
        """The job's launcher line (srun ..., jb-mpirun -np N), for a second program run in the
        same job before the main one (prerun_cmds), on the same nodes and tasks; without the
        launch loop that the main program's line may have (launch_several_times)."""
        # ReFrame gives the job its tasks only as it writes the script: the launch needs them now
        self.job.num_tasks, self.job.num_tasks_per_node = self.num_tasks, self.num_tasks_per_node
        launcher = self.job.launcher
        modifier, launcher.modifier = launcher.modifier, ""
        try:
            return " ".join(launcher.run_command(self.job).split())
        finally:
            launcher.modifier = modifier


def listed(values):
    """A list option's value: 1024,16384."""
    return ",".join(map(str, values))


# the launch loop a case's job runs its benchmark through (JitterbenchCheck.launch_several_times)
LAUNCH_LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launches.sh")


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


@sn.deferrable
def _median_over_launches(test, values, name, what):
    """The median of values, one per launch of test; every launch's value is kept in the test's
    launch_values under name (set as the value is evaluated: a check that fails its performance
    still logs what each launch measured)."""
    if len(values) != test.launches:
        raise SanityError(f"{len(values)} JB_RESULT lines hold {what}: expected one per launch ({test.launches})")
    kept = json.loads(test.launch_values or "{}")
    kept[name] = values
    test.launch_values = json.dumps(kept, separators=(",", ":"))
    return _median_of_near(test, values, test.near_launches(json.loads(test.launch_pair_ns or "[]")))


def _median_of_near(test, values, kept):
    """The median over the launches kept (JitterbenchCheck.near_launches, one per launch); a
    variable with one value a round rather than a launch (a ratio of medians) takes them all.
    test.launches_set_aside counts the launches left out."""
    if len(kept) != len(values):
        return statistics.median(values)
    test.launches_set_aside = kept.count(False)
    return statistics.median(v for v, k in zip(values, kept) if k)


class JitterbenchCheck(MpiCheck):
    """A jitterbench benchmark: built by the fixture, eager limit as a parameter, and
    what the benchmark sweeps in one run (msg_sizes, ...) as performance variables.

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
                    _median_over_launches(self, values, name, name), fingerprint.NODE_FIGURES[name][1])

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
        return _median_over_launches(self, sn.extractall(rf"^JB_RESULT{select}.*\s{re.escape(key)}=(\S+)",
                                                         self.stdout, 1, conv), name or key, f"{key} for {what}")

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
