"""The report's figures, each with the table of its numbers.

Every figure function takes a runs.Collection and returns a Figure: a matplotlib
figure (None where the runs hold no data for it, with the reason in `note`) and the
rows it plots.  Points are medians over a label's repeats; the tables give the
repeats and how each value was aggregated.
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from matplotlib.figure import Figure as Canvas

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
    fig = Canvas(figsize=figsize)
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


def missing(name, title, caption, why):
    return Figure(name, title, caption, note=why)


def halo_scaling(col):
    name, title = "halo-scaling", "Halo exchange: MAX and AVG against nodes"
    caption = ("MAX (solid, filled) is the mean over calls of the slowest task's time, AVG (dashed, open) the mean over "
               "calls of the mean over tasks, as in Hague's 'Switch Jitter' slides; one line per pattern "
               "and placement.")
    cases = col.of("HaloCheck")
    if not cases:
        return missing(name, title, caption, "no HaloCheck results in these runs")
    fields = ("label", "environ", "pattern", "placement", "msg_size", "tasks_per_node", "eager_limit")
    nodes = lambda c: c.params.get("nodes")  # noqa: E731
    fig, ax, maxs, _ = case_lines(cases, fields, nodes, "max")
    avgs = grouped(cases, lambda c: (c.label, c.environ, *(c.params.get(f) for f in fields[2:])), nodes, "avg")
    for i, (g, points) in enumerate(list(avgs.items())[:MAX_LINES]):
        ax.plot([p[0] for p in points], [p[1] for p in points], "--", marker="o", mfc="none", color=f"C{i % 10}")
    finish(fig, ax, "nodes", "us per call", logx=True)
    rows = [(*g, p[0], fmt(p[1]), fmt(a[1]), fmt(p[1] / a[1] if a[1] else None), p[4])
            for g in maxs for p, a in zip(maxs[g], avgs.get(g, []))]
    return Figure(name, title, caption, (*fields, "nodes", "MAX us", "AVG us", "MAX/AVG", "repeats"), rows, fig)


def _results(col, benchmark):
    """(label, result, document) of every benchmark document, kept by a ReFrame run or given alone."""
    docs = {id(d): (c.label, d) for c in col.cases for d in c.documents}
    return [(label, r, d) for label, d in docs.values() if d.get("benchmark") == benchmark for r in d["results"]]


def halo_traces(col):
    name, title = "halo-traces", "Halo exchange: time per call against repetition"
    caption = ("Per-call MAX over tasks (black) and the per-call times of the traced tasks (jb-halo --series "
               "--trace-tasks), as the study plots tasks 1, 960 and 1920 on the P6.")
    traced = [(lab, r, d) for lab, r, d in _results(col, "halo") if "series" in r or "traces" in r][:4]
    if not traced:
        return missing(name, title, caption, "no jb-halo document with --series or --trace-tasks in these runs")
    fig, axes = subplots(len(traced), 1, figsize=(7, 2.6 * len(traced)), squeeze=False)
    rows = []
    for ax, (label, r, d) in zip(axes[:, 0], traced):
        if "series" in r:
            ax.plot(r["series"]["max_us"], color="black", lw=0.8, label="MAX over tasks")
        for task, times in (r.get("traces") or {}).items():
            ax.plot(times, lw=0.6, label=f"task {task}")
        ax.set_title(text(f"{label}: {results_mpi(d)} {r.get('pattern')} {r.get('placement')}, "
                          f"{r.get('tasks')} tasks"), fontsize=8)
        finish(fig, ax, "repetition", "us per call")
        worst = max(r["series"]["max_us"]) if "series" in r else None
        rows.append((label, results_mpi(d), r.get("pattern"), r.get("placement"), r.get("tasks"), r.get("calls"),
                     ",".join((r.get("traces") or {}).keys()) or "-", fmt(r.get("max_us")), fmt(r.get("p99_us")),
                     fmt(worst)))
    return Figure(name, title, caption, ("label", "MPI", "pattern", "placement", "tasks", "calls", "traced tasks",
                                         "MAX us", "p99 of MAX us", "worst call us"), rows, fig)


def results_mpi(doc):
    lib = doc.get("metadata", {}).get("mpi_library", "")
    return " ".join(lib.splitlines()[0].split(",")[0].replace(" for Linux* OS", "").split()) if lib else "?"


def _histogram_line(ax, hist, label, i):
    """A histogram's counts as steps; empty bins are gaps (log y has no zero)."""
    bins = hist["bins"]
    used = [j for j, b in enumerate(bins) if b[2] > 0]
    if used:
        bins = bins[used[0]:used[-1] + 1]
        counts = [b[2] or float("nan") for b in bins]
        ax.step([b[0] for b in bins] + [bins[-1][1]], counts + [counts[-1]], where="post",
                label=text(label), color=f"C{i % 10}")


