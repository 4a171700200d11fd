"""The halo exchange of "Switch Jitter" (../shared/papers/000_9fba8aad814ec0c2.txt).

Sweeps what the study varied: nodes, tasks per node, placement, exchange
pattern, eager limit and message size; asserts MAX and AVG (us) and their
ratio against reference_data/<system>.yaml.
"""
import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after

from jitterbench.rfm import PerCallCheck


@rfm.simple_test
class HaloCheck(PerCallCheck):
    descr = "halo exchange: per-call MAX and AVG over tasks"
    benchmark = "halo"
    placement = parameter(["row", "bunched"], type=str, loggable=True)
    pattern = parameter(["two-phase", "irecv-isend", "isend-recv", "sendrecv"], type=str, loggable=True)
    # the study's 4K and 40K exchanges
    msg_size = parameter([4096, 40960], type=int, loggable=True)
    calls = 1000

    @run_after("setup")
    def options(self):
        # the per-call MAX, AVG and MIN, and the times of the first, middle and last task, as the
        # study plots tasks 1, 960 and 1920 (jitterbench report draws them): 6 x calls numbers
        traced = sorted({0, self.num_tasks // 2, self.num_tasks - 1})
        self.executable_opts = [
            "--placement", self.placement, "--pattern", self.pattern, "--size", str(self.msg_size),
            "--validate", "--series", "--trace-tasks", ",".join(map(str, traced)), "--json", "halo.json",
        ]
        # the benchmark's own record: statistics, and the environment it really ran with
        self.keep_files = ["halo.json"]

    @performance_function("MAX/AVG")
    def jitter(self):
        return self.result("jitter")
