"""The tables of a ReFrame run (`jitterbench table`): the verdict first, one line per check and
MPI in at most 120 columns; with --all, one line per test case and swept value.

A variable is asserted where its reference bounds it: the bounded side says which way is
worse (references bound only that side), and the bound over the reference is the smallest
slowdown the reference can detect.  Its ratio is its slowdown against the reference (value
over reference where lower is better, reference over value where higher is).  The worst
asserted variable of a check is the one nearest its bound, or furthest past it: the largest
ratio over detectable slowdown.
"""
from __future__ import annotations

from collections import Counter, defaultdict
import json
import statistics
from dataclasses import dataclass

from . import benchmarks, fingerprint, references, reframe_report, runs
from .console import format_table

WIDTH = 120


@dataclass(frozen=True)
class Judged:
    case: runs.Case
    quantity: str
    ratio: float        # the slowdown against the reference (1: as the reference)
    detectable: float   # the slowdown at the bound: the smallest the reference detects


def judged(case) -> list:
    """The asserted variables of a case (those with a reference and a bound), judged: the
    bounded side is the worse one (references.detectable_slowdown reads it the same way)."""
    out = []
    for quantity, p in case.perf.items():
        if p.value is None or not p.ref or quantity in fingerprint.NODE_FIGURES:  # the node's: node_findings
            continue
        detectable = references.detectable_slowdown([p.ref, p.lower, p.upper])
        if detectable is None or (p.upper is None and p.value <= 0):
            continue
        ratio = p.value / p.ref if p.upper is not None else p.ref / p.value  # a time above, a bandwidth below
        out.append(Judged(case, quantity, ratio, detectable))
    return out


def _at(case, keys=None) -> str:
    """The case's parameters (only keys, where given)."""
    return " ".join(f"{k}={v}" for k, v in case.params.items() if keys is None or k in keys) or "-"


def per_call(case, field):
    """The case's performance variable read from the result field (max_us, avg_us) by its
    benchmark's record (ping-pong's cycle is its MAX), or None."""
    record = benchmarks.by_check(case.check)
    names = [q.name for q in (record.quantities if record else ()) if q.field == field and q.name in case.perf]
    return case.value(names[0]) if names else None


def _us(case, field) -> str:
    value = per_call(case, field)
    return "-" if value is None else f"{value:.1f}"


NOT_JUDGED = "not judged"  # a check that passed with none of its variables asserted (the table says why)


@dataclass
class Verdict:
    """One check under one MPI (of one label): its verdict, the worst of its asserted variables,
    where that was measured (the parameters that tell the check's cases apart), and every
    asserted variable past its bound."""
    label: str
    check: str
    environ: str
    verdict: str
    worst: Judged | None
    at: str
    failed: list
    why_none: str = "(none asserted)"  # when no variable is: none, or no references of this machine
    shown: runs.Case | None = None      # the case whose MAX and AVG the line shows: the worst's, else the first


def _why_none(group) -> str:
    """Why no variable of a check's cases is asserted: no references of this machine, a node finding
    (node first), references too noisy to bound (the file's not_assertable), or none at all."""
    # harness.system_references: "none: no file for this system", or "none of this machine: <what differed>"
    if any(str(c.meta.get("references_from", "")).startswith("none") for c in group):
        return "(no references of this machine)"
    if any(c.meta.get("node_finding") for c in group):  # its bounds taken off: the node moved (node_findings)
        return "(node first: not judged)"
    def released(case, quantity):  # left unbounded by the rules (not_asserted names the swept variables)
        return any(name == quantity or name.startswith(f"{quantity}_")
                   for name in str(case.meta.get("not_asserted", "")).split(","))
    if any(p.ref is not None and p.lower is None and p.upper is None and not released(c, q)
           for c in group for q, p in c.perf.items()):
        return "(not assertable here)"
    return "(none asserted)"


