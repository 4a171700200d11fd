"""The bound rule's calibration (jitterbench/bounds.py, docs/references.md), in one run.

For each synthetic distribution of a run's value (lognormal; Pareto, whose log is exponential:
the tail the rule's model is exact for; bimodal, a fifth of the runs in a 1.5x stall mode) and
each log-scale spread: SUITES simulated suites of one group of VARIABLES variables, each built
from k = 5 repeats at the stated suite false-alarm rate, then one clean new run.  Prints the
false-alarm rate with the binomial 95 % interval of the stated rate, the stored minimum
detectable slowdown (median and 5-95 % over suites), and the power against a 1.5x and a 2x
slowdown of one variable: overall, where the shift is at least the suite's minimum detectable
slowdown (claimed: at least half detected) and where it is at most its square root (claimed:
at most 5 %).  Then the conformal regime, where the scores reach a variable's rate (2 %): the
share of variables above their bound.
Run: .venv/bin/python benchmarks/bounds_calibration.py [--suites 10000] [--rate 0.01]
"""
import argparse

import numpy as np
from scipy import stats

from jitterbench import bounds
from jitterbench.console import format_table

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--suites", type=int, default=10_000)
parser.add_argument("--variables", type=int, default=50)
parser.add_argument("--rate", type=float, default=bounds.FALSE_ALARM_RATE)
args = parser.parse_args()

low, high = (x / args.suites for x in stats.binom.interval(0.95, args.suites, args.rate))


def share(detected, where):
    return f"{detected[where].mean():.3f} ({where.sum()})" if where.any() else "- (0)"


rows = []
for distribution in bounds.DISTRIBUTIONS:
    for sigma in (0.03, 0.1, 0.3):
        run = bounds.calibrate(distribution, sigma, suites=args.suites, variables=args.variables, rate=args.rate)
        mds = run["slowdown"]
        row = [distribution, f"{sigma:g}", f"{run['false_alarm'].mean():.4f}",
               f"{np.median(mds):.3f} [{np.percentile(mds, 5):.2f}, {np.percentile(mds, 95):.2f}]"]
        for shift, detected in run["detected"].items():
            row += [f"{detected.mean():.3f}", share(detected, shift >= mds), share(detected, shift <= np.sqrt(mds))]
        rows.append(row)
print(f"# {args.suites} suites per row, {args.variables} variables of one group, k = {bounds.MIN_REPEATS} repeats, "
      f"stated false-alarm rate {args.rate:g} (binomial 95 % interval {low:.4f} to {high:.4f}); "
      "power: share detected (suites)")
print(format_table(("distribution", "log sd", "false alarms", "min. detectable slowdown",
                    "1.5x", "1.5x, >= mds", "1.5x, <= sqrt mds", "2x", "2x, >= mds", "2x, <= sqrt mds"), rows))

rng = np.random.default_rng(2)
rows = []
for distribution, draw in bounds.DISTRIBUTIONS.items():
    logs = draw(rng, (args.suites, args.variables, bounds.MIN_REPEATS + 1), 0.1)
    old, new = logs[..., :-1], logs[..., -1]
    q = bounds.threshold(bounds.loo_scores(old), 0.02)
    rows.append((distribution, f"{np.mean(new - np.median(old, axis=-1) > q[:, None]):.4f}"))
print(f"\n# the conformal regime: {args.variables * bounds.MIN_REPEATS} scores, a variable's rate 0.02")
print(format_table(("distribution", "share of variables above their bound"), rows))
