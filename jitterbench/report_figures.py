"""The report's figures in page order: each benchmark's, from its record (its descriptor's
figures, in the descriptors' order), then those over every benchmark, here: the per-call time
distributions and whose maximum each call was.  They draw with jitterbench/figures.py's helpers,
as the records do."""
from __future__ import annotations

from collections import Counter

from . import benchmarks
from .figures import MAX_LINES, figure, finish, fmt, histogram_line, results, results_mpi, subplots, text


@figure
def distributions(col):
    """Per-call time distributions and their tails

    Counts of every task's every call time in log bins (20 per decade), merged over tasks; log y shows the tail.
    The table gives the percentiles over calls of the per-call MAX, and the 99th percentile over every task's
    every call.
    """
    panels = [(d, results(col, d.benchmark)) for d in benchmarks.ALL if d.distribution]
    panels = [(d, rs) for d, rs in panels if any("histogram" in r for _, r, _ in rs)]
    if not panels:
        return "no benchmark documents with histograms in these runs"
    fig, axes = subplots(len(panels), 1, figsize=(7, 2.8 * len(panels)), squeeze=False)
    rows = []
    for ax, (described, rs) in zip(axes[:, 0], panels):
        bench = described.benchmark
        for i, (label, r, d) in enumerate(rs[:MAX_LINES]):
            what = " ".join(str(r[k]) for k in described.distribution if k in r)
            histogram_line(ax, r["histogram"], f"{label} {results_mpi(d)} {what}", i)
            rows.append((bench, label, results_mpi(d), what, r.get("calls", r.get("cycles")), fmt(r.get("p50_us")),
                         fmt(r.get("p99_us")), fmt(r.get("p999_us")), fmt(r.get("worst_us")), fmt(r.get("all_p99_us"))))
        ax.set_title(f"jb-{bench}", fontsize=9)
        ax.set_xscale("log")
        finish(fig, ax, "us per call (every task)", "count", logy=True)
    return ("benchmark", "label", "MPI", "variant", "calls", "p50 of MAX us", "p99 of MAX us", "p99.9 of MAX us",
            "worst us", "p99 all us"), rows, fig


def _readable(found):
    """A `slowest` or `latest` this figure can read: a rate, the calls decided, and per node its calls
    and tasks (as many of each, whole numbers); another document's is passed over."""
    nodes, tasks = found.get("node_calls"), found.get("node_tasks")
    return (isinstance(found.get("decided_calls"), int) and found["decided_calls"] > 0
            and isinstance(found.get("rate"), (int, float)) and isinstance(found.get("commonest_task") or {}, dict)
            and isinstance(nodes, list) and isinstance(tasks, list) and 0 < len(nodes) == len(tasks)
            and all(isinstance(v, int) for v in nodes + tasks))


def launch_holders(found):
    """The node and the task that held the per-call MAX in most of one launch's decided calls: (node,
    task), each None where no call was decided or two held it equally.  The benchmark records one
    commonest task, the first of a tie among more than two (a bias a baseline's launches share)."""
    if not found.get("decided_calls"):
        return None, None
    calls = found["node_calls"]
    node = calls.index(max(calls)) if calls.count(max(calls)) == 1 else None
    commonest = found.get("commonest_task") or {}
    tied = sum(found["node_tasks"]) == 2 and 2 * commonest.get("calls", 0) == found["decided_calls"]
    return node, None if tied or "task" not in commonest else commonest["task"]


def launches_won(founds):
    """Per kind, the launches each node and each task held the maximum in (launch_holders), and the
    launches counted: what a baseline's runs say of a case's holders."""
    won = {"nodes": Counter(), "tasks": Counter(), "launches": len(founds)}
    for found in founds:
        for kind, holder in zip(("nodes", "tasks"), launch_holders(found)):
            if holder is not None:
                won[kind][holder] += 1
    return won


