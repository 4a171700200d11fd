"""The report's figures in page order: each benchmark's, from its record (its descriptor's
figures, in the descriptors' order), then those over every benchmark, here: the per-call time
distributions and whose maximum each call was.  They draw with jitterbench/figures.py's helpers,
as the records do."""
from __future__ import annotations

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


def _named(found, key, what):
    return ", ".join(f"{e[what]} ({100 * e['share']:.0f} %, fair {100 * e['fair_share']:.2g} %)"
                     for e in found.get(key, [])[:4]) or "none"


@figure
def culprits(col):
    """Whose maximum: the tasks and nodes that held the per-call MAX, or waited longest before communicating

    For each result, the share of its decided calls whose maximum a node's task held (bars) against the node's
    share of the tasks (black ticks): "slowest" is the task whose call took longest (it waited most); "latest",
    where the benchmark times it (jb-halo), the task whose call spent longest before its communication (the late
    sender the others waited for).  A call is decided where the maximum stands out by more than the synchronisation resolves.  The
    table names the nodes and tasks held more often than their share by a one-sided binomial test, Holm-corrected
    over the job's nodes and tasks at the stated false-alarm rate; such a test assumes the tasks alike, so a
    machine whose tasks differ (a core that takes the interrupts) shows as named.
    """
    rows, drawn = [], []
    for described in (d for d in benchmarks.ALL if d.benchmark):
        for label, r, d in results(col, described.benchmark):
            what = " ".join(str(r[k]) for k in described.distribution if k in r)
            for key in ("slowest", "latest"):
                found = r.get(key)
                if not isinstance(found, dict) or not found.get("decided_calls"):
                    continue
                rows.append((described.benchmark, label, results_mpi(d), what, key,
                             f"{found['decided_calls']}/{r.get('calls', '?')}", fmt(found.get("rate")),
                             _named(found, "nodes", "node"), _named(found, "tasks", "task")))
                if found.get("nodes") or found.get("tasks") or len(drawn) < 2:
                    drawn.append((f"jb-{described.benchmark} {label} {what} {key}", found))
    if not rows:
        return "no benchmark documents that say whose maximum it was (jb-halo, jb-pingpong, ... of this release)"
    drawn = sorted(drawn, key=lambda x: not (x[1].get("nodes") or x[1].get("tasks")))[:6]
    fig, axes = subplots(len(drawn), 1, figsize=(7, 1.9 * len(drawn)), squeeze=False)
    for ax, (title, found) in zip(axes[:, 0], drawn):
        calls, tasks = found["node_calls"], found["node_tasks"]
        decided, total = sum(calls), sum(tasks) or 1
        named = {e["node"] for e in found.get("nodes", [])}
        nodes = range(len(calls))
        ax.bar(nodes, [c / decided for c in calls], color=["C3" if i in named else "C0" for i in nodes])
        ax.scatter(nodes, [t / total for t in tasks], marker="_", s=200, color="black", zorder=3)
        ax.set_title(text(title), fontsize=8)
        finish(fig, ax, "node", "share of decided calls")
    return ("benchmark", "label", "MPI", "variant", "whose", "decided calls", "rate", "nodes named", "tasks named"), \
        rows, fig


# the figures over every benchmark, after each benchmark's own
OVER_ALL = (distributions, culprits)


def every():
    """Every figure function of the report, in page order: each benchmark's (its
    descriptor's figures, in the descriptors' order), then those over all of them."""
    return tuple(make for d in benchmarks.ALL for make in d.figures) + OVER_ALL


def all_figures(col):
    return [make(col) for make in every()]