def summarize(cases, outcomes=None) -> list:
    """The verdicts of cases (runs.Case, measured), one per label, check and MPI, in their order.
    outcomes: {(check, MPI): each test case's result} where known (a run report's cases before
    their swept values were split), else the cases' own."""
    groups = defaultdict(list)
    for c in cases:
        groups[(c.label, c.check, c.environ)].append(c)
    out = []
    for (label, check, environ), group in groups.items():
        results = (outcomes or {}).get((check, environ)) or [c.result for c in group]
        every = [j for c in group for j in judged(c)]
        verdict = ("FAIL" if "fail" in results
                   else reframe_report.INCONCLUSIVE if reframe_report.INCONCLUSIVE in results
                   # ReFrame passes a case it asserted nothing of: that is no verdict, and never a pass
                   else NOT_JUDGED if "pass" in results and not every
                   else "pass" if "pass" in results else results[0])
        worst = max(every, key=lambda j: j.ratio / j.detectable, default=None)
        shown = worst.case if worst else next((c for c in group if per_call(c, "max_us") is not None), group[0])
        varying = {k for k in shown.params if len({str(c.params.get(k)) for c in group}) > 1}
        at = _at(shown, varying) if worst else " ".join(str(shown.params[k]) for k in varying) or "-"
        out.append(Verdict(label, check, environ, verdict, worst, at, [j for j in every if j.ratio > j.detectable],
                           _why_none(group), shown))
    return out


def verdicts(cases, outcomes) -> str:
    """One line per check and MPI: verdict, test cases passed (outcomes: {(check, MPI): each
    test case's result}), the worst asserted variable with where it was measured, its ratio and
    detectable slowdown, and MAX and AVG (us) at that place."""
    header = ("check", "MPI", "verdict", "passed", "worst variable", "at", "ratio", "detectable", "MAX us", "AVG us")
    rows = []
    for v in summarize(cases, outcomes):
        results = outcomes[(v.check, v.environ)]
        passed = f"{results.count('pass')}/{len(results)}"
        if v.worst is None:
            rows.append((v.check, v.environ, v.verdict, passed, v.why_none, v.at, "-", "-",
                         _us(v.shown, "max_us"), _us(v.shown, "avg_us")))
            continue
        rows.append((v.check, v.environ, v.verdict, passed, v.worst.quantity, v.at, f"{v.worst.ratio:.2f}x",
                     f"{v.worst.detectable:.2f}x", _us(v.worst.case, "max_us"), _us(v.worst.case, "avg_us")))
    return _fit(header, rows, flexible=header.index("at"))


def every_case(cases) -> str:
    """One line per test case and swept value: its parameters, MAX and AVG (us), the rest of its
    values, the reference of MAX and the result."""
    header = ("check", "MPI", "parameters", "MAX us", "AVG us", "other", "MAX reference", "result")
    rows = []
    for c in cases:
        other = " ".join(f"{q}={p.value:.4g}" for q, p in c.perf.items()
                         if q not in ("max", "avg") and isinstance(p.value, (int, float)))
        ref = c.perf.get("max")
        rows.append((c.check, c.environ, _at(c), _us(c, "max_us"), _us(c, "avg_us"), other or "-",
                     _reference(ref) if ref else "-", c.result))
    return format_table(header, rows)


def _reference(p) -> str:
    if p.ref is None or (p.lower is None and p.upper is None):
        return "-"
    pct = lambda x: "inf" if x is None else f"{x * 100:+.0f}%"  # noqa: E731
    return f"{p.ref:g} ({pct(p.lower)}/{pct(p.upper)})"


