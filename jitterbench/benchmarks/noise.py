"""jb-noise and NoiseCheck: the selfish-detour probe (Beckman, Iskra, Yoshii and Coghlan),
every core of every node at once, summarised per node."""
from __future__ import annotations

from collections import defaultdict

from ..figures import figure, finish, fmt, line_plot, results, results_mpi, subplots
from . import Column, Descriptor, Parameter, Quantity

CHECK, BENCHMARK = "NoiseCheck", "noise"


def cases_of(doc):
    """One case per run: its worst node, as a bulk-synchronous code waits for it."""
    nodes = doc["results"]
    if nodes:
        yield {}, {name: (max((r[f] for r in nodes if r[f] is not None), default=None), unit)
                   for name, (f, unit) in DESCRIPTOR.performance().items()}


@figure
def noise_nodes(col):
    """Noise: the time each node's cores lose to detours

    Selfish detours (Beckman et al.): every task spins reading the clock, and a step longer than the threshold
    is a detour.  Per node, merged over its tasks: the fraction of the time probed spent in detours (left) and
    the detours per second per task (right); the table adds their lengths and period.
    """
    rs = results(col, BENCHMARK)
    if not rs:
        return "no jb-noise documents in these runs"
    fraction, rate, rows = defaultdict(list), defaultdict(list), []
    for lab, r, d in rs:
        group = (lab, results_mpi(d))
        for series, field in ((fraction, "noise_fraction"), (rate, "rate_per_s")):
            if r.get(field) is not None:
                series[group].append((r["node"], r[field], r[field], r[field], 1))
        rows.append((lab, results_mpi(d), r["node"], r.get("host"), r.get("tasks"), r.get("detours"),
                     fmt(r.get("rate_per_s")), fmt(r.get("noise_fraction")), fmt(r.get("length_p50_us")),
                     fmt(r.get("length_p99_us")), fmt(r.get("length_max_us")), fmt(r.get("period_us")),
                     fmt(r.get("regularity"))))
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    for ax, series, ylabel in ((left, fraction, "fraction of time in detours"),
                               (right, rate, "detours per s per task")):
        line_plot(ax, series, ("label", "MPI"))
        finish(fig, ax, "node", ylabel)
    return ("label", "MPI", "node", "host", "tasks", "detours", "per s", "fraction", "p50 us", "p99 us", "max us",
            "period us", "regularity"), rows, fig


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=70, cases=cases_of,
    study="Beckman et al.'s selfish detour", about="what the system takes from every core, per node",
    # one result a node; the check's variables are the worst node's
    quantities=(Quantity("noise_fraction", "noise_fraction", "fraction", "the worst node's share of time in detours, "
                         "over its cores"),
                Quantity("rate", "rate_per_s", "1/s", "the worst node's detours a second a core"),
                Quantity("length_p50", "length_p50_us", "us", "median detour of a node", role="recorded"),
                Quantity("length_p99", "length_p99_us", "us", "the worst node's 99th percentile of detour lengths"),
                Quantity("length_max", "length_max_us", "us", "the longest detour of any node", role="reported"),
                Quantity("period", "period_us", "us", "a node's commonest time between detours", role="recorded"),
                Quantity("regularity", "regularity", "", "share of a node's detours at that period", role="recorded")),
    result_fields=("node", "host", "tasks", "detours", "detours_not_kept", "threshold_us"),
    parameters=(Parameter("duration", 5.0),),  # seconds of the probe
    small=("--duration", "0.01"),
    option_values={"duration": ["0.01", "0.05"], "threshold": ["1", "20"], "max-detours": ["10", "1000"]},
    long_options=("duration",),
    cost=lambda v: float(v.get("duration") or 5),  # a probe of fixed length, every core at once
    figures=(noise_nodes,),
    summary=(Column.text("node", "node"), Column.text("host", "host"), Column.text("tasks", "tasks"),
             Column.text("detours", "detours"), Column.number("per s", "rate_per_s"),
             Column.number("fraction", "noise_fraction", 4),
             *(Column.number(header, name, 2, required=False) for header, name in (
                 ("p50 us", "length_p50_us"), ("p99 us", "length_p99_us"), ("max us", "length_max_us"),
                 ("period us", "period_us"), ("regularity", "regularity")))),
)
