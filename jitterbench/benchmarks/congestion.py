"""jb-congestion and CongestionCheck: the congestion impact factors of GPCNeT (Chunduri et al., SC19),
canaries timed alone and beside congestors on the other nodes."""
from __future__ import annotations

from ..figures import figure, finish, fmt, results, results_mpi, subplots, text
from . import PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, per_call

CHECK, BENCHMARK = "CongestionCheck", "congestion"


def cases_of(doc):
    for r in doc["results"]:
        if r["phase"] == "congested":
            yield {"canary": r["canary"]}, DESCRIPTOR.values_of(r)


@figure
def congestion(col):
    """Congestion: each canary's time beside congestors over its time alone

    GPCNeT's congestion impact factor (Chunduri et al., SC19): the canaries (random-ring latency and bandwidth, an
    8-byte allreduce) on a fifth of the nodes, timed alone and while all-to-all, incast and broadcast congestors
    load the rest; the factor for the mean over calls of the mean over canary tasks, and for the 99th percentile
    over calls of the per-call MAX.  1 is no impact.
    """
    rs = [(label, r, d) for label, r, d in results(col, BENCHMARK) if r.get("phase") == "congested"]
    if not rs:
        return f"no jb-congestion documents in these runs ({CHECK} on four nodes or more)"
    fig, ax = subplots(1, 1, figsize=(7, 4))
    rows, width = [], 0.8 / max(len(rs), 1)
    canaries = sorted({r["canary"] for _, r, _ in rs})
    for i, (label, r, d) in enumerate(rs):
        x = canaries.index(r["canary"])
        congestors = ",".join(c["congestor"] for c in d["config"].get("congestors", [])) or "none"
        for j, key in enumerate(("impact_avg", "impact_p99")):
            ax.bar(x + i * width + j * width / 2, r[key], width / 2, color=f"C{j}",
                   label=key if i == 0 and x == 0 else None)
        rows.append((label, results_mpi(d), r["canary"], congestors, r["tasks"], fmt(r["avg_us"]), fmt(r["p99_us"]),
                     fmt(r["impact_avg"]), fmt(r["impact_p99"])))
    ax.axhline(1, color="black", lw=0.8)
    ax.set_xticks(range(len(canaries)), [text(c) for c in canaries])
    finish(fig, ax, "canary", "congested / isolated")
    return ("label", "MPI", "canary", "congestors", "canary tasks", "congested avg us", "congested p99 us",
            "impact avg", "impact p99"), rows, fig


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=57, cases=cases_of, swept="canary",
    study="GPCNeT (Chunduri et al.)", about="congestion impact of all-to-all, incast and broadcast on canaries",
    quantities=(Quantity("impact_avg", "impact_avg", "x", "congested over isolated, of the mean over calls of the mean "
                         "over canary tasks"),
                Quantity("impact_p99", "impact_p99", "x", "congested over isolated, of the 99th percentile over calls "
                         "of the per-call MAX over canary tasks"),
                Quantity("bandwidth", "bandwidth_mb_s", "MB/s", "a canary task's bytes out (both neighbours) over "
                         "the mean call", better="higher", role="reported"),
                *per_call(), *START_SKEW),
    result_fields=("canary", "phase", "size", "tasks", *PER_CALL_CONTEXT),
    parameters=(Parameter("calls", 200), Parameter("rounds", 10, quick=4)),
    small=("--calls", "4", "--rounds", "2"),
    pair_options=("--tasks-per-node", "1", "--congestors", "none"),
    option_values={"canary": ["latency", "bandwidth", "allreduce"], "congestors": ["none", "alltoall"],
                   "canary-share": ["0.2", "0.5"], "latency-size": ["8"], "bandwidth-size": ["4K"],
                   "congestor-size": ["1K"]},
    # calls x rounds x 2 phases: a barrier and a ring exchange of 128 KiB or less, per canary
    cost=lambda v: 2 * ((v.get("calls") or 200) + 10) * (3 * 2 * 5e-6 + 2 * 131072 / 1e9) + 0.1 * (v.get("rounds") or 10),
    min_nodes=4,
    figures=(congestion,),
    summary=(Column.text("canary", "canary"), Column.text("phase", "phase"), Column.number("avg us", "avg_us"),
             Column.number("p99 us", "p99_us"), Column.number("impact avg", "impact_avg", 2, required=False),
             Column.number("impact p99", "impact_p99", 2, required=False)),
)
