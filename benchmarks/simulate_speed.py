"""How fast the all-to-all simulator runs: trials per second at 32, 256 and 1,024 processors.

A benchmark script, not a test: timings on a shared 2-core machine are noise
to assert on, but worth printing side by side.  Run: .venv/bin/python benchmarks/simulate_speed.py
"""
import time

import numpy as np

from jitterbench import simulate

# right-skewed exchange times with the SP2 study's 1 KiB mean and deviation (173 us, 58 us)
rng = np.random.default_rng(1)
shape = (173 / 58) ** 2
sample = rng.gamma(shape, 173 / shape, 20000)

print(f"{'P':>6} {'trials':>8} {'seconds':>8} {'trials/s':>10}  (plain; with interrupts)")
for P, trials in ((32, 100000), (256, 4000), (1024, 200)):
    row = []
    for interrupts in (None, simulate.Interrupts(6025.0, 20.0, 1e-5, 500.0)):
        start = time.perf_counter()
        simulate.simulate_alltoall(sample, P, trials, np.random.default_rng(2), interrupts)
        row.append((time.perf_counter() - start, trials / (time.perf_counter() - start)))
    print(f"{P:>6} {trials:>8} {row[0][0]:>8.2f} {row[0][1]:>10.0f}  ; {row[1][1]:.0f}")
