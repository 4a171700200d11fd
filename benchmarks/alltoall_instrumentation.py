"""What jb-alltoall's instrumentation costs: the all-to-all time with per-round timestamps
(the default) and with the old zero-byte handshake, each over the plain algorithm, interleaved.

A ratio near 1 says the timed region holds nothing but the exchanges.  Run:
    .venv/bin/python benchmarks/alltoall_instrumentation.py [--ranks 2] [--size 1K] [--repeats 7]
A benchmark script, not a test: timings on a shared machine are printed, never asserted.
"""
import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from jitterbench import mpi as mpis

HOW = ("none", "timestamps", "handshake")


def max_us(m, ranks, size, idle, calls):
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp, "a.json")
        cmd, env = m.launch(ranks, [m.binary("alltoall"), "--method", "pairwise", "--size", size, "--idle", idle,
                                    "--calls", str(calls), "--json", doc])
        subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
        return json.loads(doc.read_text())["results"][0]["max_us"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--size", default="1K")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'MPI':<9} {'plain MAX us':>12} {'timestamps':>11} {'handshake':>10}   (ratios over plain; medians of "
          f"{args.repeats} interleaved runs, {args.ranks} ranks, {args.size})")
    for m in mpis.available():
        runs = {how: [] for how in HOW}
        for _ in range(args.repeats):
            for how in HOW:
                runs[how].append(max_us(m, args.ranks, args.size, how, args.calls))
        med = {how: statistics.median(v) for how, v in runs.items()}
        print(f"{m.name:<9} {med['none']:>12.3f} {med['timestamps'] / med['none']:>11.3f} "
              f"{med['handshake'] / med['none']:>10.3f}")


if __name__ == "__main__":
    main()
