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


def over_launches(founds):
    """A case's launches as one (issue 41: a task that shares a core for a whole launch looks like a
    culprit within that launch): the nodes and tasks a strict majority of the launches named, each
    launch by its own test, and the false-alarm rate of that rule where the tasks are alike.  A
    launch names a given holder with probability at most its rate, so k of n launches do with at
    most binom.sf(k - 1, n, rate), and any of the job's holders at most that times their number.
    founds: each launch's `slowest` or `latest`; returns ({"nodes": [(node, k)], "tasks": [(task,
    k)]}, the rule's rate)."""
    from scipy import stats  # noqa: PLC0415  SciPy only where a report is drawn

    n, rate = len(founds), founds[0]["rate"]
    majority = n // 2 + 1
    named = {}
    for kind, what in (("nodes", "node"), ("tasks", "task")):
        counts = Counter(e[what] for found in founds for e in found.get(kind, []))
        named[kind] = sorted(((holder, k) for holder, k in counts.items() if k >= majority), key=lambda hk: -hk[1])
    holders = len(founds[0]["node_calls"]) + sum(founds[0]["node_tasks"])
    return named, rate if n == 1 else min(1.0, holders * float(stats.binom.sf(majority - 1, n, rate)))


def _named(found, key, what):
    return ", ".join(f"{e[what]} ({100 * e['share']:.0f} %, fair {100 * e['fair_share']:.2g} %)"
                     for e in found.get(key, [])[:4]) or "none"


@figure
def culprits(col):
    """Whose maximum: the tasks and nodes that held the per-call MAX, or waited longest before communicating

    For each case, the share of its decided calls whose maximum a node's task held (bars) against the node's
    share of the tasks (black ticks): "slowest" is the task whose call took longest (it waited most); "latest",
    where the benchmark times it (jb-halo), the task whose call spent longest before its communication (the late
    sender the others waited for).  A call is decided where the maximum stands out by more than the
    synchronisation resolves.  Each launch names the nodes and tasks held more often than their share by a
    one-sided binomial test, Holm-corrected over the job's nodes and tasks at the stated false-alarm rate; such
    a test assumes the tasks alike, so a task that shares a core for a whole launch shows as named in that
    launch.  A case of several launches names only what a strict majority of its launches named ("in k of n"),
    a rule whose false-alarm rate where the tasks are alike is the rate column's.
    """
    cases, seen = {}, set()  # a case's launches (its documents), per result variant
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
                    if isinstance(found, dict) and found.get("decided_calls"):
                        cases.setdefault((described.benchmark, case.label, results_mpi(d), what, key, number, i),
                                         []).append((found, r.get("calls", "?")))
    if not cases:
        return "no benchmark documents that say whose maximum it was (jb-halo, jb-pingpong, ... of this release)"
    rows, drawn = [], []
    for (bench, label, mpi, what, key, *_), launches in cases.items():
        founds = [found for found, _ in launches]
        named, rate = over_launches(founds)
        if len(founds) == 1:
            nodes, tasks = _named(founds[0], "nodes", "node"), _named(founds[0], "tasks", "task")
            decided = f"{founds[0]['decided_calls']}/{launches[0][1]}"
        else:
            nodes, tasks = (", ".join(f"{h} (in {k} of {len(founds)} launches)" for h, k in named[kind][:4]) or "none"
                            for kind in ("nodes", "tasks"))
            decided = f"{sum(f['decided_calls'] for f in founds)}/{sum(c for _, c in launches if isinstance(c, int))}"
        rows.append((bench, label, mpi, what, key, len(founds), decided, fmt(rate), nodes, tasks))
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
    return ("benchmark", "label", "MPI", "variant", "whose", "launches", "decided calls", "rate", "nodes named",
            "tasks named"), rows, fig


# the figures over every benchmark, after each benchmark's own
OVER_ALL = (distributions, culprits)


def every():
    """Every figure function of the report, in page order: each benchmark's (its
    descriptor's figures, in the descriptors' order), then those over all of them."""
    return tuple(make for d in benchmarks.ALL for make in d.figures) + OVER_ALL


def all_figures(col):
    return [make(col) for make in every()]
