"""OSU Micro-Benchmarks, run-only, beside jitterbench's own numbers.

OSU comes from the site: JB_OSU_PREFIX (an install prefix, {environ} stands
for the programming environment), the Spack view of JB_SPACK_VIEWS, or PATH.  Where
it is not found the checks are skipped and say so.  Values at several sizes
are performance variables (latency_8, bw_65536, ...), referenced like every
other check in reference_data/<system>.yaml.
"""
import os
import shlex
import shutil

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function, variable

from jitterbench import osu, sweeps
from jitterbench.harness.mpi_check import MpiCheck
from jitterbench.harness.partitions import QUICK_TASKS_PER_NODE
from jitterbench.harness.configuration import install_prefix

# benchmark: (folder under libexec/osu-micro-benchmarks/mpi, tasks (0: as many as the check has),
#             column read, performance variable, unit, sizes reported, options)
# The bandwidth programs send their window from distinct buffers (-b multiple), as jb-pingpong's
# window does (--buffers multiple, PingPongCheck's `window` sweep): osu_bw's default, one buffer
# that stays in cache, reads up to twice as fast at 1 MiB (docs/fidelity.md).  osu_latency adds
# its percentiles over iterations (-z: P50, P90, P99).
BANDWIDTH_SIZES = [4096, 65536, 1048576]
BENCHMARKS = {
    "osu_latency": ("pt2pt", 2, "avg_latency_us", "latency", "us", [8, 4096, 65536], ["-m", "65536", "-z"]),
    "osu_bw": ("pt2pt", 2, "bandwidth_mb_s", "bandwidth", "MB/s", BANDWIDTH_SIZES, ["-m", "1048576", "-b", "multiple"]),
    "osu_bibw": ("pt2pt", 2, "bandwidth_mb_s", "bandwidth", "MB/s", BANDWIDTH_SIZES, ["-m", "1048576", "-b", "multiple"]),
    "osu_multi_lat": ("pt2pt", 0, "avg_latency_us", "latency", "us", [8, 4096, 65536], ["-m", "65536"]),
    "osu_mbw_mr": ("pt2pt", 0, "mb_s", "bandwidth", "MB/s", BANDWIDTH_SIZES, ["-m", "1048576", "-b", "multiple"]),
    "osu_alltoall": ("collective", 0, "avg_latency_us", "latency", "us", [8, 4096, 65536], ["-m", "65536", "-f"]),
    "osu_barrier": ("collective", 0, "avg_latency_us", "latency", "us", [None], ["-f"]),
}
# osu_latency -z's columns, as performance variables p50_latency_8, ...: recorded beside the mean
PERCENTILES = {"p50": "p50_tail_lat_us", "p90": "p90_tail_lat_us", "p99": "p99_tail_lat_us"}
# OSU's data validation (-c), once per size before the timed run: one iteration, no warm-up.
# osu_barrier moves no data and has no -c
VALIDATION = "osu_validation.txt"


def find_osu(program, folder, environ):
    """The path of an OSU program, or None."""
    prefix = install_prefix("JB_OSU_PREFIX")
    if prefix:
        path = osu.program_path(prefix, environ, folder, program)
        return path if os.access(path, os.X_OK) else None
    return shutil.which(program)


@sn.deferrable
def osu_value(stdout, column, size):
    with open(stdout) as f:
        return osu.value_at(f.read(), column, size)


@sn.deferrable
def validation_passed(path):
    with open(path) as f:
        return osu.validation_passed(f.read())


@rfm.simple_test
class OsuCheck(MpiCheck):
    descr = "OSU Micro-Benchmarks 7.x, for comparison with jitterbench"
    tags = {"osu", "acceptance"}
    benchmark = parameter(list(BENCHMARKS), type=str, loggable=True)
    # OSU is the common yardstick beside jitterbench's numbers: one layout of tasks (block,
    # the quick mode's tasks per node) on every node count.  What the distribution and the
    # tasks per node change, jitterbench's own checks measure
    tasks_per_node = parameter([QUICK_TASKS_PER_NODE], type=int, loggable=True)
    distribution = parameter(["block"], type=str, loggable=True)
    # the quick mode's smoke test: latency and bandwidth between two tasks, and one collective
    quick_variant = {**MpiCheck.quick_variant, "benchmark": ["osu_latency", "osu_bw", "osu_alltoall"]}
    # the bandwidth programs' buffer policy (-b), as jb-pingpong's JSON records its own
    buffers = variable(str, value="", loggable=True)

    def fits(self, partition):
        folder, tasks = BENCHMARKS[self.benchmark][:2]
        if not tasks:  # pairs of tasks in pt2pt (osu_multi_lat, osu_mbw_mr): an even number
            return super().fits(partition) and (folder != "pt2pt" or self.nodes * self.tasks_per_node % 2 == 0)
        # a two-task benchmark has one pair, on one node or across two, whatever tasks_per_node says
        return (super().fits(partition) and self.nodes <= tasks
                and tasks // self.nodes <= partition.extras.get("max_tasks_per_node", 1))

    @run_after("setup")
    def locate(self):
        folder, tasks, _, _, _, _, options = BENCHMARKS[self.benchmark]
        path = find_osu(self.benchmark, folder, self.current_environ.name)
        prefix = install_prefix("JB_OSU_PREFIX").format(environ=self.current_environ.name)
        self.skip_if(path is None, f"OSU Micro-Benchmarks not found: no {self.benchmark} under {prefix or 'PATH'}")
        self.executable = shlex.quote(path) if path else path  # a path, in the job's shell line
        self.executable_opts = options
        self.buffers = options[options.index("-b") + 1] if "-b" in options else ""
        if tasks:  # point-to-point between two tasks: one per node when the check spans nodes
            self.num_tasks = tasks
            self.num_tasks_per_node = tasks // self.nodes
        if self.validates():
            checked = [o for o in options if o != "-z"]
            self.prerun_cmds = [" ".join([self.launch_command(), self.executable, "-c", "-i", "1", "-x", "0", *checked,
                                          ">", VALIDATION])]
            self.keep_files = [VALIDATION]

    def validates(self):
        return self.benchmark != "osu_barrier"

    @run_after("setup")
    def performance_variables(self):
        _, _, column, stem, unit, sizes, _ = BENCHMARKS[self.benchmark]
        self.perf_variables = {
            (stem if size is None else sweeps.name(stem, msg_size=size)): sn.make_performance_function(
                osu_value(self.stdout, column, size), unit)
            for size in sizes
        }
        if "-z" in self.executable_opts:
            for name, percentile in PERCENTILES.items():
                for size in sizes:
                    self.perf_variables[sweeps.name(name, stem, msg_size=size)] = sn.make_performance_function(
                        osu_value(self.stdout, percentile, size), unit)

    @sanity_function
    def osu_table(self):
        checks = [sn.assert_found(r"^# OSU MPI", self.stdout, msg="no OSU header in the output"),
                  self.transport_as_declared()]
        if self.validates():
            checks.append(sn.assert_true(validation_passed(os.path.join(self.stagedir, VALIDATION)),
                                         msg=f"OSU's data validation (-c) did not pass every size: {VALIDATION}"))
        return sn.all(checks)
