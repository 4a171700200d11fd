"""jb-alltoall and AlltoallCheck: the SP2's pairwise all-to-all (Tabe, Hardwick and Stout)."""
from __future__ import annotations

import statistics
from collections import defaultdict

from ..figures import MAX_LINES, case_lines, figure, finish, fmt, histogram_line, results, results_mpi, subplots, text
from . import (PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, _cost as cost, median, of,
               per_call, results_of)

CHECK, BENCHMARK = "AlltoallCheck", "alltoall"


def cases_of(doc):
    for r in doc["results"]:
        yield {"method": r["method"], "msg_size": r["size"]}, DESCRIPTOR.values_of(r)


@figure
def alltoall_throughput(col):
    """All-to-all: throughput per task against tasks

    Megabytes each task sends and receives, 2 (P - 1) size, over the per-call MAX (Tabe, Hardwick and Stout,
    Table 1). Crosses: values a paper states, where its reference file has them.
    """
    cases = col.of(CHECK)
    stated = [(lab, s) for lab, _, s in col.stated if s.get("metric") == "alltoall_throughput" and s.get("value")
              and (s.get("at") or {}).get("tasks")]
    if not cases and not stated:
        return f"no {CHECK} results in these runs"
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
    return (*fields, "tasks", "throughput MB/s", "repeats"), rows, fig


@figure
def alltoall_idle(col):
    """All-to-all: exchange and idle time distributions

    Pairwise method: the time of each MPI_Sendrecv exchange (left) and the idle time before it, spent waiting
    for a partner still busy with its previous exchange (right), merged over tasks (Tabe, Hardwick and Stout,
    Figs. 3, 5 and 6).
    """
    rs = [(lab, r, d) for lab, r, d in results(col, BENCHMARK) if "idle_histogram" in r][:MAX_LINES]
    if not rs:
        return "no pairwise jb-alltoall documents in these runs"
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    rows = []
    for i, (lab, r, d) in enumerate(rs):
        what = f"{lab} {results_mpi(d)} {r['size']} B, {r['tasks']} tasks"
        histogram_line(left, r["exchange_histogram"], what, i)
        histogram_line(right, r["idle_histogram"], what, i)
        samples = r.get("samples_us") or []
        rows.append((lab, results_mpi(d), r["size"], r["tasks"], fmt(r.get("exchange_p50_us")),
                     fmt(r.get("exchange_p99_us")), fmt(statistics.mean(samples) if samples else None),
                     fmt(statistics.stdev(samples) if len(samples) > 1 else None), fmt(r.get("idle_p50_us")),
                     fmt(r.get("idle_p99_us"))))
    for ax, what in ((left, "exchange"), (right, "idle")):
        ax.set_xscale("log")
        finish(fig, ax, f"{what} time, us", "count", logy=True)
    return ("label", "MPI", "size", "tasks", "exchange p50 us", "exchange p99 us", "sample mean us", "sample sd us",
            "idle p50 us", "idle p99 us"), rows, fig


def throughput(cases, at):
    """MB/s per task of the pairwise method as paper 003's Table 1 defines it, at: tasks, msg_size."""
    return median([c.value("throughput") for c in of(cases, CHECK) if c.params.get("method") == "pairwise"
                   and c.params.get("msg_size") == at.get("msg_size")
                   and c.params.get("nodes", 1) * c.params.get("tasks_per_node", 1) == at.get("tasks")])


def _exchange_samples(cases, at):
    """The times of single pairwise MPI_Sendrecv exchanges of an all-to-all, at: msg_size."""
    samples = [s for r in results_of(cases, BENCHMARK) if r.get("size") == at.get("msg_size")
               for s in r.get("samples_us", [])]
    return samples if len(samples) >= 2 else None


def exchange_mean(cases, at):
    samples = _exchange_samples(cases, at)
    return statistics.mean(samples) if samples else None


def exchange_sd(cases, at):
    samples = _exchange_samples(cases, at)
    return statistics.stdev(samples) if samples else None


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=40, cases=cases_of, swept="method",
    study="Tabe, Hardwick, Stout", about="the SP2's pairwise all-to-all, exchange and idle times",
    quantities=(*per_call("max", "avg", "p99", "t_max"), *START_SKEW,
                Quantity("throughput", "throughput_mb_s", "MB/s", "bytes a task sends in a call over the mean "
                         "per-call MAX (Table 1)", better="higher"),
                *(Quantity(f"{what}_{stat}", f"{what}_{stat}_us", "us", f"{stat} over tasks, rounds and calls of one "
                           f"{what} time", role="recorded") for what in ("exchange", "idle") for stat in ("p50", "p99"))),
    result_fields=("method", "size", "tasks", "rounds", "exchange_histogram", "idle_histogram", "idle_method",
                   "exchanges_unknown", "samples_us", "inject_probability", "injected_exchanges", *PER_CALL_CONTEXT,
                   "series"),
    parameters=(Parameter("methods", ("pairwise", "alltoall")), Parameter("msg_sizes", (1024, 65536)),
                Parameter("calls", 200)),
    option_values={"procs": ["2"], "max-samples": ["1", "100"]},
    cost=lambda v: cost.sweep_s(v, 10, lambda s: cost.barrier_s(cost.tasks(v)) + (cost.tasks(v) - 1) *
                                cost.message_s(s)),
    figures=(alltoall_throughput, alltoall_idle),
    distribution=("method", "size"),
    counterparts={"alltoall_throughput": throughput, "exchange_mean_us": exchange_mean,
                  "exchange_sd_us": exchange_sd},
    summary=(Column.text("method", "method"), Column.text("size", "size"), Column.text("tasks", "tasks"),
             Column.number("MAX us", "max_us"), Column.number("AVG us", "avg_us"),
             Column.ratio("MAX/AVG", "max_us", "avg_us"), Column.number("MB/s", "throughput_mb_s", 3),
             Column.number("p99(MAX)", "p99_us"), Column.number("t_max (IMB)", "t_max_us", required=False),
             Column.number("start skew us", "start_skew_max_us", required=False)),
)
