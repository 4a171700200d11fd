"""Multi-ping-pong (../shared/papers/002_365abe8e6881826d.txt, section 3).

n messages of one size there and back per cycle, in four send modes; the
cycle time (MAX over concurrent pairs, us) and the speed 2 n size / cycle
(MB/s) for every send mode, size and n of one run (cycle_send_4096_n1,
speed_isend_65536_n8, ...) against reference_data/<system>.yaml.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from jitterbench.checks import TRANSPORT_VARIANTS, JitterbenchCheck, listed


@rfm.simple_test
class PingPongCheck(JitterbenchCheck):
    descr = "multi-ping-pong: cycle time and speed"
    valid_prog_environs = ["+mpi", *TRANSPORT_VARIANTS]
    benchmark = "pingpong"
    # swept in each run; -S modes=send, -S messages=1 narrow them
    modes = variable(typ.List[str], value=["send", "isend", "ssend", "issend"], loggable=True)
    messages = variable(typ.List[int], value=[1, 8], loggable=True)  # messages per direction and cycle
    msg_sizes = [8, 4096, 65536]
    calls = 500  # the benchmark's own default, stated: `jitterbench plan` estimates from it
    quick_variant = {**JitterbenchCheck.quick_variant, "distribution": ["block", "cyclic"]}

    def fits(self, partition):
        # pairs (i, i + N/2): an even number of tasks
        return super().fits(partition) and self.nodes * self.tasks_per_node % 2 == 0

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--mode", listed(self.modes), "--messages", listed(self.messages),
                                "--size", listed(self.msg_sizes), "--validate", "--json", "pingpong.json"]
        self.keep_files = ["pingpong.json"]
        self.perf_variables = self.sweep_variables(
            {"cycle": ("max_us", "us"), "speed": ("speed_mb_s", "MB/s")},
            [(mode, {"msg_size": size, "messages": n}, {"mode": mode, "size": size, "messages": n})
             for mode in self.modes for size in self.msg_sizes for n in self.messages])
