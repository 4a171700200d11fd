"""What a baseline of k runs gives on this machine, over many baselines drawn from recorded runs.

    python benchmarks/bound_splits.py RUN_REPORT... [--k 5] [--splits 100 | --first] [--slow JacobiCheck:2:max_waitall]
                                                    [--over-launches median|mean|lower-half]
                                                    [--false-alarm-rate 0.01] [--confirm]

One baseline is a matter of luck: the main job's first five runs may fall in a quiet stretch of
the machine or a slow one.  Each split here takes k of the given ReFrame run reports (the quick
suite's, made the same way: `verdict_rates.py false-alarms` leaves twenty) as the baseline, builds
its references with `reference_build.build` (the rule itself), and judges every other run against them
as ReFrame does (a value past median x (1 + upper), or below median x (1 + lower)).  --first takes
the first k reports, in the order given, as the one baseline and judges every later one: as a site's
runs are judged, against a baseline made before them.  It prints, over the splits:

- per MPI, the minimum detectable slowdown of its central figures (the pool of medians over
  launches, `reference_build.pool_of`) and the share of them bounded (within --max-detectable, 2x,
  each at the larger of its MPI's and its check's slowdown): the median and the range over the
  splits;
- the share of judged runs with any variable past its bound (a false alarm: the runs are clean),
  beside the references' stated rate;
- per --slow CHECK:FACTOR:TARGET, the share of judged runs in which that check, its times multiplied
  by FACTOR and its rates divided by it, fails in some variable and in TARGET, under each MPI where
  TARGET is bounded.  This is the judged run's own noise with a slowdown laid on it: what the rule
  can detect, without the injection's own effect on the figure (verdict_rates.py power measures that).

--false-alarm-rate builds the baselines at another stated rate a run than the references' 1 %.
Without --confirm a judged run is the whole verdict, one attempt at that rate (jitterbench reference
--attempts 1); with it, the verdict of two attempts the main job gives (jitterbench again): the
baselines are built for two attempts, each at the rate's square root (0.1 for 1 %), and a judged
run fails only where the next judged run (in the order given) fails a case that failed in it, the
slowed check likewise.  Where the two attempts are independent, a clean run fails a case twice at
about the rate or less.

--over-launches recomputes each figure from the case's launch values (launch_values: every launch
of every round) with another statistic than the median the checks take, to see what the choice
does.  The splits are random (--seed) and share runs, so the shares are of correlated trials: with
twenty runs, one run that fails most splits is a rate of about 1 in 20.  Nothing here asserts; the
figures go in the issue's note.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jitterbench import bounds, fingerprint, reference_build, references, reframe_report  # noqa: E402

OVER_LAUNCHES = {
    "median": None,  # as recorded: the checks' own figure
    "mean": statistics.fmean,
    "lower-half": lambda values: statistics.fmean(sorted(values)[:max(1, len(values) // 2)]),
}


def recomputed(paths, statistic, folder) -> list:
    """Copies of the run reports in folder with each figure that has launch values replaced by
    statistic over them."""
    out = []
    for i, path in enumerate(paths):
        report = reframe_report.read_report(path)  # a file that is not one is named in one line
        for run in report["runs"]:
            for case in run.get("testcases", []):
                try:
                    launches = json.loads(case.get("launch_values") or "{}")
                except (TypeError, ValueError):
                    continue
                for name, pv in (case.get("perfvalues") or {}).items():
                    values = launches.get(name.split(":")[-1]) if isinstance(launches, dict) else None
                    if values and pv[0] is not None:
                        pv[0] = statistic(values)
        copy = Path(folder) / f"run-{i}.json"
        copy.write_text(json.dumps(report))
        out.append(str(copy))
    return out


def entry(doc, case, var):
    """The reference entry [median, lower, upper, unit] of a case's variable, or None."""
    node = doc.get(case["display_name"].split()[0])
    for part in reference_build.key_of(case):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node.get(var) if isinstance(node, dict) else None