def over_launches(founds, baseline=None):
    """A case's launches as one (issue 41): launch-to-launch variation dominates call-to-call, so the
    launch, not the call, is the unit of the test.  Each launch names the node and the task that held
    the maximum in most of its decided calls (launch_holders); a holder that did so in k of the n
    launches is named where binom.sf(k - 1, n, q) passes Holm over the job's nodes and tasks at the
    launches' stated rate.  q, the chance that a launch is the holder's, is 1 / holders where the
    tasks are alike, or, against a baseline (launches_won of the same case on the reference machine),
    its share of the baseline's launches, (won + 1) / (launches + holders): a slot that the baseline's
    machine always makes slowest (a core taking interrupts, rank 0's extra work) is then named only
    where it is slowest more often than it was there.  One launch is judged by its own test, whose
    rate assumes the tasks alike within the launch (a task sharing a core for the launch is named).
    founds: each launch's `slowest` or `latest`; returns ({"nodes": [(node, k)], "tasks": [(task, k)]},
    the rate)."""
    from scipy import stats  # noqa: PLC0415  SciPy only where a report is drawn

    n, rate = len(founds), founds[0]["rate"]
    if n == 1:
        return {kind: [(e[what], 1) for e in founds[0].get(kind, [])]
                for kind, what in (("nodes", "node"), ("tasks", "task"))}, rate
    won = launches_won(founds)
    holders = {"nodes": len(founds[0]["node_calls"]), "tasks": sum(founds[0]["node_tasks"])}
    pvalues = {}
    for kind, many in holders.items():
        if many < 2:
            continue  # one node holds every maximum: it is no culprit
        for holder, k in won[kind].items():
            base = (baseline[kind][holder] + 1) / (baseline["launches"] + many) if baseline else 1 / many
            pvalues[(kind, holder)] = float(stats.binom.sf(k - 1, n, base))
    family = sum(many for many in holders.values() if many > 1)
    named = {"nodes": [], "tasks": []}
    for rank, ((kind, holder), p) in enumerate(sorted(pvalues.items(), key=lambda kp: kp[1])):
        if p > rate / (family - rank):  # Holm's step-down; a holder that won no launch has p = 1
            break
        named[kind].append((holder, won[kind][holder]))
    return named, rate


def _named(found, key, what):
    return ", ".join(f"{e[what]} ({100 * e['share']:.0f} %, fair {100 * e['fair_share']:.2g} %)"
                     for e in found.get(key, [])[:4]) or "none"


