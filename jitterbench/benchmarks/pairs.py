"""jb-pairs and PairsCheck: every node pair's latency and bandwidth (JSC's LinkTest, NVIDIA's
ClusterKit), and the pairs and nodes that stand out."""
from __future__ import annotations

from ..figures import figure, finish, fmt, results, results_mpi, subplots, text
from . import Column, Descriptor, Parameter, Quantity, _cost as cost

CHECK, BENCHMARK = "PairsCheck", "pairs"


def summary_of(doc):
    """The run's summary over all pairs (its last result), or None."""
    return next((r for r in doc["results"] if r.get("scope") == "pairs"), None)


def cases_of(doc):
    found = summary_of(doc)
    if found and found["pairs"]:  # one node has none
        yield {"latency_size": doc["config"].get("latency_size"),
               "bandwidth_size": doc["config"].get("bandwidth_size")}, DESCRIPTOR.values_of(found)


@figure
def pairs(col):
    """Node pairs: latency and bandwidth of every pair, and the outliers

    jb-pairs measures every node pair once, in the rounds of a round-robin tournament (disjoint pairs at once,
    one task per node): the median of a ping-pong's round trip / 2 and of osu_bw's window.  Heatmaps where the
    document holds the matrix (up to 32 nodes; --matrix writes it for any); beneath, each node's median over its
    pairs, red where the node is named.  A pair is named beyond median + k robust sigma on the log scale, k from
    the stated false-alarm rate (Bonferroni, normal logs), and only where its own median's interval is beyond in
    every pass; a node where more than half its pairs are, in one figure.
    """
    rs = [(label, r, d) for label, r, d in results(col, BENCHMARK) if r.get("scope") == "pairs" and r["pairs"]]
    if not rs:
        return f"no jb-pairs documents in these runs ({CHECK} on a partition of two nodes or more)"
    rows, shown = [], [x for x in rs if x[1].get("matrix")][:2]
    for label, r, d in rs:
        named = r.get("named_nodes", "none")
        rows.append((label, results_mpi(d), r["nodes"], r["pairs"], fmt(r["latency_p50_us"]),
                     fmt(r["bandwidth_p50_mb_s"]), fmt(r["latency_max_us"]), fmt(r["bandwidth_min_mb_s"]),
                     r["outlier_pairs"], named,
                     "; ".join(f"{o['a']}-{o['b']}" for o in r.get("outliers", [])[:8]) or "none"))
    panels = max(len(shown), 1)
    fig, axes = subplots(2, panels * 2 if shown else 2, figsize=(4.5 * panels * 2 if shown else 9, 7.5),
                         squeeze=False)
    for p, (label, r, d) in enumerate(shown):
        for q, (key, unit) in enumerate((("latency_us", "latency us"), ("bandwidth_mb_s", "bandwidth MB/s"))):
            ax = axes[0][2 * p + q]
            image = ax.imshow([[v if v is not None else float("nan") for v in row] for row in r["matrix"][key]],
                              cmap="viridis_r" if q == 0 else "viridis")
            fig.colorbar(image, ax=ax, label=unit, shrink=0.8)
            ax.set_title(text(f"{label} {unit}"), fontsize=8)
            ax.set_xlabel("node")
            ax.set_ylabel("node")
    for q, (key, unit) in enumerate((("latency_p50_us", "median latency us"),
                                     ("bandwidth_p50_mb_s", "median bandwidth MB/s"))):
        ax = axes[1][q]
        for i, (label, _, d) in enumerate(rs[:4]):
            nodes = [r for r in d["results"] if r.get("scope") == "node"]
            ax.bar([n["node"] + 0.2 * i for n in nodes], [n[key] for n in nodes], width=0.2,
                   color=["C3" if n.get("outlier") else f"C{i}" for n in nodes], label=text(label))
        finish(fig, ax, "node", unit)
    for ax in axes[0][2 * len(shown):] if shown else axes[0]:
        ax.set_visible(False)
    return ("label", "MPI", "nodes", "pairs", "latency p50 us", "bandwidth p50 MB/s", "latency max us",
            "bandwidth min MB/s", "outlier pairs", "nodes named", "outlier pairs (first 8)"), rows, fig


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=55, cases=cases_of,
    study="JSC LinkTest, NVIDIA ClusterKit", about="every node pair's latency and bandwidth, and the outliers",
    quantities=(Quantity("latency_p50", "latency_p50_us", "us", "median over nodes of each node's median over its "
                         "pairs of the pair's median round trip / 2"),
                Quantity("bandwidth_p50", "bandwidth_p50_mb_s", "MB/s", "median over nodes of each node's median "
                         "over its pairs of the pair's window bandwidth", better="higher"),
                Quantity("latency_max", "latency_max_us", "us", "the slowest pair's latency", role="reported"),
                Quantity("bandwidth_min", "bandwidth_min_mb_s", "MB/s", "the slowest pair's bandwidth",
                         better="higher", role="reported"),
                Quantity("outlier_pairs", "outlier_pairs", "pairs", "pairs named at the stated rate", role="recorded"),
                Quantity("outlier_nodes", "outlier_nodes", "nodes", "nodes named at the stated rate",
                         role="recorded")),
    result_fields=("scope", "nodes", "pairs", "named_nodes", "outliers", "matrix", "node", "host",
                   "slow_latency_pairs", "slow_bandwidth_pairs", "outlier"),
    # the quick mode's windows of 64 KiB: a second a round on the virtual cluster's shared cores, not ten
    parameters=(Parameter("calls", 200), Parameter("windows", 30, quick=18),
                Parameter("bandwidth_size", 1 << 20, quick=65536)),
    small=("--calls", "6", "--windows", "6", "--passes", "1", "--bandwidth-size", "4K"),
    pair_options=("--tasks-per-node", "1"),
    option_values={"latency-size": ["8", "1K"], "bandwidth-size": ["4K", "64K"], "window": ["1", "4"],
                   "windows": ["6", "12"], "rate": ["0.01", "0.2"], "passes": ["1", "2"]},
    long_options=("calls", "windows"),
    # n - 1 rounds (n for an odd n) of 3 passes: a barrier, calls ping-pongs and windows of 16 messages
    cost=lambda v: max(v["nodes"] - 1 + v["nodes"] % 2, 0) * (
        3 * cost.barrier_s(v["nodes"]) + 2 * ((v.get("calls") or 200) + 30) * cost.message_s(8) +
        ((v.get("windows") or 30) + 6) * 16 * cost.message_s(v.get("bandwidth_size") or 1 << 20)),
    min_nodes=2,
    figures=(pairs,),
    summary=(Column.text("scope", "scope"), Column.text("node", "node"), Column.text("host", "host"),
             Column.number("latency us", "latency_p50_us", 2), Column.number("bandwidth MB/s", "bandwidth_p50_mb_s"),
             Column.text("outlier pairs", "outlier_pairs"), Column.text("nodes named", "named_nodes")),
)
