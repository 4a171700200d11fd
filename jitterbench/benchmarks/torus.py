"""jb-torus and TorusCheck: rings and tori in d dimensions, and the overlap of work with
communication (Hein, Booth and Bull)."""
from __future__ import annotations

import statistics
from collections import defaultdict

from ..figures import case_lines, figure, finish, fmt, line_plot, subplots
from . import PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, _cost as cost, per_call

CHECK, BENCHMARK = "TorusCheck", "torus"


def cases_of(doc):
    """A case per result, but that with the work after MPI_Waitall: its MAX is the case's
    max_work_after, beside the MAX with the work before (and with --trials, the fastest
    trial's of each: fastest_work_after and fastest)."""
    variant = lambda r: (r.get("pattern"), r.get("ndims"), r.get("size"), r.get("work_bytes"))  # noqa: E731
    after = {variant(r): r for r in doc["results"] if r.get("work") == "after"}
    for r in doc["results"]:
        if r.get("work") == "after":
            continue
        perf = DESCRIPTOR.values_of(r, *OWN_LINE)
        other = after.get(variant(r))
        if other:
            perf.update(DESCRIPTOR.values_of(other, "max_work_after"))
            if "fastest_us" in r and "fastest_us" in other:
                perf.update({**DESCRIPTOR.values_of(r, "fastest"), **DESCRIPTOR.values_of(other, "fastest_work_after")})
        yield {"pattern": r["pattern"], "ndims": r["ndims"], "msg_size": r["size"],
               "work": r.get("work_bytes", 0)}, perf


@figure
def torus_dims(col):
    """Ring and torus: bandwidth against dimensions

    Bytes each task sends per call (2 d size) over the per-call MAX, for tori of d dimensions (Hein, Booth and
    Bull, Fig. 6); one line per pattern and size.
    """
    cases = [c for c in col.of(CHECK) if not c.params.get("work")]
    if not cases:
        return f"no {CHECK} results without work in these runs"
    fields = ("label", "environ", "pattern", "msg_size", "nodes")
    fig, ax, series, rows = case_lines(cases, fields, lambda c: c.params.get("ndims"), "bandwidth")
    ax.set_xticks(sorted({p[0] for ps in series.values() for p in ps}))
    finish(fig, ax, "dimensions", "MB/s per task")
    return (*fields, "dimensions", "bandwidth MB/s", "repeats"), rows, fig


@figure
def overlap(col):
    """Overlap: time saved by working before MPI_Waitall

    The per-call MAX with the vector add after the final MPI_Waitall less that with it before (Hein, Booth and
    Bull, Figs. 8 and 9), against the bytes of each array; right: relative to the time with the work after.
    Where the run took the fastest of several trials (jb-torus --trials), as the study did, the fastest
    trial's mean per-call MAX stands for each.
    """
    cases = [c for c in col.of(CHECK) if c.params.get("work") and c.value("max_work_after") is not None]
    if not cases:
        return f"no {CHECK} results with work in these runs"
    fields = ("label", "environ", "pattern", "msg_size", "ndims")
    saved = defaultdict(lambda: defaultdict(list))
    for c in cases:
        g = (c.label, c.environ, *(c.params.get(f) for f in fields[2:]))
        after, before = (("fastest_work_after", "fastest") if c.value("fastest") is not None
                         else ("max_work_after", "max"))
        saved[g][c.params["work"]].append((c.value(after) - c.value(before), c.value(after)))
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
    return (*fields, "work bytes", "saved us", "saved fraction", "repeats"), rows, fig


# the quantities of a run's own line (with work: the work before MPI_Waitall); max_work_after
# and fastest_work_after are read from the line of the same variant with the work after it
OWN_LINE = ("max", "avg", "p99", "t_max", "bandwidth")

DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=30, cases=cases_of, swept="pattern",
    study="Hein, Booth, Bull", about="rings and tori in d dimensions, overlap of work and communication",
    quantities=(*per_call("max", "avg", "p99", "t_max"), *START_SKEW,
                Quantity("bandwidth", "bandwidth_mb_s", "MB/s", "bytes a task sends in a call over the mean per-call "
                         "MAX", better="higher"),
                Quantity("fastest", "fastest_us", "us", "the fastest trial's mean per-call MAX (--trials)"),
                Quantity("max_work_after", "max_us", "us", "the mean per-call MAX with the work after MPI_Waitall"),
                Quantity("fastest_work_after", "fastest_us", "us", "the fastest trial's, the work after MPI_Waitall")),
    result_fields=("pattern", "ndims", "dims", "size", "work", "work_bytes", "tasks", "trials", *PER_CALL_CONTEXT,
                   "series"),
    parameters=(Parameter("patterns", ("phases", "sendrecv", "isend", "issend", "ibsend"), quick=("isend",)),
                Parameter("msg_sizes", (1024, 16384)),
                # with work: the array sizes measured beside the work parameter's, each the fastest of trials
                Parameter("work_sweep", (65536, 1048576), quick=(65536,)), Parameter("trials", 10, quick=2),
                Parameter("calls", 300)),
    option_values={"ndims": ["1", "2"], "dims": ["1", "2", "1x2"], "work": ["0", "1K"], "trials": ["1", "2"]},
    # with work: every work size swept (work_sweep beside work), each timed trials x calls
    cost=lambda v: cost.sweep_s(v, 50, lambda s: cost.barrier_s(cost.tasks(v)) + 2 * v.get("ndims", 1) *
                                cost.message_s(s) + v.get("work", 0) / cost.WORK_B_S) *
    (len({v["work"], *(v.get("work_sweep") or [])}) * (v.get("trials") or 1) if v.get("work") else 1),
    figures=(torus_dims, overlap),
    distribution=("pattern", "size", "work"),
    summary=(Column.text("pattern", "pattern"), Column.text("dims", "ndims"), Column.text("size", "size"),
             Column.text("work", "work"), Column.text("work bytes", "work_bytes"), Column.number("MAX us", "max_us"),
             Column.number("AVG us", "avg_us"), Column.ratio("MAX/AVG", "max_us", "avg_us"),
             Column.number("p99(MAX)", "p99_us"), Column.number("t_max (IMB)", "t_max_us", required=False),
             Column.number("start skew us", "start_skew_max_us", required=False),
             Column.number("MB/s", "bandwidth_mb_s")),
)
