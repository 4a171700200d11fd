"""The report's figures, each with the table of its numbers.

Every figure function takes a runs.Collection and returns a Figure: a matplotlib
figure (None where the runs hold no data for it, with the reason in `note`) and the
rows it plots.  Points are medians over a label's repeats; the tables give the
repeats and how each value was aggregated.

Each benchmark's figures are its descriptor's (jitterbench/benchmarks/); here are the
helpers they draw with and the figures over every benchmark.  matplotlib is imported
only to draw, so that the descriptors can be read without it.
"""
from __future__ import annotations

import functools
import inspect
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

MAX_LINES = 12  # more lines than this make a legend no one can read: the table holds the rest


@dataclass
class Figure:
    name: str
    title: str
    caption: str
    header: tuple = ()
    rows: list = field(default_factory=list)
    figure: object = None
    note: str = ""


def text(value) -> str:
    """A string matplotlib draws as it is: a '$' would start its mathematics."""
    return str(value).replace("$", r"\$")


def fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def names(keys, fields, keep=()):
    """Legend names of group keys, naming only the fields that differ between groups (and keep)."""
    varying = [i for i in range(len(fields)) if len({k[i] for k in keys}) > 1 or fields[i] in keep] or [0]
    return {k: ", ".join(f"{fields[i]}={k[i]}" if fields[i] not in ("label", "environ", "benchmark") else str(k[i])
                         for i in varying) for k in keys}


def grouped(cases, group, x, var):
    """{group key: [(x, median, min, max, repeats)]} of a performance variable."""
    samples = defaultdict(list)
    for c in cases:
        v = c.value(var)
        if v is not None and x(c) is not None:
            samples[(group(c), x(c))].append(v)
    out = defaultdict(list)
    for (g, xv), vs in sorted(samples.items(), key=lambda kv: (repr(kv[0][0]), kv[0][1])):
        out[g].append((xv, statistics.median(vs), min(vs), max(vs), len(vs)))
    return out


def case_lines(cases, fields, x, var):
    """The usual figure: var against x(case), one line per group of fields (label and
    environ first, then parameters).  Returns the figure, its axes, the series and the
    table rows (group, x, median, repeats)."""
    series = grouped(cases, lambda c: (c.label, c.environ, *(c.params.get(f) for f in fields[2:])), x, var)
    fig, ax = subplots()
    line_plot(ax, series, fields)
    return fig, ax, series, [(*g, p[0], fmt(p[1]), p[4]) for g, ps in series.items() for p in ps]


def line_plot(ax, series, fields, style="-o", prefix="", keep=()):
    """One line per group, capped at MAX_LINES; returns the names used."""
    labels = names(list(series), fields, keep)
    for i, (g, points) in enumerate(series.items()):
        if i == MAX_LINES:
            break
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, style, label=text(prefix + labels[g]), color=f"C{i % 10}")
    return labels


def finish(fig, ax, xlabel, ylabel, logx=False, logy=False):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()


def subplots(rows=1, cols=1, figsize=(7, 4.5), squeeze=True):
    """A figure outside pyplot's registry: nothing to close, nothing kept between reports."""
    from matplotlib.figure import Figure as Canvas
    fig = Canvas(figsize=figsize)
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


def figure(draw):
    """The report's figure that draw(col) draws from a runs.Collection.  draw's docstring is
    the figure's title, a blank line and its caption; it returns (header, rows, matplotlib
    figure[, note]), or, where the runs hold no data for it, a string saying which run
    would give it.  The figure's name is draw's, with '-' for '_'."""
    title, _, caption = inspect.cleandoc(draw.__doc__ or draw.__name__).partition("\n\n")
    caption = " ".join(caption.split())

    @functools.wraps(draw)
    def make(col) -> Figure:
        drawn, name = draw(col), draw.__name__.replace("_", "-")
        if isinstance(drawn, str):
            return Figure(name, title, caption, note=drawn)
        return Figure(name, title, caption, *drawn)
    return make


def results(col, benchmark):
    """(label, result, document) of every benchmark document, kept by a ReFrame run or given alone."""
    docs = {id(d): (c.label, d) for c in col.cases for d in c.documents}
    return [(label, r, d) for label, d in docs.values() if d.get("benchmark") == benchmark for r in d["results"]]


def results_mpi(doc):
    lib = doc.get("metadata", {}).get("mpi_library", "")
    return " ".join(lib.splitlines()[0].split(",")[0].replace(" for Linux* OS", "").split()) if lib else "?"


def histogram_line(ax, hist, label, i):
    """A histogram's counts as steps; empty bins are gaps (log y has no zero)."""
    bins = hist["bins"]
    used = [j for j, b in enumerate(bins) if b[2] > 0]
    if used:
        bins = bins[used[0]:used[-1] + 1]
        counts = [b[2] or float("nan") for b in bins]
        ax.step([b[0] for b in bins] + [bins[-1][1]], counts + [counts[-1]], where="post",
                label=text(label), color=f"C{i % 10}")


@figure
def distributions(col):
    """Per-call time distributions and their tails

    Counts of every task's every call time in log bins (20 per decade), merged over tasks; log y shows the tail.
    The table gives the percentiles over calls of the per-call MAX, and the 99th percentile over every task's
    every call.
    """
    from . import benchmarks
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
    from . import benchmarks
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
    from . import benchmarks  # its descriptors draw with this module's helpers
    return tuple(make for d in benchmarks.ALL for make in d.figures) + OVER_ALL


def all_figures(col):
    return [make(col) for make in every()]