@figure
def culprits(col, baseline=None):
    """Whose maximum: the tasks and nodes that held the per-call MAX, or waited longest before communicating

    For each case, the share of its decided calls whose maximum a node's task held (bars) against the node's
    share of the tasks (black ticks): "slowest" is the task whose call took longest (it waited most); "latest",
    where the benchmark times it (jb-halo), the task whose call spent longest before its communication (the late
    sender the others waited for).  A call is decided where the maximum stands out by more than the
    synchronisation resolves.  A case of one launch names the nodes and tasks held more often than their share
    by a one-sided binomial test, Holm-corrected over the job's nodes and tasks at the stated false-alarm rate;
    such a test assumes the tasks alike within the launch, so a task that shares a core for a whole launch is
    named.  A case of several launches is judged over its launches: each names the node and the task that held
    most of its maxima, and a holder is named where it did so in more launches than its chance allows
    (binomial, Holm, the rate column's): one in as many as there are holders, or, compared with a baseline,
    its share of the baseline's launches of the same case (the "against" column), so that a slot the
    baseline's machine always makes slowest is no culprit there.
    """
    cases, matched, seen = {}, {}, set()  # a case's launches (its documents) per result variant; its key across labels
    for number, case in enumerate(col.cases):
        for d in case.documents:
            described = benchmarks.by_benchmark(d.get("benchmark"))
            if id(d) in seen or described is None:
                continue
            seen.add(id(d))
            for i, r in enumerate(d["results"]):  # a launch's i-th result is every launch's i-th variant
                what = " ".join(str(r[k]) for k in described.distribution if k in r)
                for key in ("slowest", "latest"):
                    found = r.get(key)
                    if isinstance(found, dict) and _readable(found):
                        group = (described.benchmark, case.label, results_mpi(d), what, key, number, i)
                        cases.setdefault(group, []).append((found, r.get("calls", "?")))
                        matched[group] = (case.check, case.environ, tuple(sorted(case.params.items())), what, key)
    if not cases:
        return "no benchmark documents that say whose maximum it was (jb-halo, jb-pingpong, ... of this release)"
    # the baseline's launches of each case, over all its runs: the chance of each holder there
    pooled = {}
    for group, launches in cases.items():
        if baseline is not None and group[1] == baseline:
            pooled.setdefault(matched[group], []).extend(found for found, _ in launches)
    reference = {case: launches_won(founds) for case, founds in pooled.items()}
    rows, drawn = [], []
    for group, launches in cases.items():
        (bench, label, mpi, what, key, *_), founds = group, [found for found, _ in launches]
        against = reference.get(matched[group]) if label != baseline else None
        named, rate = over_launches(founds, against)
        if len(founds) == 1:
            nodes, tasks = _named(founds[0], "nodes", "node"), _named(founds[0], "tasks", "task")
            decided = f"{founds[0]['decided_calls']}/{launches[0][1]}"
        else:
            nodes, tasks = (", ".join(f"{h} (in {k} of {len(founds)} launches)" for h, k in named[kind][:4]) or "none"
                            for kind in ("nodes", "tasks"))
            decided = f"{sum(f['decided_calls'] for f in founds)}/{sum(c for _, c in launches if isinstance(c, int))}"
        judged = ("the launch's calls" if len(founds) == 1 else
                  f"{baseline} ({against['launches']} launches)" if against else "holders alike")
        rows.append((bench, label, mpi, what, key, len(founds), decided, fmt(rate), judged, nodes, tasks))
        node_calls = [sum(calls) for calls in zip(*(f["node_calls"] for f in founds))]
        shown = {"node_calls": node_calls, "node_tasks": founds[0]["node_tasks"],
                 "named": {h for h, _ in named["nodes"]}}
        if named["nodes"] or named["tasks"] or len(drawn) < 2:
            drawn.append((f"jb-{bench} {label} {what} {key}", shown))
    drawn = sorted(drawn, key=lambda x: not x[1]["named"])[:6]
    fig, axes = subplots(len(drawn), 1, figsize=(7, 1.9 * len(drawn)), squeeze=False)
    for ax, (title, shown) in zip(axes[:, 0], drawn):
        calls, tasks = shown["node_calls"], shown["node_tasks"]
        decided, total = sum(calls), sum(tasks) or 1
        nodes = range(len(calls))
        ax.bar(nodes, [c / decided for c in calls], color=["C3" if i in shown["named"] else "C0" for i in nodes])
        ax.scatter(nodes, [t / total for t in tasks], marker="_", s=200, color="black", zorder=3)
        ax.set_title(text(title), fontsize=8)
        finish(fig, ax, "node", "share of decided calls")
    return ("benchmark", "label", "MPI", "variant", "whose", "launches", "decided calls", "rate", "against",
            "nodes named", "tasks named"), rows, fig


# the figures over every benchmark, after each benchmark's own
OVER_ALL = (distributions, culprits)


def every():
    """Every figure function of the report, in page order: each benchmark's (its
    descriptor's figures, in the descriptors' order), then those over all of them."""
    return tuple(make for d in benchmarks.ALL for make in d.figures) + OVER_ALL


def all_figures(col, baseline=None):
    """Every figure of col; whose maximum (culprits) judges each label's launches against the baseline's."""
    return [make(col, baseline) if make is culprits else make(col) for make in every()]
