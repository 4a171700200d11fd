"""The verdict's false alarms and power on real runs of this machine (issue 28's known answers).

    python benchmarks/verdict_rates.py false-alarms --runs 20 --out DIR
    python benchmarks/verdict_rates.py power --factors 1.5,2 --runs 5 --out DIR
    python benchmarks/verdict_rates.py node --period-us 1000 --quota-us 1400 --runs 10 --out DIR
    python benchmarks/verdict_rates.py link-rate --rate 500mbit --runs 3 --out DIR -- -n PingPongCheck -P nodes=2
    python benchmarks/verdict_rates.py peer --node 2 --period-us 2000 --quota-us 1000 --runs 10 --out DIR -- -n PingPongCheck

false-alarms runs the quick suite (`reframe --mode quick`, as ci/main.sh does, with the
binaries ci/setup.sh built; JB_ROUNDS rounds of JB_LAUNCHES launches a case, 10 of 1 unless set)
RUNS times one after the other on a quiet machine, each check failed under an MPI judged again
as the main job does (`jitterbench again`), and counts the runs that failed a first attempt and
those with a case failed after the second, against what the references' false-alarm rates an
attempt and a run predict (the binomial 95 % interval of RUNS runs at the run's rate), and those
with an inconclusive case (a launch disturbed through every try: never judged); it names every
failed variable.

power slows one benchmark by a known factor with the core's calibrated delay: CHECK (JacobiCheck)
under each MPI where its TARGET (max_waitall, the halo's per-call MAX) is bounded, with --inject
1:US, US chosen from the target's reference so that its median moves by FACTOR (every task waits
US at every call, so the MAX moves by about US), and prints per MPI and factor how many runs
failed naming the target (in both attempts: the check failed and then failed again, with the
slowdown in each) beside the reference's minimum detectable slowdown: a factor above it should be
detected in (nearly) every run, one below it seldom; and in how many runs a node finding took the
blame instead (node first: the benchmark's own slowdown should name no node).

node slows the whole node from outside the benchmarks, a cgroup's CPU quota over every process of the
run (root, cgroup v1's cpu controller), and counts the runs whose node finding named the compute probe
with no case failed: node first (docs/references.md).

link-rate cuts every rate-limited link of the virtual cluster (vcluster.sh rate RATE, after
`up --rails 1 --link-rate R`), runs the quick suite RUNS times there (ReFrame options after --,
e.g. -n PingPongCheck -P nodes=2), and restores the rate.  Per bounded variable it prints the
runs in which it failed beside its slowdown (median of the runs' values against the reference)
and its minimum detectable slowdown.

peer, on the virtual cluster (`up 3 --rails 1 --link-rate R`, its `env` evaluated), slows one node:
its slurmd and so every task it starts in a cgroup's CPU quota (--quota-us; the cluster's jobs run
under proctrack/linuxproc, so its tasks stay in slurmd's group), or with --slow-link RATE that node's
links instead (vcluster.sh rate RATE N), or nothing with --clean; and counts the runs whose launches
named a node slowest among its peers (jitterbench/peers.py), and which.

All read the references the checks do (checkout.reference_files: the machine's own, then
reference_data/); every run's output stays under --out.  Timings: nothing here asserts;
the figures go in the issue's note.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jitterbench import checkout, fingerprint, references, reframe_report, settings, verdict_table  # noqa: E402

REFRAME = REPO / ".venv" / "bin" / "reframe"
MPIS = ("openmpi", "mpich", "intelmpi")


def prefix(root: Path) -> Path:
    """JB_PREFIX's root: <root>/<environ>/bin holding build/<MPI>'s binaries (ci/setup.sh), also for
    the transport variants of an MPI (the virtual cluster's openmpi-ucx, mpich-ofi)."""
    for name in (*MPIS, "openmpi-ucx", "mpich-ofi"):
        built = REPO / "build" / name.split("-")[0]
        if (built / "jb-halo").exists():
            (root / name).mkdir(parents=True, exist_ok=True)
            if not (root / name / "bin").exists():
                (root / name / "bin").symlink_to(built)
    return root


def quick_run(out: Path, *args, preexec_fn=None) -> tuple:
    """One quick run into out, judged as the main job judges it: each check failed under an MPI run
    again at once, alone (jitterbench again, "Two attempts").  Its measured cases (ReFrame report
    entries), each its last attempt, and the (check, MPI) that failed the first attempt."""
    env = dict(os.environ, JB_OUTPUT=str(out), JB_PREFIX=str(prefix(out.parent / "prefix")) + "/{environ}")
    command = [str(REFRAME), "-C", "systems/config.py", "--mode", "quick", *args, "-r"]
    report = out / "report.json"
    with open(out.parent / f"{out.name}.log", "w") as log:
        subprocess.run(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=3600,
                       preexec_fn=preexec_fn)
        if not report.exists():
            return [], []
        first = verdict_table.failed([report])
        if first:
            subprocess.run([sys.executable, "-m", "jitterbench", "again", str(report), "--", *command], cwd=REPO,
                           env=env, stdout=log, stderr=subprocess.STDOUT, timeout=3600, preexec_fn=preexec_fn)
    return reframe_report.report_cases(report)[1], first


def failed_variables(case) -> list:
    """The variables of a case past their bounds (ReFrame's result per variable)."""
    return [name.split(":")[-1] for name, pv in (case.get("perfvalues") or {}).items() if pv[5:6] == ["fail"]]


def false_alarms(args):
    doc = the_references()
    rate, per_attempt = doc["provenance"]["false_alarm_rate"], doc["provenance"].get("false_alarm_rate_per_attempt")
    failed_runs = inconclusive_runs = first_failed = 0
    for k in range(1, args.runs + 1):
        started = time.monotonic()
        cases, first = quick_run(args.out / f"run-{k}")
        outcomes = [reframe_report.outcome(c) for c in cases]
        bad = [c for c, o in zip(cases, outcomes) if o == "fail"]
        failed_runs += bool(bad)
        first_failed += bool(first)
        inconclusive_runs += reframe_report.INCONCLUSIVE in outcomes
        what = "; ".join(f"{c['display_name'].split()[0]} {c['environ']}: {', '.join(failed_variables(c)) or '?'}"
                         for c in bad)
        print(f"run {k:2d}: {len(cases)} cases, first attempt failed {', '.join(map(' under '.join, first)) or 'none'}; "
              f"{len(bad)} failed, {outcomes.count(reframe_report.INCONCLUSIVE)} inconclusive "
              f"({time.monotonic() - started:.0f} s) {what}", flush=True)
    low, high = stats.binom.interval(0.95, args.runs, rate)
    print(f"\nOf {args.runs} clean quick runs, {first_failed} failed a first attempt (the references' "
          f"{per_attempt or rate:g} an attempt predicts {args.runs * (per_attempt or rate):.2f}), {failed_runs} had a "
          f"case fail after the second and {inconclusive_runs} had one inconclusive; the references' rate "
          f"{rate:g} a run predicts {args.runs * rate:.2f} failed (95 % of such series: {low:.0f} to {high:.0f})")


def the_references():
    files = checkout.reference_files("local")
    for path in files:
        doc = references.load(path)
        facts = {"cpu": fingerprint.this_host(), "check": "HaloCheck",
                 "launches": fingerprint.made_of(settings.launches(), settings.rounds())}
        if not fingerprint.differences(doc.get("fingerprint"), facts, None):
            print(f"references: {path} ({doc['provenance'].get('repeats')} repeats, "
                  f"{doc['provenance'].get('asserted')} asserted)")
            return doc
    raise SystemExit(f"no reference file of this machine among {files or 'none'}: record a baseline first "
                     f"(bash ci/main.sh)")


def leaf_of(doc, check, environ, variable):
    """The reference entry [value, lower, upper, unit] of variable in check's quick case under environ."""
    def walk(node):
        if variable in node:
            return node[variable]
        return next((found for v in node.values() if isinstance(v, dict) for found in [walk(v)] if found), None)
    return walk(doc[check]["local:default"][environ])


def power(args):
    doc = the_references()
    factors = [float(f) for f in args.factors.split(",")]
    print(f"{args.check} {args.target}: every task waits US us a call (--inject 1:US), US = (factor - 1) x the "
          f"reference's median; detected = runs in which the target failed its bound")
    print(f"{'MPI':9} {'factor':>6} {'US':>7} {'median':>8} {'detectable':>10} {'detected':>8} {'node':>6}  "
          f"other variables failed")
    for environ in MPIS:
        entry = leaf_of(doc, args.check, environ, args.target)
        detectable = references.detectable_slowdown(entry) if entry else None
        if detectable is None:
            print(f"{environ:9} not assertable here: no bound on {args.target} (the file's not_assertable says why)")
            continue
        for factor in factors:
            us = (factor - 1) * entry[0]
            detected, node_named, others = 0, 0, set()
            for k in range(1, args.runs + 1):
                # environ alone (ReFrame 4.10 leaves -p aside under --mode: -S narrows the environments)
                cases, _ = quick_run(args.out / f"{environ}-x{factor:g}-{k}", "-n", args.check, "-S",
                                     f"inject=1:{us:.3f}", "-S", f"valid_prog_environs={environ}")
                ours = [c for c in cases if c["environ"] == environ]
                bad = [v for c in ours for v in failed_variables(c)]
                detected += args.target in bad
                # the slowdown is the benchmark's, not the node's: a node finding here blames the node wrongly
                node_named += bool(reframe_report.moved_nodes(ours))
                others.update(v for v in bad if v != args.target)
            print(f"{environ:9} {factor:6.2f} {us:7.2f} {entry[0]:8.2f} {detectable:10.2f} "
                  f"{detected:3d}/{args.runs:<4d} {node_named:3d}/{args.runs:<2d}  {', '.join(sorted(others)) or '-'}",
                  flush=True)


CGROUP_CPU = Path("/sys/fs/cgroup/cpu")  # cgroup v1's cpu controller
SLICE = Path("/proc/sys/kernel/sched_cfs_bandwidth_slice_us")
LEAST_US = 1000  # the least CFS period and quota the kernel takes (1 ms)


@contextlib.contextmanager
def cpu_quota(name, period_us, quota_us, slice_us):
    """A cgroup (v1 cpu controller) whose CFS quota lets its processes run quota_us of each period_us
    over all CPUs, the kernel's quota slice at slice_us while it stands; yields its folder.  On leaving,
    every process still in it goes back to the root group, the group goes, and the slice is restored.
    The slice: the quota is handed to each CPU in slices of this many us (5,000 by default), and with a
    1 ms period one CPU took a whole period's quota at once, so a launch's probe was either not slowed
    at all (2,030 us) or by 1.7-2.2x (3,400-4,400 us), and a case whose launches were mostly spared was
    judged and failed.  A slice of 100 us spreads the quota over both CPUs in every period."""
    group = CGROUP_CPU / f"jitterbench-{name}-{os.getpid()}"
    slice_was = SLICE.read_text().strip()
    try:
        SLICE.write_text(str(slice_us))
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text(str(period_us))
        (group / "cpu.cfs_quota_us").write_text(str(quota_us))
        yield group
    finally:
        if group.exists():
            for pid in (group / "cgroup.procs").read_text().split():
                (CGROUP_CPU / "cgroup.procs").write_text(pid)
            group.rmdir()
        SLICE.write_text(slice_was)


def node(args):
    """The quick suite RUNS times on a node slowed from outside the benchmarks: every process of the run
    in a cgroup (v1 cpu controller) whose CFS quota lets it run QUOTA us of each PERIOD us over all
    CPUs, judged as the main job judges it.  Per run: the cases whose node finding named the compute
    probe (and the node), the cases failed (the benchmarks blamed), and how uniform the slowdown was:
    each case's probe against its reference (min, median, max over the cases)."""
    doc = the_references()
    print(f"references: {doc['provenance']['repeats']} repeats; a cgroup with cpu.cfs_period_us={args.period_us}, "
          f"cpu.cfs_quota_us={args.quota_us} ({args.quota_us / args.period_us:.2f} of {os.cpu_count()} CPUs), "
          f"the quota handed out in slices of {args.slice_us} us")
    with cpu_quota("slowed", args.period_us, args.quota_us, args.slice_us) as group:
        named_runs = blamed_runs = 0
        for k in range(1, args.runs + 1):
            started = time.monotonic()
            cases, _ = quick_run(args.out / f"run-{k}", preexec_fn=lambda: (group / "tasks").write_text(str(os.getpid())))
            ratios, named, held, nodes = [], 0, 0, set()
            for c in cases:
                pv = (c.get("perfvalues") or {}).get("local:default:node_probe_us")
                if pv and pv[0] and pv[1]:
                    ratios.append(pv[0] / pv[1])
                finding = json.loads(c.get("node_finding") or "{}")
                if (reframe_report.outcome(c) == reframe_report.INCONCLUSIVE
                        and "node_probe_us" in finding.get("past", {})):
                    named += 1
                    nodes.add(finding["past"]["node_probe_us"]["node"])
                held += reframe_report.outcome(c) == reframe_report.INCONCLUSIVE and bool(finding.get("moved"))
            failed = [c for c in cases if reframe_report.outcome(c) == "fail"]
            named_runs += bool(named) and not failed
            blamed_runs += bool(failed)
            spread = (f"{min(ratios):.2f}/{statistics.median(ratios):.2f}/{max(ratios):.2f}" if ratios else "-")
            print(f"run {k:2d}: {len(cases)} cases, node finding naming the compute probe in {named} "
                  f"(node {', '.join(sorted(nodes)) or '-'}), {held} failed on it held back (node first over the run), "
                  f"{len(failed)} failed "
                  f"({', '.join(c['display_name'].split()[0] + ' ' + c['environ'] for c in failed) or 'none'}); "
                  f"probe against its reference min/median/max over the cases {spread} "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
        print(f"\nOf {args.runs} runs on the slowed node, {named_runs} named the node's compute probe and blamed no "
              f"benchmark; {blamed_runs} failed some case")


def vcluster_state() -> Path:
    """Where the virtual cluster keeps its state (ci/vcluster/vcluster.sh's STATE)."""
    return Path(os.environ.get("JB_VCLUSTER_DIR", "/run/jitterbench-vcluster"))


def peer(args):
    """RUNS quick runs on the virtual cluster with node NODE slowed (a CPU quota on its slurmd, or its
    links with --slow-link), or none (--clean): per run, the nodes named slowest among their peers
    (reframe_report.node_first: peers.slow_nodes), the cases failed and those not judged."""
    state = vcluster_state()
    vcluster = REPO / "ci" / "vcluster" / "vcluster.sh"
    env = {"JB_ROUNDS": os.environ.get("JB_ROUNDS", "1"), "JB_LAUNCHES": os.environ.get("JB_LAUNCHES", "10")}
    os.environ.update(env)
    pid_file = state / f"slurmd.node{args.node}.pid"
    if not pid_file.exists():
        sys.exit(f"verdict_rates: no node{args.node} of a virtual cluster is up ({pid_file}): "
                 "bash ci/vcluster/vcluster.sh up 3 --rails 1 --link-rate 1gbit")
    link_was = (state / "link-rate").read_text().strip() if (state / "link-rate").exists() else None
    if args.slow_link and not link_was:
        sys.exit("verdict_rates: --slow-link needs rate-limited links: bring the cluster up with --link-rate")
    if args.clean:
        how = "nothing slowed"
    elif args.slow_link:
        how = f"node{args.node}'s links at {args.slow_link} (the others' at {link_was})"
    else:
        how = (f"node{args.node}'s slurmd and its tasks in a CPU quota of {args.quota_us} us per {args.period_us} us "
               f"({args.quota_us / args.period_us:.2f} CPUs; slices of {args.slice_us} us)")
    print(f"virtual cluster, {how}; JB_ROUNDS={env['JB_ROUNDS']} JB_LAUNCHES={env['JB_LAUNCHES']}; "
          f"ReFrame: {' '.join(args.reframe)}", flush=True)
    with contextlib.ExitStack() as slowed:
        if args.slow_link:
            slowed.callback(subprocess.run, ["bash", str(vcluster), "rate", link_was, str(args.node)], check=True)
            subprocess.run(["bash", str(vcluster), "rate", args.slow_link, str(args.node)], check=True)
        elif not args.clean:
            group = slowed.enter_context(cpu_quota(f"node{args.node}", args.period_us, args.quota_us, args.slice_us))
            # the tasks its job steps start inherit the group
            (group / "cgroup.procs").write_text(pid_file.read_text().strip())
        named_runs, right_runs = 0, 0
        for k in range(1, args.runs + 1):
            started = time.monotonic()
            cases, _ = quick_run(args.out / f"run-{k}", "--system", "vcluster", *args.reframe)
            slow = next((json.loads(c["node_peers"]) for c in cases if c.get("node_peers")), {})
            outcomes = [reframe_report.outcome(c) for c in cases]
            failed = [c for c, o in zip(cases, outcomes) if o == "fail"]
            named_runs += bool(slow)
            right_runs += set(slow) == {f"node{args.node}"}
            said = "; ".join(f"{n} slowest in {f['slowest']}/{f['launches']} (p {f['p']:.1g}, lag {f['lag'] or 0:.2f}x)"
                             for n, f in sorted(slow.items())) or "none named"
            print(f"run {k:2d}: {len(cases)} cases, {said}; {len(failed)} failed "
                  f"({', '.join(c['display_name'].split()[0] + ' ' + c['environ'] for c in failed) or 'none'}), "
                  f"{outcomes.count(reframe_report.INCONCLUSIVE)} not judged ({time.monotonic() - started:.0f} s)",
                  flush=True)
    print(f"\nOf {args.runs} runs ({how}), {named_runs} named a node slowest among its peers, {right_runs} "
          f"named node{args.node} alone")


def link_rate(args):
    vcluster = REPO / "ci" / "vcluster" / "vcluster.sh"
    before = (vcluster_state() / "link-rate").read_text().strip()
    subprocess.run(["bash", str(vcluster), "rate", args.rate], check=True)
    try:
        runs = [quick_run(args.out / f"run-{k}", "--system", args.system, *args.reframe)[0]
                for k in range(1, args.runs + 1)]
    finally:
        subprocess.run(["bash", str(vcluster), "rate", before], check=True)
    unbounded = not_assertable(args.system)
    seen = {}
    for cases in runs:
        for c in cases:
            params = {t.split("=", 1)[1] for t in c["display_name"].split()[1:] if "=" in t}
            for name, pv in (c.get("perfvalues") or {}).items():
                var = name.split(":")[-1]
                mds = references.detectable_slowdown(pv[1:4]) if pv[1] else None
                if mds is None:  # not assertable here: the slowdown its noise hides, from the file
                    mds = next((m for (check, environ, v, at), m in unbounded.items() if check == c["display_name"].split()[0]
                                and environ == c["environ"] and v == var and set(at) <= params), None)
                    bounded = False
                else:
                    bounded = True
                if mds is None or pv[0] is None or not pv[1]:
                    continue
                key = (c["display_name"], c["environ"], var)
                higher_worse = pv[3] is not None or (not bounded and (pv[4] or "") != "MB/s")
                slowdown = pv[0] / pv[1] if higher_worse else pv[1] / pv[0]
                entry = seen.setdefault(key, {"mds": mds, "slowdowns": [], "failed": 0, "bounded": bounded})
                entry["slowdowns"].append(slowdown)
                entry["failed"] += pv[5:6] == ["fail"]
    print(f"links at {args.rate} (were {before}); {args.runs} runs of the quick suite {' '.join(args.reframe)}; "
          f"per variable: runs failed ('-': not assertable, never judged), its slowdown (median over the runs, "
          f"against the reference) and the slowdown its reference detects")
    rows = sorted(seen.items(), key=lambda kv: -statistics.median(kv[1]["slowdowns"]))
    for (case, environ, var), e in rows[:args.show]:
        failed = f"{e['failed']:2d}/{args.runs}" if e["bounded"] else "   -  "
        print(f"{failed}  x{statistics.median(e['slowdowns']):6.3g}  detectable x{e['mds']:<9.3g} "
              f"{environ:11} {var}  {case.split()[0]} {' '.join(case.split()[1:3])}")
    bounded = [e for e in seen.values() if e["bounded"]]
    print(f"{len(bounded)} bounded variables, {sum(e['failed'] > 0 for e in bounded)} failed in at least one run; "
          f"{len(seen) - len(bounded)} not assertable here")


def not_assertable(system) -> dict:
    """(check, environ, variable, parameter values) -> detectable slowdown of the variables the
    system's reference file lists as not assertable."""
    files = checkout.reference_files(system)
    if not files:
        return {}
    doc = references.load(files[0])
    return {(e["check"], e["at"][1], e["variable"], tuple(str(x) for x in e["at"][2:])): e["detectable_slowdown"]
            for e in doc.get("not_assertable", [])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("false-alarms", "power", "node", "link-rate", "peer"))
    parser.add_argument("--period-us", type=int, default=1000, help="node: the cgroup's CFS period (short: a long one stalls)")
    parser.add_argument("--quota-us", type=int, default=1400, help="node: the run's CPU time in each period, all CPUs")
    parser.add_argument("--slice-us", type=int, default=100,
                        help="node: the kernel's sched_cfs_bandwidth_slice_us while it runs (restored after)")
    parser.add_argument("--rate", default="500mbit", help="link-rate: the rate every link is cut to")
    parser.add_argument("--system", default="vcluster", help="link-rate: the virtual cluster's system")
    parser.add_argument("--show", type=int, default=25, help="link-rate: the variables shown, nearest detection first")
    parser.add_argument("--node", type=int, default=2, help="peer: the virtual cluster's node slowed")
    parser.add_argument("--slow-link", help="peer: slow the node's links to this rate instead (e.g. 50mbit)")
    parser.add_argument("--clean", action="store_true", help="peer: slow nothing")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--factors", default="1.5,2")
    parser.add_argument("--check", default="JacobiCheck", help="a check whose benchmark takes --inject (halo, jacobi)")
    parser.add_argument("--target", default="max_waitall", help="the variable the slowdown is set against")
    parser.add_argument("--out", type=Path, required=True, help="a new folder for every run's output")
    # link-rate: ReFrame's options after -- (argparse would take them for its own)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.reframe = argv[cut + 1:]
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if min(args.period_us, args.quota_us) < LEAST_US:
        parser.error(f"--period-us and --quota-us must be at least {LEAST_US} (the kernel's least CFS period and quota)")
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=False)
    {"false-alarms": false_alarms, "power": power, "node": node, "link-rate": link_rate, "peer": peer}[args.what](args)


if __name__ == "__main__":
    try:
        main()
    except FileExistsError as e:
        sys.exit(f"verdict_rates: {e.filename} exists: name a new folder")
    except PermissionError as e:
        sys.exit(f"verdict_rates: {e.filename}: cannot write it (node and peer run as root: cgroups, the kernel's slice)")
    except KeyboardInterrupt:
        sys.exit("verdict_rates: interrupted")
