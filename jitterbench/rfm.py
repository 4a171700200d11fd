"""ReFrame support shared by systems/ and reframe_checks/: a launcher that runs
each programming environment's own mpirun, the launchers and IBM PE of the papers'
machines, the build fixture, and the base of every jitterbench check (eager
limit, references per system, perflog fields).
"""
from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import register_launcher
from reframe.core.builtins import (fixture, parameter, performance_function, run_after, run_before,
                                   sanity_function, variable)
from reframe.core.exceptions import ReframeError
from reframe.core.launchers import JobLauncher

from . import references
from .mpi import MPI


def _skip_the_env_vars_alias_warning():
    """ReFrame 4.10 reads the default of its deprecated `variables` alias (of
    env_vars) for every test instance it creates, and each read walks the whole
    Python stack (inspect.stack) to place a warning that is never shown: about
    10 ms an instance.  HaloCheck alone has 4,320 variants before -P narrows
    them (and -P adds more), so loading the checks took minutes of every run.
    Only that one message is dropped; every other deprecation still warns."""
    import reframe.core.fields
    import reframe.core.variables
    import reframe.core.warnings

    warn = reframe.core.warnings.user_deprecation_warning

    def warn_unless_alias(message, *args, **kwargs):
        if not message.startswith("the use of 'variables' is deprecated"):
            warn(message, *args, **kwargs)

    for module in (reframe.core.fields, reframe.core.variables):  # each imported the function by name
        module.user_deprecation_warning = warn_unless_alias


_skip_the_env_vars_alias_warning()

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(REPO, "src")
# empty counts as unset: CI variables are often declared empty
REFERENCE_DIR = os.environ.get("JB_REFERENCE_DIR") or os.path.join(REPO, "reference_data")


def install_prefix(variable):
    """Where a programming environment's installed binaries are, {environ} standing
    for its name: the variable (JB_PREFIX, JB_OSU_PREFIX) if set, else that
    environment's view of the Spack environment when JB_SPACK_VIEWS names the
    views' folder (spack.yaml names one view per MPI after the environments),
    else '' (build with CMake, or look on PATH)."""
    views = os.environ.get("JB_SPACK_VIEWS", "")
    return os.environ.get(variable) or (os.path.join(views, "{environ}") if views else "")


def environment(flavour, system, **env):
    """A ReFrame programming environment for one MPI on one system: the MPI's own
    variables plus the system's (env); PATH entries go in front of the job's PATH."""
    env_vars = {**flavour.env, **env}
    if "PATH" in env_vars:
        env_vars["PATH"] = f"{env_vars['PATH']}:$PATH"
    return {
        "name": flavour.name,
        "target_systems": [system],
        "features": ["mpi", flavour.name],
        "cc": flavour.mpicc,
        "env_vars": [[k, v] for k, v in env_vars.items()],
        "extras": {"eager_vars": flavour.eager_vars},
    }


@register_launcher("jb-mpirun")
class EnvironmentMpirun(JobLauncher):
    """`$JB_MPIRUN -np N`: the launcher named by the programming environment.

    A partition has one launcher, but Open MPI, MPICH and Intel MPI on one
    machine each need their own mpirun; every environment sets JB_MPIRUN.
    """

    def command(self, job):
        return ["${JB_MPIRUN:?the programming environment sets no JB_MPIRUN}", "-np", str(job.num_tasks)]


# ---- the papers' machines (systems/hpce.py ... xt3.py): IBM PE, and launchers ReFrame 4.10 lacks

# IBM Parallel Environment, the MPI of the papers' IBM machines (hpce, c1a, hpcx, sp2):
# mpcc_r compiles and links MPI programs (PE Hitchhiker's Guide, "What happens when I
# compile my applications?"), poe launches, and MP_EAGER_LIMIT, the variable papers 000
# and 002 set, is PE's one protocol threshold for all MPI messages (MPI Programming and
# Subroutine Reference, appendix J), so it serves every transport.
IBM_PE = MPI(name="ibm-pe", mpicc="mpcc_r", mpirun="poe",
             eager_vars={"shm": "MP_EAGER_LIMIT", "switch": "MP_EAGER_LIMIT"})


@register_launcher("poe")
class PoeLauncher(JobLauncher):
    """IBM Parallel Environment's poe.  The job's shape goes in as POE's own variables
    for this one command, `MP_PROCS=N MP_NODES=M MP_TASKS_PER_NODE=K poe prog`: each is
    the variable a poe flag (-procs, -nodes, -tasks_per_node) overrides (poe man page,
    POE 3.1; Slurm's launch/poe plugin sets the same three), and unlike the flags they
    need not follow the program's name (HDF5's config/ibm-aix runs its tests with
    "MP_PROCS=3 MP_TASKS_PER_NODE=3 poe").  POE passes the job's environment on to
    the tasks (GASNet's gasnetrun_mpi.pl), MP_EAGER_LIMIT with it."""

    def command(self, job):
        shape = [f"MP_PROCS={job.num_tasks}"]
        if job.num_tasks_per_node:
            shape += [f"MP_NODES={job.num_tasks // job.num_tasks_per_node}",
                      f"MP_TASKS_PER_NODE={job.num_tasks_per_node}"]
        return [*shape, "poe"]


