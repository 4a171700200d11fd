"""The papers' headline findings, one record each (Finding): what the paper found, the check that
reproduces it (`reframe --mode papers`: reframe_checks/papers.py, contention.py), the variables
it shows, and the values the paper states; and the report's "Findings" table, each finding's
measured values beside those.  The benchmarks they run keep their own descriptors' figures."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from . import checkout, references
from .figures import fmt


@dataclass(frozen=True)
class Finding:
    """One paper's headline finding, as the papers mode reproduces it: the check of that name
    (reframe_checks/papers.py, contention.py) takes its description from `claim` and must report the
    `shown` variables (harness.checks.PaperFinding); docs/papers.md's table of the findings states
    the same claim (tests/test_docs.py); the report's findings table sets the shown variables beside
    the values the paper states (`stated`: their ids in reference_data/<reference>.yaml)."""
    check: str
    claim: str
    reference: str
    stated: tuple
    shown: tuple | None  # None: the slowdowns the check reports (ContentionFinding's, one per k)


FINDINGS = {f.check: f for f in (
    Finding("HaloNoiseFinding",
            "Hague: one exchange in 200 taking double time slows nearly every call of 1000 tasks, as a call "
            "waits for its slowest task",
            "hpce", ("slow-exchange-odds", "slow-exchange-factor", "slow-exchange-tasks"),
            ("slowed_share", "predicted_share", "jitter")),
    Finding("NonBlockingFinding",
            "Hein, Booth and Bull (section 3): ten 1 kB messages with MPI_Isend before any is sent back are 4 "
            "times as fast as one message back and forth; MPI_Ssend gains little",
            "hpcx", ("isend-burst-messages", "isend-burst-size", "isend-burst-speedup"),
            ("isend_over_ssend", "ten_over_one")),
    Finding("SplittingFinding",
            "Hein, Booth and Bull (section 5, Figs. 3-4): at `MP_EAGER_LIMIT=65536`, 128 kB split into two 64 kB "
            "pieces gains more than 10 %, as the pieces go eagerly",
            "hpcx", ("eager-limit-set", "split-128k-in-2", "split-peak-gain"), ("gain_above", "gain_below")),
    Finding("AlltoallNoiseFinding",
            "Tabe, Hardwick and Stout (Table 1): the pairwise all-to-all's throughput per processor falls from "
            "41.0 MB/s on 2 to 39.0 on 32 processors",
            "sp2", ("exchange-mean", "exchange-sd", "alltoall-throughput-p2", "alltoall-throughput-p32"),
            ("throughput_p2", "throughput_p32", "fall")),
    Finding("AlltoallInjectedFinding",
            "the same, by the study's mechanism: an exchange lasts as long as the slower partner, and a pair "
            "waits for whichever finished its previous exchange last",
            "sp2", ("exchange-mean", "exchange-sd", "alltoall-throughput-p2", "alltoall-throughput-p32"),
            ("fall", "predicted_fall")),
    Finding("OverlapLatencyFinding",
            "LANL (paper 004): overlap lowers the sensitivity to network latency; Sweep3D's normalized time goes "
            "from 1.20 to 2.59 between 1 and 8 us without overlap, from 1.10 to 1.79 with",
            "lanl-ib", ("sweep3d-latency-1us-plain", "sweep3d-latency-8us-plain", "sweep3d-latency-1us-overlap",
                        "sweep3d-latency-8us-overlap"),
            ("plain_1us", "plain_8us", "overlap_1us", "overlap_8us")),
    Finding("BunchingFinding",
            "Hague: a node's 16 tasks bunched as a 4 x 4 block send 16 messages off the node a halo call, against "
            "32 as a row of the grid",
            "c1a", ("off-node-row", "off-node-bunched", "optimisation-gain"),
            ("off_node_row", "off_node_bunched", "time_cut")),
    Finding("ContentionFinding",
            "Bhatele and Kale: messages that share links are slowed, up to 8 times",
            "bgp", ("contention-slowdown",), None),
)}


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
             (FINDINGS[c.check].shown or any(v.startswith("slowdown") for v in c.perf))]
    out = []
    for c in sorted(cases, key=lambda c: (list(FINDINGS).index(c.check), c.label, c.environ,
                                          sorted((k, str(v)) for k, v in c.params.items()))):
        finding = FINDINGS[c.check]
        names = finding.shown or sorted(v for v in c.perf if v.startswith("slowdown"))
        measured = ", ".join(f"{v} {fmt(c.value(v))}" for v in names if c.value(v) is not None)
        where = " ".join(f"{k}={v}" for k, v in c.params.items() if k in ("nodes", "tasks_per_node", "pattern",
                                                                             "msg_size", "distance"))
        out.append((c.check, c.label, c.environ, where, measured, c.result,
                    stated_text(finding.reference, finding.stated)))
    return out
