"""jitterbench beside OSU Micro-Benchmarks and IMB, like for like, for every MPI found.

Each row runs one jitterbench program and its anchor at one size, with the same definition
(docs/fidelity.md says each) and the same iteration and warm-up counts, passed to both: OSU
7.4's own defaults (osu_util.h: latency 10,000 and 100 up to 8 KiB, 1,000 and 10 above;
bandwidth 100 and 10, 20 and 2; collectives 1,000 and 100, 100 and 10); the halo rows run 1,000
iterations and jb-halo warms up HALO_WARMUP calls, past a start-up phase of Intel MPI's.
The rows run in interleaved rounds, in an order drawn afresh each round from --seed; each
process measures one size, so no other size or method runs before it in that process.
jitterbench runs with --rounds 1: one variant, one unbroken loop, as the anchors time it.

    latency    jb-pingpong --mode send --messages 1 (latency_us, p50_us / 2)
               against osu_latency -z (Avg, P50): 8 B, 1 KiB, 64 KiB, 1 MiB
    bandwidth  jb-pingpong --one-way --messages 64 --buffers B against osu_bw -b B, B single and
               multiple: 64 KiB, 1 MiB
    alltoall   jb-alltoall --method alltoall (avg_us) against osu_alltoall (Avg): 1 KiB, 64 KiB,
               2 and 4 ranks
    halo       jb-halo --pattern isend-recv on a periodic row (each task sends east and west, as
               IMB Exchange's ring: messages_per_task 2) (avg_us) against IMB-MPI1 Exchange
               (t_avg, -iter_policy off): 1 KiB, 64 KiB, 2 and 4 ranks

The ratio is jitterbench over the anchor; for bandwidth (higher is better) it is still
jitterbench's figure over the anchor's.  Ranks are bound to cores where they fit (each MPI's
bind_vars); 4 ranks on fewer cores are oversubscribed on both sides, and the row says so.

The programs are looked for as the ReFrame checks do: OSU under $JB_OSU_PREFIX
(libexec/osu-micro-benchmarks/mpi/...), IMB-MPI1 under $JB_IMB_PREFIX, jitterbench under
$JB_PREFIX (bin/), {environ} standing for the MPI's name; where one is unset, in the MPI's view
of the Spack environment, $JB_SPACK_VIEWS/<mpi> (spack.yaml builds all three there: IMB-MPI1 in
bin/); else jitterbench from this checkout's build/<mpi>.  An MPI without the anchors is skipped
with a line saying what is missing.
A benchmark script, not a test: timings are printed, never asserted.
    .venv/bin/python benchmarks/fidelity.py [--rounds 7] [--only latency,halo] [--json FILE]
"""
import argparse
import json
import math
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from scipy.stats import binom

from jitterbench import mpi as mpis
from jitterbench import osu, settings
from jitterbench.files import OutputError, writable, write_text

KIB, MIB = 1024, 1024 * 1024
# Intel MPI 2021's shared memory runs a pair's first ~512 messages slowly whenever the receiver
# waits for them, as after jb-halo's per-call barrier (docs/fidelity.md). So jb-halo warms up
# past them on every MPI: 600 calls send 600 messages to each neighbour, 1,200 where one task
# is both. IMB Exchange has no warm-up to set; its ranks wait for each other too where they
# outnumber the cores, so it runs 1,000 iterations at every size (100 at 64 KiB read 49-61 us
# on 4 ranks, 1,000 read 30).
HALO_WARMUP = 600
OSU_SMALL = 8192  # osu_util.h LARGE_MESSAGE_SIZE: above it, the large counts
# (iterations, warm-up) up to OSU_SMALL and above it, osu_util.h's defaults
COUNTS = {"latency": ((10000, 100), (1000, 10)), "bandwidth": ((100, 10), (20, 2)),
          "alltoall": ((1000, 100), (100, 10)), "halo": ((1000, HALO_WARMUP), (1000, HALO_WARMUP))}
WINDOW = 64  # osu_bw's default window (-W)
REPORT = "jitterbench fidelity"
OWN = f'"report": "{REPORT}"'  # what opens the --json document: a file the script may replace


def counts(kind, size):
    return COUNTS[kind][size > OSU_SMALL]


