"""The Jacobi inverter of a lattice Laplacian in two dimensions
(paper 002 of docs/papers.md, section 8, Fig. 7).

Each task holds `points_per_task` points (the study's 210 x 252: 6720 x 8064 on 1024 tasks, so halos
of 848 and 1016 bytes); the lattice follows from the job's grid of tasks.  One run times
both halo methods, 4 x MPI_Sendrecv and 4 x MPI_Irecv, 4 x MPI_Isend, MPI_Waitall(8), each
`trials` times over `calls` iterations (the study: 30 trials of 2000).  Per method: the
halo's per-call MAX and AVG over tasks (max_sendrecv, avg_waitall, ...), the sweep's and
the whole iteration's MAX (compute_, step_), and the fastest trial's three (fastest_,
fastest_halo_, fastest_compute_), as the study compared.  --validate checks both methods
against the exact iterate of a known field before anything is timed.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import JitterbenchCheck, listed

RECORD = benchmarks.by_benchmark("jacobi")



@rfm.simple_test
class JacobiCheck(JitterbenchCheck):
    descr = "Jacobi inverter: halo by Sendrecv or Waitall(8), compute and total, fastest of N trials"
    benchmark = "jacobi"
    halos = variable(typ.List[str], value=RECORD.value("halos"), loggable=True)
    points_per_task = variable(typ.List[int], value=RECORD.value("points_per_task"), loggable=True)  # x and y
    trials = variable(int, value=RECORD.value("trials"), loggable=True)
    calls = RECORD.value("calls")

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--halo", listed(self.halos), "--local", "x".join(map(str, self.points_per_task)),
                                "--trials", str(self.trials), "--validate", "--json", "jacobi.json",
                                *self.inject_options()]
        self.keep_files = ["jacobi.json"]
        self.perf_variables = self.sweep_variables(self.quantities(), [(h, {}, {"halo": h}) for h in self.halos])