def _fit(header, rows, flexible) -> str:
    """The table, its flexible column cut (with '~') so that no line passes WIDTH."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    room = WIDTH - (sum(widths) - widths[flexible]) - 2 * (len(header) - 1)
    cut = max(room, len(header[flexible]))
    rows = [tuple(v if i != flexible or len(v) <= cut else v[:cut - 1] + "~" for i, v in enumerate(r)) for r in rows]
    return format_table(header, rows)


def outcomes_of(report_paths) -> dict:
    """{(check, MPI): each test case's verdict} of ReFrame run reports (reframe_report.outcome)."""
    outcomes = defaultdict(list)
    for path in report_paths:
        for c in reframe_report.report_cases(path)[1]:
            outcomes[(c["display_name"].split()[0], c["environ"])].append(reframe_report.outcome(c))
    return outcomes


def failed(report_paths) -> list:
    """(check, MPI) of every check that failed under an MPI: what the main job judges again."""
    return [pair for pair, results in outcomes_of(report_paths).items() if "fail" in results]


def inconclusive_only(report_paths) -> bool:
    """Whether some case of the reports is inconclusive and none failed: `jitterbench table`
    then exits 3, so that a job can say to run again rather than that the machine failed."""
    results = [r for results in outcomes_of(report_paths).values() for r in results]
    return reframe_report.INCONCLUSIVE in results and "fail" not in results


def _node_cases(cases) -> dict:
    """{test case: its node finding} of the cases a node finding left inconclusive, each test case
    once however many swept values it was split into."""
    return {(c.run, c.partition, c.environ, c.check, c.meta["node_finding"]): json.loads(c.meta["node_finding"])
            for c in cases if c.meta.get("node_finding") and c.result == reframe_report.INCONCLUSIVE}


def node_findings(cases) -> list:
    """The node findings of cases (their checks' node_finding: fingerprint.node_finding), one line per
    node, first in the table and the report: what moved on it, each figure past its bound as the
    median of its ratio over the cases that found it, and how many cases were not judged for it;
    then each node a run found slow among its peers (reframe_report.node_first: peers.slow_nodes)."""
    found = _node_cases(cases)
    per_node = defaultdict(lambda: defaultdict(list))
    for finding in found.values():
        for name, f in finding["past"].items():
            per_node[f["node"]][name].append(f)
    lines = []
    for node, figures in sorted(per_node.items()):
        cases_here = sum(node in finding.get("moved", ()) or any(f["node"] == node for f in finding["past"].values())
                         for finding in found.values())  # those past their bounds, and the others on it held back
        said = "; ".join(
            f"{fingerprint.NODE_FIGURES[name][2].format(ratio=statistics.median(f['ratio'] for f in fs))} than in the "
            f"references' runs ({name}, the median over {len(fs)} case(s); bound {statistics.median(f['bound'] for f in fs):.3g}x)"
            for name, fs in sorted(figures.items()))
        lines.append(f"Node first: {node} {said}: {_moved(cases_here)}, or make references for it as it is now "
                     "(docs/references.md)")
    slow = {}  # the run's peer finding, which every case of the run carries (reframe_report.node_first)
    for c in cases:
        if c.meta.get("node_peers"):
            slow.setdefault(c.run, json.loads(c.meta["node_peers"]))
    for run, node, f in sorted((run, node, f) for run, nodes in slow.items() for node, f in nodes.items()):
        held = sum(node in finding.get("moved", ()) for (of, *_), finding in found.items() if of == run)
        lag = f", its probe's window {f['lag']:.2f}x the fastest task's (median)" if f.get("lag") else ""
        lines.append(f"Node first: {node} was the slowest node in {f['slowest']} of the {f['launches']} launches it "
                     f"ran in (chance alone: {f['chance']:.1f}; p {f['p']:.1g} < {f['alpha']:.2g}, the rate {f['rate']} "
                     f"over the nodes){lag}: {_moved(held)}")
    return lines


def _moved(cases_on_it) -> str:
    return (f"the node moved, not the network; {cases_on_it} case(s) on it not judged ({reframe_report.INCONCLUSIVE}). "
            "Find what changed on the node (its firmware, power or clock settings, what else runs there)")


def table(report_paths, every=False) -> str:
    """The verdicts of ReFrame run reports, or with every, each of their cases; a node finding
    (node_findings) comes first."""
    cases = [c for path in report_paths for c in runs.read_report(path, None, Counter())[0]]
    outcomes = outcomes_of(report_paths)
    if every:
        return every_case(cases)
    nodes = node_findings(cases)
    text = "\n".join([*nodes, verdicts(cases, outcomes)])
    inconclusive = sum(r == reframe_report.INCONCLUSIVE for results in outcomes.values() for r in results)
    disturbed = inconclusive - len(_node_cases(cases))
    if disturbed:
        text += (f"\n{disturbed} case(s) {reframe_report.INCONCLUSIVE}: a launch stayed disturbed through "
                 "every try (something else kept the CPUs busy; the reasons: jitterbench table --all, or the run's "
                 "report): nothing of them was judged; run them again on a quiet machine")
    return text
