"""jb-halo and HaloCheck: the halo exchange of Hague's "Switch Jitter"."""
from __future__ import annotations

from ..figures import MAX_LINES, case_lines, figure, finish, fmt, grouped, names, results, results_mpi, subplots, text
from . import (PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, _cost as cost, median, per_call,
               results_of)

CHECK, BENCHMARK = "HaloCheck", "halo"


def cases_of(doc):
    for r in doc["results"]:
        yield ({"placement": r["placement"], "pattern": r["pattern"], "msg_size": r["ns_size"]},
               DESCRIPTOR.values_of(r))


@figure
def halo_scaling(col):
    """Halo exchange: MAX and AVG against nodes

    MAX (solid, filled) is the mean over calls of the slowest task's time, AVG (dashed, open) the mean over
    calls of the mean over tasks, as in Hague's 'Switch Jitter' slides; one line per pattern and placement,
    or, where every run had one node count, a pair of bars (MAX filled, AVG hatched) per variant.
    """
    cases = col.of(CHECK)
    if not cases:
        return f"no {CHECK} results in these runs"
    fields = ("label", "environ", "pattern", "placement", "msg_size", "tasks_per_node", "eager_limit")
    nodes = lambda c: c.params.get("nodes")  # noqa: E731
    if len({nodes(c) for c in cases}) == 1:  # one node count: a line of one point each says nothing
        return halo_bars(cases, fields)
    fig, ax, maxs, _ = case_lines(cases, fields, nodes, "max")
    avgs = grouped(cases, lambda c: (c.label, c.environ, *(c.params.get(f) for f in fields[2:])), nodes, "avg")
    for i, (g, points) in enumerate(list(avgs.items())[:MAX_LINES]):
        ax.plot([p[0] for p in points], [p[1] for p in points], "--", marker="o", mfc="none", color=f"C{i % 10}")
    finish(fig, ax, "nodes", "us per call", logx=True)
    rows = [(*g, p[0], fmt(p[1]), fmt(a[1]), fmt(p[1] / a[1] if a[1] else None), p[4])
            for g in maxs for p, a in zip(maxs[g], avgs.get(g, []))]
    return (*fields, "nodes", "MAX us", "AVG us", "MAX/AVG", "repeats"), rows, fig


def halo_bars(cases, fields):
    """MAX and AVG side by side, a pair of bars per variant (median over repeats), where every
    case ran on one node count."""
    maxs = grouped(cases, lambda c: (c.label, c.environ, *(c.params.get(f) for f in fields[2:])), lambda c: 0, "max")
    avgs = grouped(cases, lambda c: (c.label, c.environ, *(c.params.get(f) for f in fields[2:])), lambda c: 0, "avg")
    groups = list(maxs)[:MAX_LINES]
    labels = names(groups, fields)
    fig, ax = subplots(figsize=(7, 1.5 + 0.35 * len(groups)))
    at = range(len(groups))
    ax.barh([i + 0.2 for i in at], [maxs[g][0][1] for g in groups], height=0.4, color="C0", label="MAX")
    ax.barh([i - 0.2 for i in at], [avgs[g][0][1] if avgs.get(g) else 0 for g in groups], height=0.4, color="C1",
            fill=False, hatch="//", edgecolor="C1", label="AVG")
    ax.set_yticks(list(at), [text(labels[g]) for g in groups], fontsize=7)
    ax.invert_yaxis()
    finish(fig, ax, "us per call", "")
    nodes = cases[0].params.get("nodes")
    rows = [(*g, nodes, fmt(maxs[g][0][1]), fmt(avgs[g][0][1] if avgs.get(g) else None),
             fmt(maxs[g][0][1] / avgs[g][0][1] if avgs.get(g) and avgs[g][0][1] else None), maxs[g][0][4])
            for g in maxs]
    return (*fields, "nodes", "MAX us", "AVG us", "MAX/AVG", "repeats"), rows, fig


@figure
def halo_traces(col):
    """Halo exchange: time per call against repetition

    Per-call MAX over tasks (black) and the per-call times of the traced tasks (jb-halo --series --trace-tasks),
    as the study plots tasks 1, 960 and 1920 on the P6.
    """
    traced = [(lab, r, d) for lab, r, d in results(col, BENCHMARK) if "series" in r or "traces" in r][:4]
    if not traced:
        return "no jb-halo document with --series or --trace-tasks in these runs"
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
    return ("label", "MPI", "pattern", "placement", "tasks", "calls", "traced tasks", "MAX us", "p99 of MAX us",
            "worst call us"), rows, fig


def off_node_per_node(cases, at):
    """Off-node send/recvs per node per halo call, at: placement, tasks_per_node."""
    return median([r["off_node_per_node"] for r in results_of(cases, BENCHMARK) if r.get("placement") == at.get(
        "placement") and r.get("tasks_per_node") == at.get("tasks_per_node")])


def _size(r):
    """ns_size, with ew_size after a '/' where the two differ."""
    ns, ew = r.get("ns_size"), r.get("ew_size")
    return str(ns) if ns == ew else f"{ns}/{ew}"


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=10, cases=cases_of, swept="pattern",
    study="Hague, \"Switch Jitter\"", about="halo exchange, four patterns, row or bunched placement",
    quantities=(*per_call("max", "avg", "p99", "t_max", "jitter"), *START_SKEW,
                Quantity("off_node_bytes_per_node", "off_node_bytes_per_node", "B",
                         "most bytes one node sends off-node in a call", role="recorded"),
                Quantity("gb_s_per_node", "gb_s_per_node", "GB/s",
                         "off_node_bytes_per_node over the mean per-call MAX", better="higher", role="recorded")),
    result_fields=("placement", "pattern", "ns_size", "ew_size", "tasks", "nodes", "tasks_per_node",
                   "off_node_per_node", "messages_per_call", "messages_per_task", "injected_task_calls",
                   *PER_CALL_CONTEXT,
                   "series", "traces", "injected_tasks_per_call",  # with --series, --trace-tasks, --inject
                   "median_halfwidth"),  # with --target-width
    size_field="ns_size",
    parameters=(Parameter("patterns", ("two-phase", "irecv-isend", "isend-recv", "sendrecv"), quick=("isend-recv",)),
                Parameter("msg_sizes", (4096, 40960)),  # the study's 4K and 40K exchanges
                Parameter("calls", 1000)),
    option_values={"ns-size": ["848"], "ew-size": ["1016"], "block": ["1x1", "1x2"], "px": ["1", "2"],
                   "trace-tasks": ["0", "0,1"], "target-width": ["0.05", "0.5"]},
    cost=lambda v: cost.sweep_s(v, 50, lambda s: cost.barrier_s(cost.tasks(v)) + 4 * cost.message_s(s)),
    figures=(halo_scaling, halo_traces),
    distribution=("pattern", "placement", "ns_size"),
    counterparts={"halo_off_node_per_node": off_node_per_node},
    summary=(Column.text("placement", "placement"), Column.text("off-node", "off_node_per_node"),
             Column.text("pattern", "pattern"), Column("size", _size), Column.number("MAX us", "max_us"),
             Column.number("AVG us", "avg_us"), Column.ratio("MAX/AVG", "max_us", "avg_us"),
             Column.number("p99(MAX)", "p99_us"), Column.number("t_max (IMB)", "t_max_us", required=False),
             Column.number("start skew us", "start_skew_max_us", required=False)),
)
