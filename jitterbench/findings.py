"""The papers mode's checks (reframe_checks/papers.py): each
finding's measured values beside what its paper states, the report's "Findings" table.  The
benchmarks they run keep their own descriptors' figures."""
from __future__ import annotations

import functools

from . import checkout, references
from .figures import fmt


# check -> (the paper's reference file, the ids of its stated values, the finding's variables)
FINDINGS = {
    "HaloNoiseFinding": ("hpce", ("slow-exchange-odds", "slow-exchange-factor", "slow-exchange-tasks"),
                         ("slowed_share", "predicted_share", "jitter")),
    "NonBlockingFinding": ("hpcx", ("isend-burst-messages", "isend-burst-size", "isend-burst-speedup"),
                           ("isend_over_ssend", "ten_over_one")),
    "SplittingFinding": ("hpcx", ("eager-limit-set", "split-128k-in-2", "split-peak-gain"),
                         ("gain_above", "gain_below")),
    "AlltoallNoiseFinding": ("sp2", ("exchange-mean", "exchange-sd", "alltoall-throughput-p2",
                                     "alltoall-throughput-p32"), ("throughput_p2", "throughput_p32", "fall")),
    "AlltoallInjectedFinding": ("sp2", ("exchange-mean", "exchange-sd", "alltoall-throughput-p2",
                                        "alltoall-throughput-p32"), ("fall", "predicted_fall")),
    "OverlapLatencyFinding": ("lanl-ib", ("sweep3d-latency-1us-plain", "sweep3d-latency-8us-plain",
                                           "sweep3d-latency-1us-overlap", "sweep3d-latency-8us-overlap"),
                              ("plain_1us", "plain_8us", "overlap_1us", "overlap_8us")),
    "BunchingFinding": ("c1a", ("off-node-row", "off-node-bunched", "optimisation-gain"),
                        ("off_node_row", "off_node_bunched", "time_cut")),
    "ContentionFinding": ("bgp", ("contention-slowdown",), None),
}


@functools.lru_cache(maxsize=None)
def stated_text(system, ids):
    """What the paper states: 'quantity: value unit' of each id, from its reference file."""
    # the papers' reference files: the checkout's, whatever JB_REFERENCE_DIR says of the measured ones
    papers = checkout.root() / "reference_data" / f"{system}.yaml"
    entries = {e["id"]: e for e in references.stated(references.load(papers))}
    return "; ".join(f"{entries[i]['quantity']}: {entries[i]['value']} {entries[i]['unit']}" for i in ids
                     if i in entries)


def rows(col):
    """A row per finding case of the runs: (finding, label, environ, case, measured, result, the paper
    states).  ContentionFinding's measured values are its slowdowns."""
    cases = [c for c in col.cases if c.check in FINDINGS and c.kind == "measured" and
             (FINDINGS[c.check][2] or any(v.startswith("slowdown") for v in c.perf))]
    out = []
    for c in sorted(cases, key=lambda c: (list(FINDINGS).index(c.check), c.label, c.environ,
                                          sorted((k, str(v)) for k, v in c.params.items()))):
        system, ids, variables = FINDINGS[c.check]
        names = variables or sorted(v for v in c.perf if v.startswith("slowdown"))
        measured = ", ".join(f"{v} {fmt(c.value(v))}" for v in names if c.value(v) is not None)
        where = " ".join(f"{k}={v}" for k, v in c.params.items() if k in ("nodes", "tasks_per_node", "pattern",
                                                                             "msg_size", "distance"))
        out.append((c.check, c.label, c.environ, where, measured, c.result, stated_text(system, ids)))
    return out
