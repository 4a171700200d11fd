"""perftest (linux-rdma/perftest), run-only: the verbs' own latency and bandwidth between
two nodes, beneath the MPI's numbers.  The studies measured the lower-level primitive first:
an MPI latency far above ib_send_lat's is the MPI's (or its transport's) cost, not the
network's.

A partition with RDMA adapters lists them in extras rdma_devices (["mlx5_0"], or
"mlx5_0:1" with the port); each check runs on one of them (`adapter`).  perftest comes from
JB_PERFTEST_PREFIX (an install prefix), else the `rdma` view of JB_SPACK_VIEWS (spack.yaml
builds perftest there on a site's system) or PATH.  Where the partition lists no adapter, or
perftest is not found, the checks are skipped and say which.
"""
import os
import shlex
import shutil

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from jitterbench import perftest, sweeps
from jitterbench.harness.rounds import Rounds
from jitterbench.harness.system_references import SystemReferences

# the statistics perftest's latency tests give over their iterations (half the round trip):
# the median (its 't_typical'), mean, 99th percentile and maximum
LATENCY = {"p50": "t_typical_us", "avg": "t_avg_us", "p99": "p99_us", "max": "t_max_us"}
# program: (performance variables {stem: column}, unit, sizes reported)
BENCHMARKS = {
    "ib_send_lat": (LATENCY, "us", [8, 4096, 65536]),
    "ib_read_lat": (LATENCY, "us", [8, 4096, 65536]),
    "ib_write_bw": ({"bandwidth": "bandwidth_mb_s"}, "MB/s", [4096, 65536, 1048576]),
}


def most_adapters():
    return max([len(p.extras.get("rdma_devices", [])) for p in rt.runtime().system.partitions] + [1])


def find_perftest(program):
    """The path of a perftest program, or None, and where it was looked for: JB_PERFTEST_PREFIX
    alone when set; else the Spack environment's `rdma` view, then PATH (a system whose
    perftest is its own, as local's from Debian, has no such view)."""
    if os.environ.get("JB_PERFTEST_PREFIX"):
        folder = os.path.join(os.environ["JB_PERFTEST_PREFIX"], "bin")
        path = os.path.join(folder, program)
        return (path if os.access(path, os.X_OK) else None), folder
    if os.environ.get("JB_SPACK_VIEWS"):
        path = os.path.join(os.environ["JB_SPACK_VIEWS"], "rdma", "bin", program)
        if os.access(path, os.X_OK):
            return path, os.path.dirname(path)
    return shutil.which(program), "PATH"


@sn.deferrable
def perftest_value(stdout, column, size):
    with open(stdout) as f:
        return perftest.value_at(f.read(), column, size)


@rfm.simple_test
class PerftestCheck(rfm.RunOnlyRegressionTest, SystemReferences, Rounds):
    descr = "perftest: the verbs' own latency and bandwidth, beneath the MPI's"
    tags = {"perftest", "acceptance", "quick"}
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    benchmark = parameter(list(BENCHMARKS), type=str, loggable=True)
    # two nodes through the switch; one node loops back through its adapter
    nodes = parameter([1, 2], type=int, loggable=True)
    # which of the partition's rdma_devices: a site with two rails checks each adapter
    adapter = parameter(range(most_adapters()), type=int, loggable=True)
    # more of perftest's options for a site's network (-x 3 for a RoCE GID index, -R for rdma_cm)
    perftest_options = variable(typ.List[str], value=[])
    device = variable(str, value="", loggable=True)
    # the device, link, connection and MTU perftest reports, and its version
    rdma = variable(str, value="", loggable=True)
    sourcesdir = "perftest"
    time_limit = "10m"

    @run_after("init")
    def one_environment_where_it_fits(self):
        """perftest uses no MPI: one run per partition (with its first environment), on the
        partitions with that many nodes and adapters.  Adapter 0 stays on every partition,
        to say there why nothing ran."""
        admitted = rt.valid_sysenv_comb(self.valid_systems, self.valid_prog_environs)
        fitting = {p: environs[0].name for p, environs in admitted.items()
                   if environs and self.nodes <= p.extras.get("max_nodes", 1)
                   and (self.adapter == 0 or self.adapter < len(p.extras.get("rdma_devices", [])))}
        self.valid_systems = [p.fullname for p in fitting]
        self.valid_prog_environs = sorted(set(fitting.values()))

    @run_after("setup")
    def locate(self):
        devices = self.current_partition.extras.get("rdma_devices", [])
        self.skip_if(not devices, f"no RDMA device: partition {self.current_partition.fullname} lists none "
                                  f"(extras rdma_devices)")
        path, where = find_perftest(self.benchmark)
        self.skip_if(path is None, f"perftest not found: no {self.benchmark} in {where}")
        self.device = devices[self.adapter]
        name, _, port = self.device.partition(":")
        self.executable = "bash"
        # ReFrame writes the options into the job's shell line as they are: the path (JB_PERFTEST_PREFIX's,
        # or a Spack view's) and the device (the site's partition) quoted, as every path there
        self.executable_opts = ["pair.sh", shlex.quote(path), "-a", "-F", "-d", shlex.quote(name),
                                *(["-i", shlex.quote(port)] if port else []), *self.perftest_options]
        self.num_tasks = self.nodes
        self.num_tasks_per_node = 1

    @run_after("setup")
    def performance_variables(self):
        columns, unit, sizes = BENCHMARKS[self.benchmark]
        self.perf_variables = {
            sweeps.name(stem, msg_size=size): sn.make_performance_function(
                perftest_value(self.stdout, column, size), unit)
            for stem, column in columns.items() for size in sizes
        }

    @run_before("sanity")
    def read_the_output(self):
        self.output = ""
        path = os.path.join(self.stagedir, self.stdout.evaluate())
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                self.output = f.read()

    @sanity_function
    def perftest_table(self):
        # perftest's own first word on what went wrong: not a comment of pair.sh, not a rule
        said = [line.strip() for line in self.output.splitlines() if line.strip()
                and not line.strip().startswith(("#", "-"))]
        return sn.assert_found(r"^\s*#bytes", self.stdout, msg=f"{self.benchmark} printed no result table"
                                                               f"{': ' + said[0] if said else ''}")

    @run_before("performance")
    def what_it_ran_on(self):
        version = [line.split(":", 1)[1].strip() for line in self.output.splitlines() if line.startswith("# perftest:")]
        self.rdma = " ".join([perftest.describe(self.output), *(f"perftest {v}" for v in version[:1])])