def rows():
    """Every row: (kind, size, ranks, buffer policy or None)."""
    out = [("latency", s, 2, None) for s in (8, KIB, 64 * KIB, MIB)]
    out += [("bandwidth", s, 2, b) for s in (64 * KIB, MIB) for b in ("single", "multiple")]
    out += [(kind, s, n, None) for kind in ("alltoall", "halo") for n in (2, 4) for s in (KIB, 64 * KIB)]
    return out


def label(row):
    kind, size, ranks, buffers = row
    size_text = f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB" if size >= KIB else f"{size} B"
    return f"{kind} {size_text}" + (f" {buffers}" if buffers else "") + (f" {ranks} ranks" if kind in ("alltoall", "halo") else "")


# kind: its anchor program, and where under its install prefix (OSU's libexec folder, or IMB's top)
ANCHORS = {"latency": ("osu_latency", "pt2pt"), "bandwidth": ("osu_bw", "pt2pt"),
           "alltoall": ("osu_alltoall", "collective"), "halo": ("IMB-MPI1", None)}
# kind: jitterbench's program
PROGRAMS = {"latency": "pingpong", "bandwidth": "pingpong", "alltoall": "alltoall", "halo": "halo"}


def view(m):
    """The MPI's view of the Spack environment ($JB_SPACK_VIEWS/<mpi>, spack.yaml's views being
    named as the MPIs), or '' without JB_SPACK_VIEWS."""
    views = os.environ.get("JB_SPACK_VIEWS", "")
    return os.path.join(views, m.name) if views else ""


def anchor_path(m, kind):
    """The anchor's program for kind under its prefix (else in the MPI's Spack view), or (None,
    what is missing)."""
    program, folder = ANCHORS[kind]
    variable = "JB_IMB_PREFIX" if folder is None else "JB_OSU_PREFIX"
    prefix = os.environ.get(variable, "")
    if prefix:
        path = (os.path.join(prefix.format(environ=m.name), program) if folder is None
                else osu.program_path(prefix, m.name, folder, program))
    elif view(m):  # IMB installs its programs in bin/, OSU in libexec/osu-micro-benchmarks/mpi/
        path = os.path.join(view(m), "bin", program) if folder is None else osu.program_path(view(m), m.name, folder, program)
    else:
        return None, f"{variable} or JB_SPACK_VIEWS (unset)"
    return (path, None) if os.access(path, os.X_OK) else (None, f"{program} under {os.path.dirname(path)}")


def jitterbench_path(m, benchmark):
    """jb-<benchmark> as the checks take it: under $JB_PREFIX/bin, else in the MPI's Spack view,
    else this checkout's build/<mpi>."""
    prefix = os.environ.get("JB_PREFIX", "")
    if prefix:
        return os.path.join(prefix.format(environ=m.name), "bin", f"jb-{benchmark}")
    if view(m):
        return os.path.join(view(m), "bin", f"jb-{benchmark}")
    return str(m.binary(benchmark))


def commands(m, row, anchor, json_path):
    """(jitterbench argv, anchor argv, what the two were matched on) of one row."""
    kind, size, ranks, buffers = row
    iters, warm = counts(kind, size)
    common = ["--calls", str(iters), "--warmup", str(warm), "--rounds", "1", "--json", json_path]
    matched = {"iterations": iters, "warmup": warm}
    if kind == "latency":
        jb = [jitterbench_path(m, "pingpong"), "--mode", "send", "--messages", "1", "--size", str(size), *common]
        theirs = [anchor, "-m", f"{size}:{size}", "-i", str(iters), "-x", str(warm), "-z"]
    elif kind == "bandwidth":
        jb = [jitterbench_path(m, "pingpong"), "--one-way", "--messages", str(WINDOW), "--buffers", buffers,
              "--size", str(size), *common]
        theirs = [anchor, "-m", f"{size}:{size}", "-i", str(iters), "-x", str(warm), "-b", buffers,
                  "-W", str(WINDOW)]
        matched.update(buffers=buffers, messages=WINDOW)
    elif kind == "alltoall":
        jb = [jitterbench_path(m, "alltoall"), "--method", "alltoall", "--size", str(size), *common]
        theirs = [anchor, "-m", f"{size}:{size}", "-i", str(iters), "-x", str(warm)]
    else:  # IMB Exchange, -iter fixed with -iter_policy off; IMB warms up as it does
        jb = [jitterbench_path(m, "halo"), "--pattern", "isend-recv", "--size", str(size), *common]
        log = int(math.log2(size))
        theirs = [anchor, "Exchange", "-msglog", f"{log}:{log}", "-iter", str(iters), "-iter_policy", "off",
                  "-npmin", str(ranks)]
        matched["messages_per_task"] = 2  # IMB Exchange: Isend to both neighbours of the ring
    return jb, theirs, matched