def distributions(col):
    name, title = "distributions", "Per-call time distributions and their tails"
    caption = ("Counts of every task's every call time in log bins (20 per decade), merged over tasks; log y "
               "shows the tail.  The table gives the percentiles over calls of the per-call MAX, and the 99th "
               "percentile over every task's every call.")
    panels = [(b, _results(col, b)) for b in ("halo", "torus", "alltoall", "pingpong")]
    panels = [(b, rs) for b, rs in panels if any("histogram" in r for _, r, _ in rs)]
    if not panels:
        return missing(name, title, caption, "no benchmark documents with histograms in these runs")
    fig, axes = subplots(len(panels), 1, figsize=(7, 2.8 * len(panels)), squeeze=False)
    rows = []
    for ax, (bench, rs) in zip(axes[:, 0], panels):
        for i, (label, r, d) in enumerate(rs[:MAX_LINES]):
            what = " ".join(str(r[k]) for k in ("method", "pattern", "placement", "mode", "size", "ns_size", "work")
                            if k in r)
            _histogram_line(ax, r["histogram"], f"{label} {results_mpi(d)} {what}", i)
            rows.append((bench, label, results_mpi(d), what, r.get("calls", r.get("cycles")), fmt(r.get("p50_us")),
                         fmt(r.get("p99_us")), fmt(r.get("p999_us")), fmt(r.get("worst_us")), fmt(r.get("all_p99_us"))))
        ax.set_title(f"jb-{bench}", fontsize=9)
        ax.set_xscale("log")
        finish(fig, ax, "us per call (every task)", "count", logy=True)
    return Figure(name, title, caption, ("benchmark", "label", "MPI", "variant", "calls", "p50 of MAX us",
                                         "p99 of MAX us", "p99.9 of MAX us", "worst us", "p99 all us"), rows, fig)


def _pingpong_points(col):
    """(label, environ, mode, messages, size, speed) of every multi-ping-pong result."""
    return [(c.label, c.environ, c.params.get("mode"), c.params.get("messages"), c.params.get("msg_size"),
             c.value("speed")) for c in col.of("PingPongCheck") if c.value("speed") is not None]


def pingpong_speed(col):
    name, title = "pingpong-speed", "Multi-ping-pong: speed against message size and count"
    caption = ("speed = 2 n size / cycle time (MB = 10^6 bytes), the cycle time being the mean over cycles of "
               "the slowest pair, as in Hein, Booth and Bull, Fig. 1.")
    points = _pingpong_points(col)
    if not points:
        return missing(name, title, caption, "no multi-ping-pong results in these runs")
    fields = ("label", "environ", "mode", "messages")
    by_size = defaultdict(lambda: defaultdict(list))
    for lab, env, mode, n, size, speed in points:
        by_size[(lab, env, mode, n)][size].append(speed)
    series = {g: [(s, statistics.median(v), min(v), max(v), len(v)) for s, v in sorted(sizes.items())]
              for g, sizes in by_size.items()}
    fig, ax = subplots()
    line_plot(ax, series, fields)
    finish(fig, ax, "message size (bytes)", "MB/s", logx=True)
    rows = [(*g, p[0], fmt(p[1]), p[4]) for g, ps in series.items() for p in ps]
    return Figure(name, title, caption, (*fields, "size", "speed MB/s", "repeats"), rows, fig)


