"""The pairwise-exchange all-to-all of the SP2 study
(paper 003 of docs/papers.md), beside MPI_Alltoall.

Per-call MAX and AVG over tasks (us) of the whole all-to-all, and the
throughput per task as the paper's Table 1 defines it (MB/s), for both
methods and each message size of one run (max_pairwise_1024,
throughput_alltoall_65536, ...).
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import PerCallCheck

RECORD = benchmarks.by_benchmark("alltoall")


@rfm.simple_test
class AlltoallCheck(PerCallCheck):
    descr = "all-to-all: pairwise exchange and MPI_Alltoall"
    benchmark = "alltoall"
    # every pair of tasks exchanges in each call: the distribution reorders the rounds, not
    # the traffic that crosses nodes
    distribution = parameter(["block"], type=str, loggable=True)
    eager_limit = parameter(["default", "8192"], type=str, loggable=True)
    # both, one after the other in each run; -S methods=pairwise narrows them
    methods = variable(typ.List[str], value=RECORD.value("methods"), loggable=True)
    msg_sizes = RECORD.value("msg_sizes")
    calls = RECORD.value("calls")

    @run_after("setup")
    def options(self):
        # the record's run (records.py's): a check of its own only for what a record cannot state,
        # the one distribution and two eager limits above, which name its cases and so its
        # references, and its words' variable `methods`, which perflogs and -S name
        self.run_as_recorded(self.methods)
