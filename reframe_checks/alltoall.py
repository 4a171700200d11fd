"""The pairwise-exchange all-to-all of the SP2 study
(../shared/papers/003_1fe4774c09b49939.txt), beside MPI_Alltoall.

Per-call MAX and AVG over tasks (us) of the whole all-to-all, and the
throughput per task as the paper's Table 1 defines it (MB/s).
"""
import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after

from jitterbench.rfm import PerCallCheck


@rfm.simple_test
class AlltoallCheck(PerCallCheck):
    descr = "all-to-all: pairwise exchange and MPI_Alltoall"
    benchmark = "alltoall"
    eager_limit = parameter(["default", "8192"], type=str, loggable=True)
    method = parameter(["pairwise", "alltoall"], type=str, loggable=True)
    msg_size = parameter([1024, 65536], type=int, loggable=True)

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--method", self.method, "--size", str(self.msg_size), "--validate",
                                "--json", "alltoall.json"]
        self.keep_files = ["alltoall.json"]

    @performance_function("MB/s")
    def throughput(self):
        return self.result("throughput_mb_s")