def past(value, ref):
    """Whether a value is past its reference's bound, as ReFrame judges it."""
    median, lower, upper, _ = ref
    return (upper is not None and value > median * (1 + upper)) or (lower is not None and value < median * (1 + lower))


def node_past(doc, case):
    """Whether a case's node figures are past their bounds: node first, the case then not judged."""
    return any(pv[0] is not None and (ref := entry(doc, case, name.split(":")[-1])) and ref[2] is not None
               and past(pv[0], ref) for name, pv in (case.get("perfvalues") or {}).items()
               if name.split(":")[-1] in fingerprint.NODE_FIGURES)


def judged(doc, cases, slow=None):
    """(the cases with a variable past its bound, {(check, MPI): (variables past, target past)} of the
    slowed check, the cases a node finding left unjudged) of one run's cases; a case is (display name,
    MPI); slow: (check, factor, target) laid on that check's values, not on its node's figures."""
    failed, slowed, unjudged = set(), {}, set()
    for case in cases:
        check = case["display_name"].split()[0]
        if node_past(doc, case):
            unjudged.add((case["display_name"], case["environ"]))
            continue
        for name, pv in (case.get("perfvalues") or {}).items():
            var = name.split(":")[-1]
            ref = entry(doc, case, var)
            if pv[0] is None or not ref or (ref[1] is None and ref[2] is None) or var in fingerprint.NODE_FIGURES:
                continue
            if past(pv[0], ref):
                failed.add((case["display_name"], case["environ"]))
            if slow and check == slow[0]:
                value = pv[0] * slow[1] if ref[2] is not None else pv[0] / slow[1]
                hit = slowed.setdefault((check, case["environ"]), [False, None])
                hit[0] |= past(value, ref)
                if var == slow[2]:
                    hit[1] = past(value, ref)
    # node first over the run (reframe_report.node_first): no failure on a node some case found moved is judged
    moved = {node for case in cases if (case["display_name"], case["environ"]) in unjudged
             for node in str(case.get("node_list") or "").split(",")} - {""}
    held_back = {(case["display_name"], case["environ"]) for case in cases
                 if moved & set(str(case.get("node_list") or "").split(","))}
    slowed = {key: hit for key, hit in slowed.items()
              if not any((c["display_name"], c["environ"]) in held_back for c in cases
                         if c["display_name"].split()[0] == key[0] and c["environ"] == key[1])}
    return failed - held_back, slowed, unjudged | (failed & held_back)


