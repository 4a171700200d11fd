"""How often jb-halo names a task or node among the slowest and the latest (issue 30, item 1):
in clean runs, against the test's stated 1 % family-wise false-alarm rate, and with a wait
injected on one task, whether that task and its node are named and in what share of calls.

    .venv/bin/python benchmarks/culprit_rates.py [--mpi openmpi] [--ranks 2] [--tasks-per-node 1]
        [--clean 20] [--injected 5] [--calls 300] [--sync barrier] [--wait-us 2000] [--p 0.3]
        [--srun "-p vc -N 3 --ntasks-per-node 1 --mpi=pmix"] [--launches 10 [--as-launched]]

--srun launches with srun and those options instead of the MPI's own launcher (the virtual
cluster: eval "$(ci/vcluster/vcluster.sh env)" first); the MPI's yield_vars are set there, since
the virtual cluster's nodes share this machine's cores (jitterbench/mpi.py).

--launches L judges each case over its L launches, as the report does: with holders alike, and
against the clean cases' launches, as `compare` judges a run against a baseline's; launch I rotates the ranks'
roles by --rank-order I, as a check's launches do (jitterbench/harness/launches.sh), unless
--as-launched: the clean cases then say what the rotation removes.

The test's rate holds where the tasks are alike; a run that names a task in a clean run says
they were not (a core that takes interrupts, a rank doing the clocks' work).  A benchmark
script, not a test: what a shared machine does is printed, never asserted.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from jitterbench import mpi as mpis, report_figures


def one_run(m, args, seed, extra):
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp, "halo.json")
        argv = [m.binary("halo"), "--tasks-per-node", str(args.tasks_per_node), "--pattern", "isend-recv",
                "--calls", str(args.calls), "--sync", args.sync, "--seed", str(seed), "--timeout", "120", *extra,
                "--json", doc]  # a hung launch names where it was (the watchdog) before subprocess gives up
        if args.srun:
            cmd, env = ["srun", *shlex.split(args.srun), *map(str, argv)], {**os.environ, **m.yield_vars}
        else:
            cmd, env = m.launch(args.ranks, argv)
        subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
        return json.loads(doc.read_text())["results"][0]  # one pattern, one size


def named(found):
    return ([f"node {e['node']}" for e in found.get("nodes", [])] + [f"task {e['task']}" for e in found.get("tasks", [])])


def over_launches(m, args, culprit):
    """--clean and --injected cases of --launches launches each, every case judged over its launches
    (report_figures.over_launches): with holders alike, and against the launches of the clean cases
    (the other clean cases, for a clean one), as `compare` judges a run against a baseline's."""
    inject = ["--inject", f"{args.p}:{args.wait_us}", "--inject-tasks", str(culprit)]
    print(f"# {m.name}, {args.ranks} ranks, {args.tasks_per_node} a node, {args.calls} calls, cases of {args.launches} "
          f"launches, {'as launched' if args.as_launched else 'the roles rotated by launch (--rank-order)'}; "
          f"a holder named where it held most maxima in more launches than its chance allows")
    launched = {kind: [[one_run(m, args, 10_000 * (kind == "injected") + 100 * c + launch,
                                [*extra, "--rank-order", str(0 if args.as_launched else launch + 1)])
                        for launch in range(args.launches)] for c in range(cases)]
                for kind, cases, extra in (("clean", args.clean, []), ("injected", args.injected, inject))}
    for key in ("slowest", "latest"):
        found = {kind: [[r[key] for r in results if r.get(key)] for results in cases] for kind, cases in launched.items()}
        for kind, cases in found.items():
            naming = Counter()
            for c, founds in enumerate(cases):
                if not founds:
                    continue
                others = [f for i, case in enumerate(found["clean"]) if kind != "clean" or i != c for f in case]
                for against, baseline in (("alike", None), ("clean", report_figures.launches_won(others) if others else None)):
                    held, rate = report_figures.over_launches(founds, baseline)
                    naming[against] += bool(held["nodes"] or held["tasks"])
                    print(f"{kind} case {c} {key}, against {against}: nodes {held['nodes'] or '-'}, "
                          f"tasks {held['tasks'] or '-'} over {len(founds)} launches (rate {rate:.3g})", flush=True)
            print(f"{kind}, {key}: cases naming a holder: {naming['alike']} of {len(cases)} with holders alike, "
                  f"{naming['clean']} against the clean cases' launches")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", default="openmpi", choices=[m.name for m in mpis.ALL])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tasks-per-node", type=int, default=1)
    parser.add_argument("--clean", type=int, default=20)
    parser.add_argument("--injected", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sync", default="barrier", choices=["barrier", "window"])
    parser.add_argument("--wait-us", type=float, default=2000)
    parser.add_argument("--p", type=float, default=0.3)
    parser.add_argument("--srun", default="", help="srun's options: launch with srun instead")
    parser.add_argument("--launches", type=int, default=1,
                        help="launches a case: with more than one, each case's clean and injected launches are "
                             "also judged together (report_figures.over_launches)")
    parser.add_argument("--as-launched", action="store_true",
                        help="with --launches: keep the ranks' roles as launched (no --rank-order rotation)")
    args = parser.parse_args()
    if args.launches < 1:
        parser.error(f"--launches must be at least 1, not {args.launches}")
    m = mpis.by_name(args.mpi)
    culprit = args.ranks - 1
    if args.launches > 1:
        return over_launches(m, args, culprit)
    print(f"# {m.name}{' by srun ' + args.srun if args.srun else ''}, {args.ranks} ranks, {args.tasks_per_node} a node, {args.calls} calls, --sync {args.sync}; "
          f"stated rate 1 % per run and holder")
    clean = [one_run(m, args, 100 + i, []) for i in range(args.clean)]
    for key in ("slowest", "latest"):
        found = [r[key] for r in clean]
        print(f"clean, {key}: {sum(bool(named(f)) for f in found)} of {len(found)} runs name one; "
              f"named {dict(Counter(n for f in found for n in named(f)))}; decided calls, median "
              f"{sorted(f['decided_calls'] for f in found)[len(found) // 2]} of {args.calls}")
    inject = ["--inject", f"{args.p}:{args.wait_us}", "--inject-tasks", str(culprit)]
    node = culprit // args.tasks_per_node
    print(f"injected: {args.p} x {args.wait_us:g} us on task {culprit} (node {node})")
    print("run  waits  latest: decided  task first  node first  its calls  share of all  clock error us  | slowest named")
    for i in range(args.injected):
        r = one_run(m, args, 200 + i, inject)
        late = r["latest"]
        mine = [e for e in late.get("tasks", []) if e["task"] == culprit]
        first_task = bool(late.get("tasks")) and late["tasks"][0]["task"] == culprit
        first_node = bool(late.get("nodes")) and late["nodes"][0]["node"] == node
        print(f"{i:3d}  {r['injected_task_calls']:5d}  {late['decided_calls']:15d}  {str(first_task):>10}"
              f"  {str(first_node):>10}"
              f"  {mine[0]['calls'] if mine else 0:9d}  {mine[0]['share_of_all_calls'] if mine else 0:12.3f}"
              f"  {r['clock_error_us']:14.2f}"
              f"  | {', '.join(named(r['slowest'])) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
