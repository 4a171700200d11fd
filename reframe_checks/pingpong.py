"""Multi-ping-pong (paper 002 of docs/papers.md, section 3).

n messages of one size there and back per cycle, in four send modes; the
cycle time (MAX over concurrent pairs, us) and the speed 2 n size / cycle
(MB/s) for every send mode, size and n of one run (cycle_send_4096_n1,
speed_isend_65536_n8, ...) against reference_data/<system>.yaml.

sweep=totals is the study's splitting (Figs. 3 and 4): a fixed total per direction
sent as n = 1, 2, 4, 8 messages of total/n bytes, with the speed ratio of n
messages over one, gain_<mode>_<total>_n<n>: above 1, splitting pays.

sweep=window is osu_bw's definition beside OsuCheck's osu_bw: a window of 64
messages one way (--one-way), each from its own buffer as osu_bw -b multiple
sends them, one byte back; speed_window_<size>_n64 at osu_bw's sizes.
"""
import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, variable

from jitterbench import benchmarks, sweeps
from jitterbench.harness.checks import JitterbenchCheck, listed
from jitterbench.harness.partitions import TRANSPORT_VARIANTS

RECORD = benchmarks.by_benchmark("pingpong")


@rfm.simple_test
class PingPongCheck(JitterbenchCheck):
    descr = "multi-ping-pong: cycle time and speed"
    valid_prog_environs = ["+mpi", *TRANSPORT_VARIANTS]
    benchmark = "pingpong"
    # swept in each run; -S modes=send, -S messages=1 narrow them
    modes = variable(typ.List[str], value=RECORD.value("modes"), loggable=True)
    messages = variable(typ.List[int], value=RECORD.value("messages"), loggable=True)
    msg_sizes = RECORD.value("msg_sizes")
    # what one run sweeps: the message size (Fig. 1), or a fixed total split into 1, 2, 4, 8
    # messages (Figs. 3-4), either side of the eager limits the eager_limit parameter sets
    sweep = parameter(["sizes", "totals", "window"], type=str, loggable=True)
    totals = variable(typ.List[int], value=RECORD.value("totals"), loggable=True)
    split_into = [1, 2, 4, 8]
    # sweep=window: osu_bw's window at OsuCheck's bandwidth sizes, one buffer per message (-b multiple)
    window = 64
    window_sizes = variable(typ.List[int], value=[4096, 65536, 1048576], loggable=True)
    buffers = variable(str, value="multiple", loggable=True)
    calls = RECORD.value("calls")
    quick_variant = {**JitterbenchCheck.quick_variant, "distribution": ["block", "cyclic"], "sweep": ["sizes"]}

    def fits(self, partition):
        # pairs (i, i + N/2): an even number of tasks
        return super().fits(partition) and self.nodes * self.tasks_per_node % 2 == 0

    @run_after("setup")
    def options(self):
        if self.sweep == "totals":
            self.messages = self.split_into
            lines = [(mode, total // n, n, {"mode": mode, "total": total, "messages": n})
                     for mode in self.modes for total in self.totals for n in self.messages]
            swept = ["--total", listed(self.totals)]
        elif self.sweep == "window":
            self.modes, self.messages = ["window"], [self.window]
            lines = [("window", size, self.window, {"mode": "window", "size": size, "messages": self.window})
                     for size in self.window_sizes]
            swept = ["--one-way", "--size", listed(self.window_sizes), "--buffers", self.buffers]
        else:
            lines = [(mode, size, n, {"mode": mode, "size": size, "messages": n})
                     for mode in self.modes for size in self.msg_sizes for n in self.messages]
            swept = ["--size", listed(self.msg_sizes)]
        modes = [] if self.sweep == "window" else ["--mode", listed(self.modes)]
        self.executable_opts = [*modes, "--messages", listed(self.messages), *swept,
                                "--validate", "--json", "pingpong.json"]
        self.keep_files = ["pingpong.json"]
        self.perf_variables = self.sweep_variables(
            self.quantities(),
            [(mode, {"msg_size": size, "messages": n}, fields) for mode, size, n, fields in lines])
        if self.sweep == "totals":
            # the speed of the total in n messages over its speed in one, each the mean over cycles
            for mode in self.modes:
                for total in self.totals:
                    whole = self.result("speed_mb_s", where={"mode": mode, "total": total, "messages": 1})
                    for n in self.messages[1:]:
                        split = self.result("speed_mb_s", where={"mode": mode, "total": total, "messages": n})
                        self.perf_variables[sweeps.name("gain", mode, msg_size=total, messages=n)] = \
                            sn.make_performance_function(split / whole, "ratio")
