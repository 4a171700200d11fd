"""Where the launch-to-launch spread lives in time (issue 41): one quick case's command line launched
back to back, and what a median of L launches would have given had a case taken them.

    python benchmarks/launch_series.py --mpi openmpi --launches 700
    python benchmarks/launch_series.py --mpi mpich --benchmark halo --launches 300

Launches the quick suite's jb-alltoall (or jb-halo) command line under one MPI's launcher, with the
binaries ci/setup.sh built, LAUNCHES times one after the other, and records each launch's start time
and its figures (the per-call MAX over tasks, mean over calls, of every variant: JB_RESULT max_us).
Per figure it prints the share of launches slower than 1.5x and 2x the median, the slow episodes
(runs of consecutive launches above 1.5x: how many, how long), and for a case of L launches, taken
every GAP-th launch (GAP x the launch's time apart; every starting launch of the series), the median
of its L over the series' median: the 99th percentile and the largest.  A bound for one run at the
suite's rate (about 4e-5 a variable) has to hold those; the minimum detectable slowdown cannot be
below what one episode puts into a median.  Timings: nothing here asserts; the figures go in
docs/references.md and the issue's note.  Nothing else should run meanwhile.
"""
from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jitterbench import mpi as mpis  # noqa: E402

# the quick mode's command lines (`reframe --mode quick --dry-run`, the job scripts' last line),
# without --validate, --series and --json, which write or check what this script does not read
QUICK = {
    "alltoall": ["--method", "pairwise,alltoall", "--size", "1024,65536", "--calls", "100"],
    "halo": ["--placement", "row", "--pattern", "isend-recv", "--size", "4096,40960", "--calls", "100"],
}
LENGTHS = (5, 9, 15, 25)
GAPS = (1, 2)


def launch(mpi, benchmark):
    """One launch: {variant: max_us} from its JB_RESULT lines."""
    cmd, env = mpi.launch(2, [str(mpi.binary(benchmark)), *QUICK[benchmark]])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120).stdout
    found = {}
    for line in re.findall(r"^JB_RESULT .*$", out, re.M):
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        variant = "_".join(fields[k] for k in ("method", "pattern", "size", "ns_size") if k in fields)
        found[variant] = float(fields["max_us"])
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpi", default="openmpi", choices=[m.name for m in mpis.available()])
    parser.add_argument("--benchmark", default="alltoall", choices=sorted(QUICK))
    parser.add_argument("--launches", type=int, default=700)
    args = parser.parse_args()
    mpi = mpis.by_name(args.mpi)
    if not mpi.binary(args.benchmark).exists():
        sys.exit(f"launch_series: no {mpi.binary(args.benchmark)}: run bash ci/setup.sh first")
    starts, series = [], []
    t0 = time.monotonic()
    for _ in range(args.launches):
        starts.append(time.monotonic() - t0)
        series.append(launch(mpi, args.benchmark))
    spacing = starts[-1] / max(1, len(starts) - 1)
    print(f"{args.launches} launches of jb-{args.benchmark} under {mpi.name}, one every {spacing:.2f} s "
          f"({starts[-1]:.0f} s); each figure the launch's per-call MAX over tasks, mean over its calls")
    for variant in series[0]:
        x = np.array([s[variant] for s in series if variant in s])
        median = np.median(x)
        slow = x > 1.5 * median
        episodes = [len(list(run)) for is_slow, run in itertools.groupby(slow) if is_slow]
        print(f"\n{variant}: median {median:.3g} us; launches above 1.5x {slow.mean():.1%}, above 2x "
              f"{(x > 2 * median).mean():.1%}; {len(episodes)} slow episode(s), "
              f"longest {max(episodes, default=0)} launches")
        print("   L  every  apart   p99 of the median of L / median   largest")
        for length, gap in itertools.product(LENGTHS, GAPS):
            if (length - 1) * gap >= x.size:
                continue
            medians = np.array([np.median(x[i:i + length * gap:gap]) for i in range(x.size - (length - 1) * gap)])
            print(f"  {length:2d}  {gap:5d}  {gap * spacing:4.1f} s  {np.quantile(medians, 0.99) / median:32.2f}x"
                  f"  {medians.max() / median:7.2f}x")


if __name__ == "__main__":
    main()
