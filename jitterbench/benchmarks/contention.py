"""jb-contention and ContentionCheck: latency against hops and contention for links
(Bhatele and Kale)."""
from __future__ import annotations

from ..figures import case_lines, figure, finish, fmt, grouped
from . import PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, _cost as cost, of, per_call

CHECK, BENCHMARK = "ContentionCheck", "contention"


def cases_of(doc):
    for r in doc["results"]:
        perf = DESCRIPTOR.values_of(r, "latency", "latency_p50", "max")
        if r.get("slowdown") is not None:
            perf.update(DESCRIPTOR.values_of(r, "slowdown"))
        yield {"pattern": r["pattern"], "msg_size": r["size"], "distance": r.get("k", r.get("hops"))}, perf


@figure
def contention(col):
    """Contention: latency against hops

    One-way latency (half the round trip, mean over calls of the mean over pairs) against the distance: hops h
    alone, pairs n hops apart all at once, k pairs sharing a link (Bhatele and Kale).
    """
    cases = col.of(CHECK)
    if not cases:
        return f"no {CHECK} results in these runs (a system with a topology file: see jb-contention)"
    fields = ("label", "environ", "pattern", "msg_size")
    distance = lambda c: c.params.get("distance")  # noqa: E731
    fig, ax, _, rows = case_lines(cases, fields, distance, "latency")
    finish(fig, ax, "distance (hops h, n or pairs k)", "us", logy=True)
    slowdown = {(*g, p[0]): p[1] for g, ps in grouped(
        cases, lambda c: (c.label, c.environ, c.params["pattern"], c.params["msg_size"]), distance, "slowdown").items()
        for p in ps}
    rows = [(*row[:-1], fmt(slowdown.get(row[:5])), row[-1]) for row in rows]
    return (*fields, "distance", "latency us", "slow-down", "repeats"), rows, fig


def max_slowdown(cases, at):
    """The largest slow-down under contention."""
    return max([c.value("slowdown") for c in of(cases, CHECK) if c.value("slowdown") is not None], default=None)


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=50, cases=cases_of,
    study="Bhatele, Kale", about="latency against hops and contention for links", features=("topology",),
    quantities=(Quantity("latency", "latency_us", "us", "half the round trip: mean over calls of the mean over pairs"),
                Quantity("latency_p50", "latency_p50_us", "us", "half the round trip: median over calls of the mean "
                         "over pairs"),
                *per_call("max"), *START_SKEW,
                Quantity("slowdown", "slowdown", "", "latency over the uncontended latency at the same distance, in "
                         "the same run")),
    result_fields=("pattern", "size", "hops", "k", "pairs", "partner", "idle", "shared_link", "slowest_pair",
                   "slowest_pair_calls", "slowest_link", "slowest_link_calls", *PER_CALL_CONTEXT),
    # h, n and k of the run (those the topology reaches)
    parameters=(Parameter("msg_sizes", (8, 1024, 65536, 1048576)), Parameter("distances", (1, 2, 3, 4, 6, 8)),
                Parameter("calls", 100)),
    small=("--size", "8"),
    pair_options=("--dims", "2"),
    option_values={"dims": ["1", "2", "1x2"], "hops": ["1"], "k": ["1"], "dim": ["0"], "wrap": ["yes", "no"]},
    cost=lambda v: cost.sweep_s(v, 10, lambda s: cost.barrier_s(cost.tasks(v)) + 2 * cost.message_s(s) *
                                len(v.get("distances") or [1])),
    figures=(contention,),
    counterparts={"contention_max_slowdown": max_slowdown},
    summary=(Column.text("pattern", "pattern"), Column.text("size", "size"), Column.text("hops", "hops"),
             Column.text("k", "k"), Column.text("pairs", "pairs"), Column.number("latency us", "latency_us", 2),
             Column.number("MAX us", "max_us"), Column.number("slow-down", "slowdown", 2, required=False)),
)
