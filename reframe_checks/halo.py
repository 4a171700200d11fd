"""The halo exchange of "Switch Jitter" (paper 000 of docs/papers.md).

Sweeps what the study varied: nodes, tasks per node, placement and eager limit
as test cases, each a job of its own; the four exchange patterns and the
study's two message sizes inside each run, as jb-halo sweeps them.  Asserts
MAX and AVG (us) and their ratio per pattern and size (max_isend-recv_4096,
avg_isend-recv_4096, jitter_isend-recv_4096, max_isend-recv_40960, ...)
against reference_data/<system>.yaml.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import PerCallCheck, listed
from jitterbench.harness.partitions import TRANSPORT_VARIANTS

RECORD = benchmarks.by_benchmark("halo")


@rfm.simple_test
class HaloCheck(PerCallCheck):
    descr = "halo exchange: per-call MAX and AVG over tasks"
    valid_prog_environs = ["+mpi", *TRANSPORT_VARIANTS]
    benchmark = "halo"
    # jb-halo numbers its grid by node and rank on the node, so which tasks exchange across
    # nodes is the placement's under any distribution: a cyclic run would repeat the block one
    distribution = parameter(["block"], type=str, loggable=True)
    placement = parameter(["row", "bunched"], type=str, loggable=True)
    # the study's four patterns, one after the other in each run; -S patterns=a,b narrows them
    patterns = variable(typ.List[str], value=RECORD.value("patterns"), loggable=True)
    # the study's 4K and 40K exchanges
    msg_sizes = RECORD.value("msg_sizes")
    calls = RECORD.value("calls")

    @run_after("setup")
    def options(self):
        # the per-call MAX, AVG and MIN, and the times of the first, middle and last task, as the
        # study plots tasks 1, 960 and 1920 (jitterbench report draws them): 6 x calls numbers
        traced = sorted({0, self.num_tasks // 2, self.num_tasks - 1})
        # the record's run, and what the study needs besides: the placement, the traces, the noise
        self.run_as_recorded(self.patterns, "--series", "--trace-tasks", listed(traced), *self.inject_options(),
                             first=("--placement", self.placement))
