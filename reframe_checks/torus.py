"""Sending around a ring and a torus, and overlap of work with communication
(paper 002 of docs/papers.md, sections 6, 7 and 9).

Per-call MAX/AVG over tasks (us) and the bandwidth per task, for each pattern
and message size of one run (max_isend_16384, bandwidth_phases_1024, ...).
With work, max and avg are those of the overlapped run (work before the final
MPI_Waitall) and max_work_after the MAX with the work after it: the time saved
is their difference.  Both are referenced; the saving itself is not, since a
difference of two noisy times can be zero or negative, where relative bounds
mean nothing.

The overlap experiment is measured as the study did (section 9, Figs. 8-9): the work
swept over sizes (work_sweep beside the work parameter's own, for the report's `overlap`
figure) and each measurement taken as the fastest of `trials` trials: fastest and
fastest_work_after, the least mean per-call MAX of a trial, with the work before and after.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, variable

from jitterbench import benchmarks
from jitterbench.benchmarks.torus import OWN_LINE
from jitterbench.harness.checks import PerCallCheck, listed

RECORD = benchmarks.by_benchmark("torus")


@rfm.simple_test
class TorusCheck(PerCallCheck):
    descr = "ring and torus patterns: per-call MAX and AVG, overlap"
    benchmark = "torus"
    eager_limit = parameter(["default", "8192"], type=str, loggable=True)
    # the ring and tori of 2 and 3 dimensions (the study's 3 tasks per dimension, one per node:
    # -P nodes=27 -P tasks_per_node=1 -P ndims=3; MPI_Dims_create shapes the job's tasks)
    ndims = parameter([1, 2, 3], type=int, loggable=True)
    work = parameter([0, 262144], type=int, loggable=True)  # bytes per array of the vector add
    # with work: more array sizes measured in the same run (the JSON and the report hold them)
    # and the trials each measurement takes the fastest of (the study: at least 10)
    work_sweep = variable(typ.List[int], value=RECORD.value("work_sweep"), loggable=True)
    trials = variable(int, value=RECORD.value("trials"), loggable=True)
    # the five patterns, one after the other in each run; -S patterns=a,b narrows them
    patterns = variable(typ.List[str], value=RECORD.value("patterns"), loggable=True)
    msg_sizes = RECORD.value("msg_sizes")
    calls = RECORD.value("calls")
    quick_variant = {**PerCallCheck.quick_variant, "ndims": [1]}

    @run_after("setup")
    def options(self):
        # sendrecv has no MPI_Waitall to put work before
        patterns = [p for p in self.patterns if not (self.work and p == "sendrecv")]
        self.skip_if(not patterns, "sendrecv has no MPI_Waitall to put work before")
        self.executable_opts = ["--pattern", listed(patterns), "--ndims", str(self.ndims),
                                "--size", listed(self.msg_sizes), "--validate", "--json", "torus.json"]
        if self.work:
            self.executable_opts += ["--work", listed(sorted({self.work, *self.work_sweep})),
                                     "--trials", str(self.trials)]
        self.keep_files = ["torus.json"]
        # with work, the overlapped run (work before the wait) is the one measured
        # the work parameter's own size is referenced; the swept ones are the report's
        own = {"work_bytes": self.work} if self.work else {}
        self.perf_variables = self.per_size_variables(self.quantities(*OWN_LINE), patterns,
                                                      ndims=self.ndims, work="before" if self.work else "none", **own)
        if self.work:
            self.perf_variables.update(self.per_size_variables(self.quantities("fastest"), patterns,
                                                               ndims=self.ndims, work="before", **own))
            self.perf_variables.update(self.per_size_variables(
                self.quantities("max_work_after", "fastest_work_after"), patterns,
                ndims=self.ndims, work="after", **own))