def verdicts(doc, runs, slows, confirm):
    """Per judged run (in the order given): (alarm, {(slow, MPI): (check failed, target failed)}, whether a
    node finding left some case unjudged).
    With confirm, a run fails only where a case that failed in it fails again in the next judged run
    (the last run, having none after it, is left out): what a rule that judges a failed case once more,
    minutes later, before it fails it would give."""
    seen = [(judged(doc, cases)[0], {(slow, env): tuple(hit) for slow in slows
                                     for (_, env), hit in judged(doc, cases, slow)[1].items()},
             bool(judged(doc, cases)[2]))
            for cases in runs]
    if not confirm:
        return [(bool(failed), hits, node) for failed, hits, node in seen]
    confirmed = []
    for (failed, hits, node), (failed_next, hits_next, _) in zip(seen, seen[1:]):
        both = {}
        for key, (check_past, target_past) in hits.items():
            check_next, target_next = hits_next.get(key, (False, False))
            both[key] = (check_past and check_next, None if target_past is None else bool(target_past and target_next))
        confirmed.append((bool(failed & failed_next), both, node))  # a node finding is judged once
    return confirmed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", help="ReFrame run reports of the quick suite, made the same way")
    parser.add_argument("--k", type=int, default=bounds.MIN_REPEATS, help="runs a baseline takes")
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--first", action="store_true", help="one baseline: the first k reports; the later ones judged")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slow", action="append", default=[], metavar="CHECK:FACTOR:TARGET")
    parser.add_argument("--over-launches", choices=OVER_LAUNCHES, default="median")
    parser.add_argument("--max-detectable", type=float, default=bounds.MAX_DETECTABLE)
    parser.add_argument("--false-alarm-rate", type=float, default=bounds.FALSE_ALARM_RATE,
                        help="the suite's stated rate a run the baselines are built at")
    parser.add_argument("--confirm", action="store_true",
                        help="a judged run fails only where the next judged run fails the same case")
    args = parser.parse_args()
    if not bounds.MIN_REPEATS <= args.k < len(args.reports):
        parser.error(f"--k must be at least {bounds.MIN_REPEATS} and below the {len(args.reports)} reports given")
    try:
        slows = [(c, float(f), t) for c, f, t in (s.split(":") for s in args.slow)]
    except ValueError:
        parser.error("--slow takes CHECK:FACTOR:TARGET, e.g. JacobiCheck:2:max_waitall")
    if any(not factor > 0 for _, factor, _ in slows):
        parser.error("--slow: a FACTOR is a positive number")
    with tempfile.TemporaryDirectory() as folder:
        statistic = OVER_LAUNCHES[args.over_launches]
        paths = recomputed(args.reports, statistic, folder) if statistic else list(args.reports)
        cases = {p: reframe_report.report_cases(p)[1] for p in paths}
        system = reframe_report.system_of(paths)
        rng = np.random.default_rng(args.seed)
        mds, alarms, node_findings, trials, detected, rate = {}, 0, 0, 0, {}, None
        for _ in range(1 if args.first else args.splits):
            base = list(range(args.k)) if args.first else sorted(rng.choice(len(paths), args.k, replace=False))
            doc = reference_build.build([paths[i] for i in base], system, "bound_splits.py", args.false_alarm_rate,
                                   args.max_detectable, attempts=2 if args.confirm else 1)
            rate = doc["provenance"]["false_alarm_rate"]
            for pool in doc["provenance"]["pools"]:
                if pool["variables"].startswith("time, median"):
                    mds.setdefault(pool["environ"], []).append((pool["detectable_slowdown"],
                                                                pool["bounded"] / pool["asserted"]))
            runs = [cases[paths[i]] for i in range(len(paths)) if i not in base]
            for alarm, hits, node in verdicts(doc, runs, slows, args.confirm):
                alarms += alarm
                node_findings += node
                trials += 1
                for (slow, environ), (any_past, target_past) in hits.items():
                    if target_past is not None:  # the target is bounded here
                        counts = detected.setdefault((slow, environ), [0, 0, 0])
                        counts[0] += any_past
                        counts[1] += target_past
                        counts[2] += 1
    print(f"{'the first' if args.first else args.splits} baseline(s) of {args.k} of the {len(paths)} runs at "
          f"{args.false_alarm_rate:g} a run; figures over launches: {args.over_launches}"
          f"{'; two attempts: a failure counts where the next judged run confirms it' if args.confirm else ''}")
    for environ, pairs in sorted(mds.items()):
        values, shares = zip(*pairs)
        print(f"  {environ:9} central figures' minimum detectable slowdown: median {statistics.median(values):.2f}x "
              f"(range {min(values):.2f}-{max(values):.2f}x); bounded within {args.max_detectable:g}x: median "
              f"{statistics.median(shares):.0%} of them (range {min(shares):.0%}-{max(shares):.0%})")
    print(f"  false alarms: {alarms} of {trials} judged runs ({alarms / max(1, trials):.3f}; the references' rate {rate:g} a run)")
    print(f"  node findings (a case inconclusive, node first): {node_findings} of {trials} judged runs "
          f"({node_findings / max(1, trials):.3f}; the node figures' rate {rate:g} a run, one attempt)")
    for ((check, factor, target), environ), (any_past, target_past, n) in sorted(detected.items()):
        print(f"  {check} x{factor:g} under {environ}: failed in {any_past / n:.2f} of {n} judged runs, "
              f"{target} in {target_past / n:.2f} (where bounded)")


if __name__ == "__main__":
    try:
        main()
    except (references.ReferenceFileError, reframe_report.RunReportError) as e:
        sys.exit(f"bound_splits: {e}")
    except KeyboardInterrupt:
        sys.exit("bound_splits: interrupted")
