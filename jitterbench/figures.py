"""The report's figures, each with the table of its numbers.

Every figure function takes a runs.Collection and returns a Figure: a matplotlib
figure (None where the runs hold no data for it, with the reason in `note`) and the
rows it plots.  Points are medians over a label's repeats; the tables give the
repeats and how each value was aggregated.

Each benchmark's figures are its descriptor's (jitterbench/benchmarks/); here are the
helpers they draw with (the figures over every benchmark, and the report's order of them all:
jitterbench/report_figures.py).  matplotlib is imported only to draw, so that the descriptors
can be read without it.
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
    """The report's figure that draw(col, *args) draws from a runs.Collection.  draw's docstring is
    the figure's title, a blank line and its caption; it returns (header, rows, matplotlib
    figure[, note]), or, where the runs hold no data for it, a string saying which run
    would give it.  The figure's name is draw's, with '-' for '_'."""
    title, _, caption = inspect.cleandoc(draw.__doc__ or draw.__name__).partition("\n\n")
    caption = " ".join(caption.split())

    @functools.wraps(draw)
    def make(col, *args) -> Figure:
        drawn, name = draw(col, *args), draw.__name__.replace("_", "-")
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
