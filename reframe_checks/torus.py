"""Sending around a ring and a torus, and overlap of work with communication
(../shared/papers/002_365abe8e6881826d.txt, sections 6, 7 and 9).

Per-call MAX/AVG over tasks (us) and the bandwidth per task.  With work, max
and avg are those of the overlapped run (work before the final MPI_Waitall)
and max_work_after is the MAX with the work after it: the time saved is their
difference.  Both are referenced; the saving itself is not, since a
difference of two noisy times can be zero or negative, where relative bounds
mean nothing.
"""
import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after

from jitterbench.rfm import PerCallCheck


@rfm.simple_test
class TorusCheck(PerCallCheck):
    descr = "ring and torus patterns: per-call MAX and AVG, overlap"
    benchmark = "torus"
    eager_limit = parameter(["default", "8192"], type=str, loggable=True)
    pattern = parameter(["phases", "sendrecv", "isend", "issend", "ibsend"], type=str, loggable=True)
    ndims = parameter([1, 2], type=int, loggable=True)
    msg_size = parameter([1024, 16384], type=int, loggable=True)
    work = parameter([0, 262144], type=int, loggable=True)  # bytes per array of the vector add
    calls = 300

    @run_after("setup")
    def options(self):
        self.skip_if(self.work and self.pattern == "sendrecv", "sendrecv has no MPI_Waitall to put work before")
        self.executable_opts = ["--pattern", self.pattern, "--ndims", str(self.ndims), "--size", str(self.msg_size),
                                "--validate", "--json", "torus.json"]
        if self.work:
            self.executable_opts += ["--work", str(self.work)]
        self.keep_files = ["torus.json"]
        # with work, the overlapped run (work before the wait) is the one measured
        self.result_line = "work=before" if self.work else ""

    @performance_function("MB/s")
    def bandwidth(self):
        return self.result("bandwidth_mb_s", where=self.result_line)

    @run_after("setup")
    def overlap_variables(self):
        if self.work:
            self.perf_variables["max_work_after"] = self.max_work_after()

    @performance_function("us")
    def max_work_after(self):
        return self.result("max_us", where="work=after")