def pingpong_split(col):
    name, title = "pingpong-split", "Splitting a message: speed in n messages over speed in one"
    caption = ("For a fixed total of data, the speed when sent as n messages of total/n bytes divided by the "
               "speed as one message (Hein, Booth and Bull, Figs. 3 and 4); above 1, splitting pays.")
    speeds = defaultdict(list)
    for lab, env, mode, n, size, speed in _pingpong_points(col):
        speeds[(lab, env, mode, n * size, n)].append(speed)
    med = {k: statistics.median(v) for k, v in speeds.items()}
    series = defaultdict(list)
    for (lab, env, mode, total, n), s in sorted(med.items(), key=lambda kv: repr(kv[0])):
        one = med.get((lab, env, mode, total, 1))
        if n > 1 and one:
            series[(lab, env, mode, n)].append((total, s / one, s / one, s / one, 1))
    if not series:
        return missing(name, title, caption, "no fixed total measured both whole and split; run e.g. "
                                             "jb-pingpong --total 8K,64K --messages 1,2,4,8 --json split.json")
    fields = ("label", "environ", "mode", "messages")
    fig, ax = subplots()
    line_plot(ax, series, fields)
    ax.axhline(1.0, color="grey", lw=0.8)
    finish(fig, ax, "total bytes per direction", "speed ratio", logx=True)
    rows = [(*g, p[0], fmt(p[1])) for g, ps in series.items() for p in ps]
    return Figure(name, title, caption, (*fields, "total bytes", "ratio"), rows, fig)


def torus_dims(col):
    name, title = "torus-dims", "Ring and torus: bandwidth against dimensions"
    caption = ("Bytes each task sends per call (2 d size) over the per-call MAX, for tori of d dimensions "
               "(Hein, Booth and Bull, Fig. 6); one line per pattern and size.")
    cases = [c for c in col.of("TorusCheck") if not c.params.get("work")]
    if not cases:
        return missing(name, title, caption, "no TorusCheck results without work in these runs")
    fields = ("label", "environ", "pattern", "msg_size", "nodes")
    fig, ax, series, rows = case_lines(cases, fields, lambda c: c.params.get("ndims"), "bandwidth")
    ax.set_xticks(sorted({p[0] for ps in series.values() for p in ps}))
    finish(fig, ax, "dimensions", "MB/s per task")
    return Figure(name, title, caption, (*fields, "dimensions", "bandwidth MB/s", "repeats"), rows, fig)


def overlap(col):
    name, title = "overlap", "Overlap: time saved by working before MPI_Waitall"
    caption = ("The per-call MAX with the vector add after the final MPI_Waitall less that with it before "
               "(Hein, Booth and Bull, Figs. 8 and 9), against the bytes of each array; right: relative to "
               "the time with the work after.")
    cases = [c for c in col.of("TorusCheck") if c.params.get("work") and c.value("max_work_after") is not None]
    if not cases:
        return missing(name, title, caption, "no TorusCheck results with work in these runs")
    fields = ("label", "environ", "pattern", "msg_size", "ndims")
    saved = defaultdict(lambda: defaultdict(list))
    for c in cases:
        g = (c.label, c.environ, *(c.params.get(f) for f in fields[2:]))
        saved[g][c.params["work"]].append((c.value("max_work_after") - c.value("max"), c.value("max_work_after")))
    abs_series = {g: [(w, statistics.median([s for s, _ in v]), 0, 0, len(v)) for w, v in sorted(ws.items())]
                  for g, ws in saved.items()}
    rel_series = {g: [(w, statistics.median([s / t for s, t in v]), 0, 0, len(v)) for w, v in sorted(ws.items())]
                  for g, ws in saved.items()}
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    line_plot(left, abs_series, fields)
    line_plot(right, rel_series, fields)
    for ax, ylabel in ((left, "us saved per call"), (right, "fraction of the call saved")):
        ax.axhline(0, color="grey", lw=0.8)
        finish(fig, ax, "work array bytes", ylabel, logx=True)
    rows = [(*g, a[0], fmt(a[1]), fmt(r[1]), a[4]) for g in abs_series for a, r in zip(abs_series[g], rel_series[g])]
    return Figure(name, title, caption, (*fields, "work bytes", "saved us", "saved fraction", "repeats"), rows, fig)