def median_interval(values, confidence=0.95):
    """A distribution-free interval of the median from order statistics: [x_(k), x_(n+1-k)],
    which holds it with probability 1 - 2 P(Binomial(n, 1/2) < k) >= confidence; (nan, nan) where
    too few values reach it (n < 6 at 95 %)."""
    x, n = sorted(values), len(values)
    k = int(binom.ppf((1 - confidence) / 2, n, 0.5))
    return (x[k - 1], x[n - k]) if k >= 1 else (math.nan, math.nan)


def imb_table(text, size):
    """IMB's row at size: {column: value}, columns as IMB names them (t_avg[usec], ...)."""
    header = None
    for line in text.splitlines():
        cells = line.split()
        if cells[:2] == ["#bytes", "#repetitions"]:
            header = cells
        elif header and cells and cells[0].isdigit() and int(cells[0]) == size:
            return dict(zip(header, map(float, cells)))
    raise ValueError(f"no IMB row for {size} bytes")


def measure(m, row, anchor, cores):
    """One round of a row: (jitterbench's figures, the anchor's, the definitions as they ran)."""
    kind, size, ranks, buffers = row
    with tempfile.TemporaryDirectory() as tmp:
        jb, theirs, matched = commands(m, row, anchor, "jb.json")
        bound = ranks <= cores

        def run(argv):
            cmd, env = m.launch(ranks, argv)
            if bound:
                env.update(m.bind_vars)
            done = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                sys.exit(f"fidelity: {shlex.join(map(str, cmd))} failed: {done.stderr.strip()[:300]}")
            return done.stdout

        run(jb)
        text = run(theirs)
        doc = json.loads(Path(tmp, "jb.json").read_text())
    (result,) = doc["results"]
    ran = {"iterations": result.get("calls", result.get("cycles")), "warmup": doc["config"].get("warmup"),
           "oversubscribed": doc["metadata"]["placement"]["nodes_oversubscribed"] > 0, "bound": bound}
    if kind == "latency":
        ours = {"mean": result["latency_us"], "p50": result["p50_us"] / 2}
        theirs_ = {"mean": osu.value_at(text, "avg_latency_us", size), "p50": osu.value_at(text, "p50_tail_lat_us", size)}
    elif kind == "bandwidth":
        ours = {"mean": result["speed_mb_s"]}
        theirs_ = {"mean": osu.value_at(text, "bandwidth_mb_s", size)}
        ran.update(buffers=result["buffers"], messages=result["messages"])
    elif kind == "alltoall":
        ours = {"mean": result["avg_us"]}
        theirs_ = {"mean": osu.value_at(text, "avg_latency_us", size)}
    else:
        imb = imb_table(text, size)
        ours = {"mean": result["avg_us"]}
        theirs_ = {"mean": imb["t_avg[usec]"]}
        ran.update(messages_per_task=result["messages_per_task"], anchor_iterations=int(imb["#repetitions"]))
    return ours, theirs_, {"matched": matched, "ran": ran, "jitterbench_command": shlex.join(map(str, jb)),
                           "anchor_command": shlex.join(map(str, theirs))}


def main():
    try:
        settings.check()
        fidelity()
    except (settings.SettingError, OutputError) as e:
        sys.exit(f"fidelity: {e}")
    except subprocess.TimeoutExpired as e:
        sys.exit(f"fidelity: {shlex.join(map(str, e.cmd))} ran over {e.timeout:g} s")
    except KeyboardInterrupt:
        sys.exit("fidelity: interrupted; nothing written")


