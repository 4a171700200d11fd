"""`jitterbench history`'s known answers (issue 29): detection and false alarms of a step, and
its time at scale.

    python benchmarks/history_rates.py steps RUN_REPORT... [--series 50] [--runs 15] [--at 10]
    python benchmarks/history_rates.py scale RUN_REPORT [--runs 1000] [--variables 500]

steps draws SERIES synthetic histories from recorded clean quick runs of this machine (ReFrame
run reports, e.g. the 20 runs of verdict_rates.py false-alarms and the 5 of a baseline): each
history is RUNS of those reports in a random order without repeats (a report is a whole run, so
the variables of one run stay as they varied together), renumbered one a day.  From run AT on,
every time (us) of CHECK under ENVIRON is multiplied by FACTOR: the calibrated slowdown, as the
core's --inject would make it, applied to recorded runs.  Per factor it prints how often the
target variable's change point is found at AT +- 1 with its step within 20 % of FACTOR, how
often the history fails naming it, and, with no slowdown, how often any series has a change
point or the history fails (its false alarms).

scale times reading a results store of RUNS sessions (ReFrame's schema) of at least VARIABLES
variables each (a recorded run's cases, repeated) and finding the change points of every series.  Nothing here asserts; the figures go in the
issue's note.
"""
from __future__ import annotations

import argparse
import copy
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jitterbench import history, reframe_report  # noqa: E402

DAY = 86400


def recorded(paths):
    """Each report's last attempts (reframe_report.last_attempts), read once."""
    return [reframe_report.last_attempts(reframe_report.read_report(p)) for p in paths]


def synthetic(runs_cases, order, at, factor, check, environ):
    """Run reports of the recorded runs in order, CHECK's times under ENVIRON times factor from run at on."""
    out = []
    for i, k in enumerate(order):
        cases = runs_cases[k]
        if i + 1 >= at and factor != 1:
            cases = [copy.deepcopy(c) if c["display_name"].startswith(check) and c["environ"] == environ else c
                     for c in cases]
            for c in cases:
                if c["display_name"].startswith(check) and c["environ"] == environ:
                    for pv in c["perfvalues"].values():
                        if pv[4] == "us" and pv[0] is not None:
                            pv[0] *= factor
        out.append({"session_info": {"uuid": f"s{i}", "time_start_unix": 1.8e9 + i * DAY},
                    "runs": [{"testcases": cases}]})
    return out


def steps(args):
    runs_cases = recorded(args.reports)
    if len(runs_cases) < args.runs:
        raise SystemExit(f"history_rates: {args.runs} runs a series need as many recorded runs; "
                         f"{len(runs_cases)} given")
    rng = np.random.default_rng(args.seed)
    orders = [rng.permutation(len(runs_cases))[:args.runs] for _ in range(args.series)]
    target = None
    print(f"{args.series} histories of {args.runs} of {len(runs_cases)} recorded runs; from run {args.at}, "
          f"{args.check}'s times under {args.environ} x FACTOR; target {args.variable}")
    print(f"{'factor':>6} {'found at +-1':>12} {'size in 20 %':>12} {'alarm on it':>11} {'any alarm':>9} "
          f"{'series with a change point':>26}  step found (median, range)")
    for factor in [1.0, *args.factors]:
        found = sized = alarmed = failed = stepped = 0
        total_series, sizes = 0, []
        for order in orders:
            h = history.read(synthetic(runs_cases, order, args.at, factor, args.check, args.environ))
            total_series += len(h.series)
            stepped += sum(bool(s.change_points) for s in h.series)
            failed += any(s.alarm() for s in h.series)
            target = [s for s in h.series if s.case.startswith(args.check) and s.environ == args.environ
                      and s.variable == args.variable]
            if not target:
                raise SystemExit(f"history_rates: no series {args.variable} of {args.check} under {args.environ}")
            near = [cp for cp in target[0].change_points if abs(cp.index + 1 - args.at) <= 1]
            found += bool(near)
            if near:
                sizes.append(near[0].step)
                sized += abs(near[0].step / factor - 1) <= 0.2
            alarmed += target[0].alarm() is not None
        spread = f"{np.median(sizes):.3g} ({min(sizes):.3g}-{max(sizes):.3g})" if sizes else "-"
        print(f"{factor:6.2f} {found:5d}/{args.series:<6d} {sized:5d}/{args.series:<6d} {alarmed:4d}/{args.series:<6d}"
              f" {failed:3d}/{args.series:<5d} {stepped:8d} of {total_series:<15d}  {spread}", flush=True)


def scale(args):
    """A store of RUNS sessions, each a recorded run's cases repeated under other names until
    they hold VARIABLES variables, every value times a lognormal factor of its own."""
    rng = np.random.default_rng(args.seed)
    report = reframe_report.read_report(args.report)
    cases = reframe_report.last_attempts(report)
    per_copy = sum(len(c.get("perfvalues") or {}) for c in cases)
    copies = -(-args.variables // per_copy)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "results.db"
        with sqlite3.connect(store) as db:
            db.execute("CREATE TABLE sessions(uuid TEXT PRIMARY KEY, session_start_unix REAL, session_end_unix REAL, "
                       "json_blob TEXT, report_file TEXT)")
            for i in range(args.runs):
                run = []
                for k in range(copies):
                    for c in cases:
                        c = dict(c, display_name=f"{c['display_name']} %copy={k}", copy=k,
                                 perfvalues={n: [pv[0] * rng.lognormal(0, 0.1) if pv[0] else pv[0], *pv[1:]]
                                             for n, pv in (c.get("perfvalues") or {}).items()})
                        run.append(c)
                doc = dict(report, session_info=dict(report["session_info"], uuid=f"s{i}",
                                                     time_start_unix=1.8e9 + i * DAY), runs=[{"testcases": run}])
                db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (f"s{i}", 1.8e9 + i * DAY, None,
                                                                           json.dumps(doc), ""))
        size = store.stat().st_size
        started = time.perf_counter()
        h = history.read(store=store)
        done = time.perf_counter()
    print(f"{args.runs} runs x {len(h.series)} series ({size / 2**20:.0f} MiB store, {len(cases) * copies} cases a "
          f"run): history read in {done - started:.2f} s ({sum(len(s.change_points) for s in h.series)} change "
          f"points found in noise alone)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("steps")
    p.add_argument("reports", nargs="+", help="ReFrame run reports of clean quick runs of one machine")
    p.add_argument("--series", type=int, default=50)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--at", type=int, default=10, help="the first slowed run (1-based)")
    p.add_argument("--factors", type=lambda s: [float(f) for f in s.split(",")], default=[1.5, 2.0])
    p.add_argument("--check", default="JacobiCheck")
    p.add_argument("--environ", default="openmpi")
    p.add_argument("--variable", default="max_sendrecv")
    p.add_argument("--seed", type=int, default=29)
    p = sub.add_parser("scale")
    p.add_argument("report", help="a ReFrame run report of a quick run: the cases every stored session holds")
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--variables", type=int, default=500)
    p.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    (steps if args.what == "steps" else scale)(args)


if __name__ == "__main__":
    try:
        main()
    except (history.HistoryError, reframe_report.RunReportError) as e:
        sys.exit(f"history_rates: {e}")
    except KeyboardInterrupt:
        sys.exit("history_rates: interrupted")