@register_launcher("bgp-mpirun")
class BlueGenePMpirun(JobLauncher):
    """Blue Gene/P's mpirun: -np ranks, -mode SMP, DUAL or VN for 1, 2 or 4 ranks per
    node (`mpirun -h` of ANL's Surveyor, in GASNet's mpi-conduit/contrib/mpirun_h), and
    -env_all to export the job's environment, DCMF_EAGER with it: BG/P's mpirun passes
    a variable only when told (-env, -exp_env, -env_all: the "BG/P mpirun" column of
    jedbrown/bgq-driver's hlcs/src/runjob/docs/html/Documentation.h; GASNet's
    gasnetrun_mpi.pl)."""

    MODES = {1: "SMP", 2: "DUAL", 4: "VN"}

    def command(self, job):
        per_node = job.num_tasks_per_node or 1
        if per_node not in self.MODES:
            raise ReframeError(f"Blue Gene/P runs 1, 2 or 4 tasks per node, not {per_node}")
        return ["mpirun", "-np", str(job.num_tasks), "-mode", self.MODES[per_node], "-env_all"]


@register_launcher("yod")
class YodLauncher(JobLauncher):
    """Catamount's yod on the Cray XT3: `yod -np N`, with -VN (virtual node mode) to run
    a task on each of a node's two cores (GASNet's cross-configure-crayxt3; "yod -VN -np"
    in CLM's Cray XT test scripts).  Catamount passes the environment on to the tasks
    (GASNet's gasnetrun_mpi.pl)."""

    def command(self, job):
        virtual_nodes = ["-VN"] if (job.num_tasks_per_node or 1) > 1 else []
        return ["yod", *virtual_nodes, "-np", str(job.num_tasks)]


def paper_system(name, descr, environs, partition):
    """A machine of the papers (../shared/papers): selected only by --system NAME, its
    hostnames never match; one partition running environs, one job at a time.  A
    partition with extras["topology"] gets the `topology` feature (ContentionCheck)."""
    topology = ["topology"] if "topology" in partition.get("extras", {}) else []
    return {
        "name": name,
        "descr": descr,
        "hostnames": ["^never-selected-by-hostname$"],
        "modules_system": "nomod",
        "partitions": [{"environs": [e["name"] for e in environs], "features": ["mpi", *topology], "max_jobs": 1,
                        **partition}],
    }


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

    @run_before("compile")
    def cmake_or_prefix(self):
        if self.prefix_template:
            self.bindir = os.path.join(self.prefix_template.format(environ=self.current_environ.name), "bin")
            self.build_system.commands = [f"test -x {self.bindir}/jb-halo"]
            return
        self.bindir = os.path.join(self.stagedir, "build")
        cc = self.current_environ.cc
        self.build_system.commands = [
            f'cmake -S {SOURCES} -B build -DMPI_C_COMPILER="$(command -v {cc})" -DBUILD_TESTING=OFF',
            "cmake --build build -j 2",
        ]
        if self.install_root:
            prefix = os.path.join(self.install_root, self.current_environ.name)
            self.build_system.commands.append(f"cmake --install build --prefix {prefix}")
            self.bindir = os.path.join(prefix, "bin")

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isdir(self.bindir), f"no binaries in {self.bindir}")


class MpiCheck(rfm.RunOnlyRegressionTest):
    """What every MPI check here shares: nodes and tasks per node fitted to
    the partition (extras max_nodes, max_tasks_per_node), and references
    from reference_data/<system>.yaml through ReFrame's `$ref`.  With
    strict_references (acceptance mode) a missing file fails the test; a
    malformed one always does, naming the entry."""

    valid_systems = ["+mpi"]
    valid_prog_environs = ["+mpi"]
    nodes = parameter([1, 2, 3, 4, 8, 16, 32, 64, 128], type=int, loggable=True)
    tasks_per_node = parameter([2, 4, 16], type=int, loggable=True)
    # how the launcher deals ranks to nodes: block fills a node before the next,
    # cyclic deals them round-robin (which ranks share a node decides which pairs cross)
    distribution = parameter(["block", "cyclic"], type=str, loggable=True)
    strict_references = variable(typ.Bool, value=False)
    # a hung MPI (a lost node, a finalize that never returns) fails its check, not the run
    time_limit = "10m"

    @run_after("setup")
    def fit_partition(self):
        extras = self.current_partition.extras
        self.skip_if(self.nodes > extras.get("max_nodes", 1),
                     f"{self.current_partition.fullname} has {extras.get('max_nodes', 1)} node(s)")
        self.skip_if(self.tasks_per_node > extras.get("max_tasks_per_node", self.tasks_per_node),
                     f"{self.current_partition.fullname} runs at most "
                     f"{extras.get('max_tasks_per_node')} tasks per node")
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node

    @run_after("setup")
    def distribute(self):
        """srun takes the distribution as --distribution; the other launchers keep
        their default, block, so only block runs there.  On one node both are one."""
        self.skip_if(self.distribution != "block" and self.nodes == 1, "on one node every distribution is block")
        launcher = self.job.launcher.registered_name
        if launcher == "srun":
            # a rank that dies ends the job step at once: its peers would wait on it until the time limit
            self.job.launcher.options += [f"--distribution={self.distribution}", "--kill-on-bad-exit=1"]
        else:
            self.skip_if(self.distribution != "block", f"the {launcher} launcher here places ranks block-wise only")

    @run_after("setup")
    def system_references(self):
        path = os.path.join(REFERENCE_DIR, f"{self.current_system.name}.yaml")
        if not os.path.exists(path):
            if self.strict_references:
                raise ReframeError(f"no reference file for system '{self.current_system.name}': {path}")
            return
        try:
            references.load(path)
        except references.ReferenceFileError as e:
            raise ReframeError(str(e)) from None
        self.reference = {"$ref": path}