def alltoall_throughput(col):
    name, title = "alltoall-throughput", "All-to-all: throughput per task against tasks"
    caption = ("Megabytes each task sends and receives, 2 (P - 1) size, over the per-call MAX (Tabe, Hardwick "
               "and Stout, Table 1).  Crosses: values a paper states, where its reference file has them.")
    cases = col.of("AlltoallCheck")
    stated = [(lab, s) for lab, _, s in col.stated if s.get("metric") == "alltoall_throughput" and s.get("value")
              and (s.get("at") or {}).get("tasks")]
    if not cases and not stated:
        return missing(name, title, caption, "no AlltoallCheck results in these runs")
    fields = ("label", "environ", "method", "msg_size")
    fig, ax, series, rows = case_lines(
        cases, fields, lambda c: c.params.get("nodes", 1) * c.params.get("tasks_per_node", 1), "throughput")
    papers = defaultdict(list)
    for lab, s in stated:
        papers[(lab, s.get("at", {}).get("msg_size"))].append((s["at"].get("tasks"), s["value"]))
    for (lab, size), pts in papers.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "x--", color="black", alpha=0.6,
                label=text(f"{lab} (paper, {size} B)"))
    finish(fig, ax, "tasks", "MB/s per task", logx=True)
    rows += [(lab, "(paper)", "pairwise", size, t, fmt(v), 1) for (lab, size), pts in papers.items() for t, v in pts]
    return Figure(name, title, caption, (*fields, "tasks", "throughput MB/s", "repeats"), rows, fig)


def alltoall_idle(col):
    name, title = "alltoall-idle", "All-to-all: exchange and idle time distributions"
    caption = ("Pairwise method: the time of each MPI_Sendrecv exchange (left) and the idle time before it, "
               "spent waiting for a partner still busy with its previous exchange (right), merged over tasks "
               "(Tabe, Hardwick and Stout, Figs. 3, 5 and 6).")
    rs = [(lab, r, d) for lab, r, d in _results(col, "alltoall") if "idle_histogram" in r][:MAX_LINES]
    if not rs:
        return missing(name, title, caption, "no pairwise jb-alltoall documents in these runs")
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    rows = []
    for i, (lab, r, d) in enumerate(rs):
        what = f"{lab} {results_mpi(d)} {r['size']} B, {r['tasks']} tasks"
        _histogram_line(left, r["exchange_histogram"], what, i)
        _histogram_line(right, r["idle_histogram"], what, i)
        samples = r.get("samples_us") or []
        rows.append((lab, results_mpi(d), r["size"], r["tasks"], fmt(r.get("exchange_p50_us")),
                     fmt(r.get("exchange_p99_us")), fmt(statistics.mean(samples) if samples else None),
                     fmt(statistics.stdev(samples) if len(samples) > 1 else None), fmt(r.get("idle_p50_us")),
                     fmt(r.get("idle_p99_us"))))
    for ax, what in ((left, "exchange"), (right, "idle")):
        ax.set_xscale("log")
        finish(fig, ax, f"{what} time, us", "count", logy=True)
    return Figure(name, title, caption, ("label", "MPI", "size", "tasks", "exchange p50 us", "exchange p99 us",
                                         "sample mean us", "sample sd us", "idle p50 us", "idle p99 us"), rows, fig)


