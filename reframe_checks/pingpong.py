"""Multi-ping-pong (../shared/papers/002_365abe8e6881826d.txt, section 3).

n messages of one size there and back per cycle, in four send modes; the
cycle time (MAX over concurrent pairs, us) and the speed 2 n size / cycle
(MB/s) against reference_data/<system>.yaml.
"""
import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after

from jitterbench.rfm import JitterbenchCheck


@rfm.simple_test
class PingPongCheck(JitterbenchCheck):
    descr = "multi-ping-pong: cycle time and speed"
    benchmark = "pingpong"
    tasks_per_node = parameter([2], type=int, loggable=True)
    mode = parameter(["send", "isend", "ssend", "issend"], type=str, loggable=True)
    messages = parameter([1, 8], type=int, loggable=True)
    msg_size = parameter([8, 4096, 65536], type=int, loggable=True)

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--mode", self.mode, "--messages", str(self.messages), "--size", str(self.msg_size),
                                "--validate", "--json", "pingpong.json"]
        self.keep_files = ["pingpong.json"]

    @performance_function("us")
    def cycle(self):
        return self.result("max_us")

    @performance_function("MB/s")
    def speed(self):
        return self.result("speed_mb_s")
