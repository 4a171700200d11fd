"""How fast the simulators run, on the cases issue 18 sets targets for.

  simulate alltoall: 100,000 trials at P = 32 (target 0.5 s) and 1,000 trials at P = 1,024 (2 s)
  simulate halo: a prediction at 100,000 tasks from a 16-task run of 1,000 calls, as the command
      makes it: the G^(N/N0) extrapolation, the uncoupled limit and the replay of a noise trace
      (a 5 s trace of a 250 Hz tick and rare 2 ms detours), with the peak memory it allocates.
  The peak memory of the P = 32 all-to-all in one process (each worker process holds as much,
  less the results, which they share).

Medians of --repeats runs, wall-clock and CPU seconds: on a shared machine the CPU time is the
steadier of the two. A benchmark script, not a test: timings on a shared 2-core machine are
noise to assert on, but worth printing side by side.
Run: .venv/bin/python benchmarks/simulate_speed.py [--repeats 5]
"""
import argparse
import os
import time
import tracemalloc

import numpy as np

from jitterbench import simulate
from jitterbench.simulate import alltoall as alltoall_model

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--repeats", type=int, default=5)
repeats = parser.parse_args().repeats

# right-skewed exchange times with the SP2 study's 1 KiB mean and deviation (173 us, 58 us)
rng = np.random.default_rng(1)
shape = (173 / 58) ** 2
sample = rng.gamma(shape, 173 / shape, 20000)

# the halo inputs: per-call MAX of 16 tasks, a histogram's per-task times, a noise trace
series = rng.gamma(9.0, 50 / 9, 1000)
per_task = np.repeat(np.geomspace(20, 400, 20), rng.integers(1, 500, 20))
ticks = np.arange(0, 5e6, 4000.0)
rare = np.sort(rng.uniform(0, 5e6, 10))
times = np.concatenate((ticks, rare))
order = np.argsort(times, kind="stable")
trace = simulate.TraceInterrupts(times[order], np.concatenate((np.full(ticks.size, 5.0), np.full(10, 2000.0)))[order],
                                 5e6)


def halo(N=100000, calls=1000):
    r = np.random.default_rng(2)
    simulate.halo_extrapolation(series, 16, [N], r)
    simulate.halo_prediction(per_task, [N], r, calls, barrier_coupled=False, n_boot=5)
    simulate.halo_trace_prediction(series, 16, [N], trace, r)


def alltoall(P, trials):
    return lambda: simulate.simulate_alltoall(sample, P, trials, np.random.default_rng(2))


cases = [("alltoall P=32, 100,000 trials", 0.5, alltoall(32, 100000)),
         ("alltoall P=1024, 1,000 trials", 2.0, alltoall(1024, 1000)),
         ("halo 100,000 tasks, 1,000 calls", 10.0, halo)]
times_of = {name: [] for name, _, _ in cases}


def cpu_s():
    """CPU seconds of this process and of its ended children (simulate_alltoall's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


for _ in range(repeats):  # interleaved, so a busy spell of the machine touches every case alike
    for name, _, run in cases:
        wall, cpu = time.perf_counter(), cpu_s()
        run()
        times_of[name].append((time.perf_counter() - wall, cpu_s() - cpu))


def peak_mb(run):
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return peak


halo_mb = peak_mb(halo)
alltoall_model.WORKERS = 1  # tracemalloc sees this process only
alltoall_mb = peak_mb(cases[0][2])  # its results alone, finish and idle, are 2 x 32 x 100,000 floats

print(f"{'case':32} {'target s':>8} {'wall s':>7} {'cpu s':>6}   (medians of {repeats})")
for name, target, _ in cases:
    wall, cpu = np.median(times_of[name], axis=0)
    print(f"{name:32} {target:>8.1f} {wall:>7.2f} {cpu:>6.2f}")
print(f"halo at 100,000 tasks allocates at most {halo_mb:.0f} MB")
print(f"alltoall P=32, 100,000 trials allocates at most {alltoall_mb:.0f} MB (its results: {2 * 32 * 100000 * 8 / 1e6:.0f} MB)")
