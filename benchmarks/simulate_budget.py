"""The rates behind simulate's budget (jitterbench/simulate/command.py: NS_PER_EXCHANGE and
NS_PER_DRAW), measured on this machine on one CPU:

    python benchmarks/simulate_budget.py

alltoall: nanoseconds per processor, round and trial of simulate_alltoall (P = 256, 1,000
trials); halo: nanoseconds per task and call of the uncoupled limit (100,000 tasks, 100 calls).
Nothing here asserts; the figures go in the constants and the issue's note.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jitterbench import simulate  # noqa: E402
from jitterbench.simulate import alltoall as alltoall_model  # noqa: E402


def main():
    alltoall_model.WORKERS = 1
    rng = np.random.default_rng(1)
    sample = rng.lognormal(3, 0.3, 1000)
    P, trials = 256, 1000
    started = time.perf_counter()
    simulate.simulate_alltoall(sample, P, trials, rng)
    alltoall = (time.perf_counter() - started) / (P * P * trials) * 1e9
    N, calls = 100_000, 100
    started = time.perf_counter()
    simulate.halo_prediction(sample, [N], rng, calls, barrier_coupled=False, n_boot=2)
    halo = (time.perf_counter() - started) / (N * calls * 3) * 1e9
    print(f"alltoall: {alltoall:.2f} ns per processor, round and trial (P = {P}, {trials} trials, one CPU)")
    print(f"halo: {halo:.2f} ns per task and call, uncoupled ({N} tasks, {calls} calls, one CPU)")


if __name__ == "__main__":
    main()
