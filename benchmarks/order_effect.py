"""What the order of a run's variants does to MPI_Alltoall's figures (issue 32, item 4): the
all-to-all of one jb-alltoall run that also runs the pairwise method, with the methods in the
given order (pairwise's calls all before MPI_Alltoall's) and shuffled in rounds, each over a run
of MPI_Alltoall alone; interleaved repeats.

A ratio near 1 says the other method's calls in the same process leave MPI_Alltoall's figure as
it is alone.  Run:
    .venv/bin/python benchmarks/order_effect.py [--ranks 2] [--size 1K] [--repeats 5] [--calls 2000]
A benchmark script, not a test: timings on a shared machine are printed, never asserted.
"""
import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from jitterbench import mpi as mpis

RUNS = {"alone": ["--method", "alltoall"],
        "given": ["--method", "all", "--order", "given"],
        "shuffled": ["--method", "all", "--order", "shuffled"]}
FIGURES = ("max_us", "p50_us", "p99_us")


def alltoall_figures(m, ranks, size, calls, seed, extra):
    """MPI_Alltoall's result of one run: {figure: value}."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp, "a.json")
        cmd, env = m.launch(ranks, [m.binary("alltoall"), "--size", size, "--calls", str(calls), "--seed", str(seed),
                                    *extra, "--json", doc])
        subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=900)
        (result,) = [r for r in json.loads(doc.read_text())["results"] if r["method"] == "alltoall"]
        return {f: result[f] for f in FIGURES}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--size", default="1K")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print(f"MPI_Alltoall, {args.ranks} ranks, {args.size}, {args.calls} calls; medians of {args.repeats} interleaved "
          f"runs; given and shuffled as ratios over alone")
    print(f"{'MPI':<9} {'figure':<7} {'alone us':>9} {'given':>7} {'shuffled':>8}")
    for m in mpis.available():
        runs = {name: [] for name in RUNS}
        for repeat in range(args.repeats):
            for name, extra in RUNS.items():
                runs[name].append(alltoall_figures(m, args.ranks, args.size, args.calls, 1 + repeat, extra))
        for f in FIGURES:
            med = {name: statistics.median(r[f] for r in v) for name, v in runs.items()}
            print(f"{m.name:<9} {f:<7} {med['alone']:>9.3f} {med['given'] / med['alone']:>7.3f} "
                  f"{med['shuffled'] / med['alone']:>8.3f}")


if __name__ == "__main__":
    main()