def fidelity():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds [7]")
    parser.add_argument("--only", default="", help="these kinds: latency,bandwidth,alltoall,halo [all]")
    parser.add_argument("--mpi", default="", help="these MPIs: openmpi,mpich,intelmpi [every one found]")
    parser.add_argument("--seed", type=int, default=12345, help="seed of the rounds' orders [12345]")
    parser.add_argument("--json", help="every round's figures and the rows' commands, as JSON")
    args = parser.parse_args()
    kinds = set(filter(None, args.only.split(","))) or set(COUNTS)
    unknown = kinds - set(COUNTS)
    if unknown or args.rounds < 1:
        sys.exit(f"fidelity: {'--rounds must be at least 1' if args.rounds < 1 else 'no kind ' + ', '.join(unknown)}")
    wanted = set(filter(None, args.mpi.split(",")))
    if wanted - {m.name for m in mpis.ALL}:
        sys.exit(f"fidelity: --mpi: no MPI {', '.join(sorted(wanted - {m.name for m in mpis.ALL}))} "
                 f"(one of {', '.join(m.name for m in mpis.ALL)})")
    if args.json:  # refused now, not after the rounds
        writable(args.json, own=OWN)
    cores = len(os.sched_getaffinity(0))
    rng = random.Random(args.seed)
    report = {"report": REPORT, "seed": args.seed, "rounds": args.rounds, "cores": cores, "mpis": {}}
    for m in mpis.available():
        if wanted and m.name not in wanted:
            continue
        anchors, missing = {}, set()
        for kind in kinds:
            path, what = anchor_path(m, kind)
            ours = jitterbench_path(m, PROGRAMS[kind])
            if not os.access(ours, os.X_OK):
                path, what = None, f"jb-{PROGRAMS[kind]} at {ours}"
            anchors[kind] = path
            if what:
                missing.add(what)
        if missing:
            print(f"{m.name}: skipped rows without their anchor: no {'; no '.join(sorted(missing))}")
        todo = [r for r in rows() if r[0] in kinds and anchors[r[0]]]
        if not todo:
            continue
        samples = {r: [] for r in todo}
        for _ in range(args.rounds):
            for row in rng.sample(todo, len(todo)):
                samples[row].append(measure(m, row, anchors[row[0]], cores))
        entries = report["mpis"][m.name] = []
        print(f"\n{m.name}: {args.rounds} interleaved round(s); ratio = jitterbench / anchor, median over rounds, "
              f"its 95 % interval (order statistics) and the lowest-highest round; figures are medians over rounds "
              f"(us; MB/s for bandwidth)")
        print(f"{'row':<26} {'figure':<6} {'jitterbench':>11} {'anchor':>10} {'ratio':>6} {'95 % interval':<13} "
              f"{'rounds':<13} note")
        for row in todo:
            runs = samples[row]
            for figure in runs[0][0]:
                ratios = [ours[figure] / theirs[figure] if theirs[figure] else math.nan for ours, theirs, _ in runs]
                median, (low, high) = statistics.median(ratios), median_interval(ratios)
                info = runs[0][2]
                notes = ["oversubscribed: more ranks than cores"] if info["ran"]["oversubscribed"] else []
                if not 0.95 <= median <= 1.05:
                    notes.append("the interval holds 1: not resolved from the rounds' spread" if low <= 1 <= high
                                 else "differs")
                print(f"{label(row):<26} {figure:<6} {statistics.median(o[figure] for o, _, _ in runs):>11.3f} "
                      f"{statistics.median(t[figure] for _, t, _ in runs):>10.3f} {median:>6.3f} "
                      f"{f'[{low:.2f}-{high:.2f}]':<13} {f'[{min(ratios):.2f}-{max(ratios):.2f}]':<13} "
                      f"{'; '.join(notes)}")
                entries.append({**info, "row": label(row), "kind": row[0], "size": row[1], "ranks": row[2],
                                "figure": figure, "ratios": ratios, "median_ratio": median,
                                "median_interval": [low, high],
                                "jitterbench": [o[figure] for o, _, _ in runs],
                                "anchor": [t[figure] for _, t, _ in runs],
                                "ran": [i["ran"] for _, _, i in runs]})
        print("commands (one per row):")
        for row in todo:
            info = samples[row][0][2]
            print(f"  {label(row)}\n    jitterbench: {info['jitterbench_command']}\n    anchor:      {info['anchor_command']}")
    if args.json:
        write_text(args.json, json.dumps(report, indent=1), own=OWN)


if __name__ == "__main__":
    main()
