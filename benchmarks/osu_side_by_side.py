"""jb-pingpong beside OSU's osu_latency and osu_bw: ratios of medians at 8 B, 1 KiB, 64 KiB and 1 MiB.

The two run interleaved (jitterbench, OSU, jitterbench, ...) on the same two ranks of each MPI,
so both see the same machine, with OSU 7.4's own warm-up and counts (osu_util.h: latency 100
skipped and 10,000 timed below 8 KiB, bandwidth 10 and 100).  Latency: jb-pingpong --mode send
--messages 1 (its latency_us is half the mean round trip, osu_latency's definition); without
the warm-up, Intel MPI's first hundred messages put its mean at 8 B 3-5 x above its median.
Bandwidth: jb-pingpong --one-way --messages 64 (a window of 64 MPI_Isend and a one-byte answer,
osu_bw's definition), beside osu_bw -b multiple, which also sends 64 distinct buffers.  osu_bw's
default (-b single) sends one buffer 64 times, which stays in cache: at 1 MiB (64 MiB of
buffers against a 32 MiB cache here) it reports about twice what distinct buffers, as a code
sends them, achieve; its ratio is printed too.  A ratio near 1 says the two measure the same
thing; the spread of the repeats says how near is near.

OSU is looked for as the ReFrame checks do: under $JB_OSU_PREFIX ({environ} standing for the
MPI's name; the programs in libexec/osu-micro-benchmarks/mpi/pt2pt/), else on PATH.  Where it
is missing, the script says so for that MPI.  A benchmark script, not a test:
    .venv/bin/python benchmarks/osu_side_by_side.py [--repeats 5]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from jitterbench import mpi as mpis
from jitterbench import osu

SIZES = [8, 1024, 65536, 1048576]


def find_osu(program, environ):
    prefix = os.environ.get("JB_OSU_PREFIX", "")
    if prefix:
        path = Path(prefix.format(environ=environ), "libexec", "osu-micro-benchmarks", "mpi", "pt2pt", program)
        return str(path) if path.exists() else None
    return shutil.which(program)


def run(m, argv):
    cmd, env = m.launch(2, argv)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"osu_side_by_side: {' '.join(map(str, cmd))} failed: {done.stderr.strip()[:300]}")
    return done.stdout


def jitterbench_values(m, args, field):
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp, "pp.json")
        run(m, [m.binary("pingpong"), *args, "--size", ",".join(map(str, SIZES)), "--json", doc])
        return {r["size"]: r[field] for r in json.loads(doc.read_text())["results"]}


def osu_values(m, program, column, *options):
    text = run(m, [program, *options, "-m", f"{SIZES[0]}:{SIZES[-1]}"])
    return {size: osu.value_at(text, column, size) for size in SIZES}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs of each [5]")
    args = parser.parse_args()
    for m in mpis.available():
        latency, bw = find_osu("osu_latency", m.name), find_osu("osu_bw", m.name)
        if not latency or not bw:
            prefix = os.environ.get("JB_OSU_PREFIX", "")
            where = prefix.format(environ=m.name) if prefix else "PATH"
            print(f"{m.name}: OSU Micro-Benchmarks not found (no osu_latency or osu_bw under {where}; "
                  f"set JB_OSU_PREFIX=/prefix/{{environ}}): skipped")
            continue
        keys = ("jb_lat", "osu_lat", "jb_bw", "osu_bw", "osu_bw_single")
        samples = {key: {s: [] for s in SIZES} for key in keys}
        for _ in range(args.repeats):
            for key, values in (
                    ("jb_lat", jitterbench_values(m, ["--mode", "send", "--messages", "1", "--warmup", "100",
                                                      "--calls", "10000"], "latency_us")),
                    ("osu_lat", osu_values(m, latency, "avg_latency_us")),
                    ("jb_bw", jitterbench_values(m, ["--one-way", "--messages", "64", "--warmup", "10",
                                                     "--calls", "100"], "speed_mb_s")),
                    ("osu_bw", osu_values(m, bw, "bandwidth_mb_s", "-b", "multiple")),
                    ("osu_bw_single", osu_values(m, bw, "bandwidth_mb_s"))):
                for size in SIZES:
                    samples[key][size].append(values[size])
        print(f"\n{m.name}: medians of {args.repeats} interleaved runs (ratio = jitterbench / OSU)")
        print(f"{'size':>9} {'jb lat us':>10} {'osu lat us':>10} {'ratio':>6}   {'jb MB/s':>9} {'osu MB/s':>9} "
              f"{'ratio':>6}   {'osu -b single':>13} {'ratio':>6}")
        for size in SIZES:
            med = {key: statistics.median(samples[key][size]) for key in samples}
            print(f"{size:>9} {med['jb_lat']:>10.2f} {med['osu_lat']:>10.2f} {med['jb_lat'] / med['osu_lat']:>6.2f}   "
                  f"{med['jb_bw']:>9.1f} {med['osu_bw']:>9.1f} {med['jb_bw'] / med['osu_bw']:>6.2f}   "
                  f"{med['osu_bw_single']:>13.1f} {med['jb_bw'] / med['osu_bw_single']:>6.2f}")


if __name__ == "__main__":
    main()