class JitterbenchCheck(MpiCheck):
    """A jitterbench benchmark: built by the fixture, eager limit as a parameter.

    eager_limit 'default' leaves the MPI alone; a number of bytes is set
    through the variable the environment declares (extras 'eager_vars') for
    each transport the job uses: shared memory, and the partition's network
    (extras 'transports': tcp, a switch, a torus) when it spans nodes.
    eager_var logs the names set.
    """

    tags = {"jitterbench", "quick", "acceptance"}
    benchmark = variable(str)
    eager_limit = parameter(["default", "2048", "8192", "32768", "65536"], type=str, loggable=True)
    eager_var = variable(str, value="", loggable=True)
    mpi_library = variable(str, value="", loggable=True)
    node_list = variable(str, value="", loggable=True)  # the nodes the benchmark itself ran on
    # timed calls (cycles) per run; 0 keeps the benchmark's own default.  The quick
    # mode sets fewer with -S calls=N.
    calls = variable(int, value=0, loggable=True)
    # the field=value that picks a benchmark's summary line where it writes several
    result_line = variable(str, value="")
    build = fixture(JitterbenchBuild, scope="environment")

    @run_after("setup")
    def set_executable(self):
        self.executable = os.path.join(self.build.bindir, f"jb-{self.benchmark}")

    @run_before("run")
    def set_calls(self):
        if self.calls:
            self.executable_opts += ["--calls", str(self.calls)]

    def transports(self):
        """The transports this job's messages use: shared memory always, each of the
        partition's others (tcp, a switch, a torus) when the job spans nodes (nodes 0:
        all of the partition's, as ContentionCheck runs)."""
        extras = self.current_partition.extras
        spans_nodes = (self.nodes or extras.get("max_nodes", 1)) > 1
        return [t for t in extras.get("transports", ["shm"]) if t == "shm" or spans_nodes]

    @run_after("setup")
    def set_eager_limit(self):
        if self.eager_limit == "default":
            return
        names = self.current_environ.extras.get("eager_vars", {})
        missing = [t for t in self.transports() if t not in names]
        self.skip_if(bool(missing), f"{self.current_environ.name} declares no eager-limit variable for "
                                    f"{', '.join(missing)}")
        variables = sorted({names[t] for t in self.transports()})
        for name in variables:
            self.env_vars[name] = self.eager_limit
        self.eager_var = ",".join(variables)

    @run_before("performance")
    def record_mpi_library_and_nodes(self):
        if self.is_dry_run():  # --dry-run writes the job script and runs nothing: no output to read
            return
        stdout = os.path.join(self.stagedir, self.stdout.evaluate())
        self.mpi_library = sn.evaluate(sn.extractsingle(r"^# mpi_library: (.*)$", stdout, 1)).strip()
        self.node_list = sn.evaluate(sn.extractsingle(r"^# node_list: (.*)$", stdout, 1)).strip()

    def result(self, key, conv=float, where=""):
        """A field of the benchmark's JB_RESULT summary line (the first one
        that also holds the field=value pair `where`, if given)."""
        line = rf"^JB_RESULT (?=.*\b{where}\b)" if where else r"^JB_RESULT "
        return sn.extractsingle(rf"{line}.*\b{key}=(\S+)", self.stdout, 1, conv)

    @sanity_function
    def ran_and_validated(self):
        # a launch that failed on a node (a lost slurmd, say) is named first, node and all
        launch_errors = sn.extractall(r"^srun: error: (.*launch.*failed.*)$", self.stderr, 1)
        return sn.all([
            sn.assert_false(launch_errors, msg="the launcher failed: {0}"),
            sn.assert_found(r"^JB_RESULT ", self.stdout, msg="no JB_RESULT summary line"),
            sn.assert_found(r"every payload arrived intact", self.stdout, msg="payload validation did not pass"),
        ])


class PerCallCheck(JitterbenchCheck):
    """A benchmark that reports per-call MAX and AVG over tasks (us): halo, torus, all-to-all."""

    @performance_function("us")
    def max(self):
        return self.result("max_us", where=self.result_line)

    @performance_function("us")
    def avg(self):
        return self.result("avg_us", where=self.result_line)