def contention(col):
    name, title = "contention", "Contention: latency against hops"
    caption = ("One-way latency (half the round trip, mean over calls of the mean over pairs) against the "
               "distance: hops h alone, pairs n hops apart all at once, k pairs sharing a link (Bhatele and "
               "Kale).")
    cases = col.of("ContentionCheck")
    if not cases:
        return missing(name, title, caption, "no ContentionCheck results in these runs (a system with a "
                                             "topology file: see jb-contention)")
    fields = ("label", "environ", "pattern", "msg_size")
    distance = lambda c: c.params.get("distance")  # noqa: E731
    fig, ax, _, rows = case_lines(cases, fields, distance, "latency")
    finish(fig, ax, "distance (hops h, n or pairs k)", "us", logy=True)
    slowdown = {(*g, p[0]): p[1] for g, ps in grouped(
        cases, lambda c: (c.label, c.environ, c.params["pattern"], c.params["msg_size"]), distance, "slowdown").items()
        for p in ps}
    rows = [(*row[:-1], fmt(slowdown.get(row[:5])), row[-1]) for row in rows]
    return Figure(name, title, caption, (*fields, "distance", "latency us", "slow-down", "repeats"), rows, fig)


def osu(col):
    name, title = "osu", "OSU Micro-Benchmarks beside jitterbench"
    caption = ("osu_latency's average latency and jb-pingpong's (mode send, one message) half cycle, the "
               "same definition; osu_bw beside the multi-ping-pong speed.")
    ours = [c for c in col.of("PingPongCheck") if c.params.get("mode") == "send" and c.params.get("messages") == 1]
    theirs = [c for c in col.of("OsuCheck") if c.params.get("benchmark") in ("osu_latency", "osu_bw")]
    if not ours and not theirs:
        return missing(name, title, caption, "no PingPongCheck (send, one message) or OsuCheck results")
    rows, lat, bw = [], defaultdict(list), defaultdict(list)
    for c in ours:
        size = c.params.get("msg_size")
        if c.value("cycle") is not None:  # None: a run whose value was not measured
            lat[(c.label, c.environ, "jb-pingpong")].append((size, c.value("cycle") / 2))
        if c.value("speed") is not None:
            bw[(c.label, c.environ, "jb-pingpong")].append((size, c.value("speed")))
    for c in theirs:
        target = lat if c.params["benchmark"] == "osu_latency" else bw
        for var, p in c.perf.items():
            if re.fullmatch(r"\w+_[0-9]+", var) and p.value is not None:  # latency_8: the value at 8 bytes
                target[(c.label, c.environ, c.params["benchmark"])].append((int(var.rsplit("_", 1)[1]), p.value))
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    for ax, data, ylabel in ((left, lat, "latency us"), (right, bw, "MB/s")):
        series = {g: [(s, statistics.median([v for x, v in pts if x == s]), 0, 0, sum(x == s for x, _ in pts))
                      for s in sorted({x for x, _ in pts})] for g, pts in data.items()}
        line_plot(ax, series, ("label", "environ", "benchmark"), keep=("benchmark",))
        finish(fig, ax, "message size (bytes)", ylabel, logx=True)
        rows += [(*g, ylabel, p[0], fmt(p[1]), p[4]) for g, ps in series.items() for p in ps]
    note = "" if theirs else "OSU Micro-Benchmarks did not run here (OsuCheck was skipped): jitterbench alone."
    return Figure(name, title, caption, ("label", "environ", "benchmark", "quantity", "size", "value", "repeats"),
                  rows, fig, note)


ALL = (halo_scaling, halo_traces, distributions, pingpong_speed, pingpong_split, torus_dims, overlap,
       alltoall_throughput, alltoall_idle, contention, osu)


def all_figures(col):
    return [make(col) for make in ALL]
