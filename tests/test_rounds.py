"""The suite in rounds (jitterbench/harness/rounds.py, Rounds): ReFrame's --repeat runs each case
several times in one session; the last round of a case to run holds the case's figure, the median
over every launch of every round, and readers see one case per case (reframe_report.last_attempts)."""
from __future__ import annotations

import json
import re
import statistics
from collections import Counter

import pytest

from jitterbench import reframe_report, runs
from jitterbench.harness import load
from support.reframe_runs import SUBSET_VARIABLES, listing, perflog_rows, reframe

ROUND = re.escape(reframe_report.ROUND)


@pytest.mark.reframe
def test_the_last_round_judges_the_median_of_every_round_s_launches(tmp_path):
    """One HaloCheck case in 3 rounds of 2 launches: three round cases, each its own job; the last holds
    the case's figure, each variable the median of the 6 launch values it keeps (in round order, two a
    round), the others their own, judged by nothing; the readers of the report and the perflog see one
    case, named without its round, with the last round's values."""
    # the disturbed-launch rule on (judge_load), so that the far-apart rule (load.near) decides what is pooled
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", "--repeat", "3", judge_load=True,
                          env={"JB_LAUNCHES": "2"})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(int(re.search(rf"%{ROUND}=(\d)", c["display_name"])[1]) for c in cases) == [0, 1, 2]
    assert all(c["judge_load"] for c in cases)
    assert all(c["rounds"] == 3 and c["launches"] == 2 and c["result"] == "pass" for c in cases)
    judged = [c for c in cases if c["rounds_pooled"] == 3]
    assert len(judged) == 1 and len({c["stagedir"] for c in cases}) == 3
    (case,) = judged
    # the earlier rounds log their own values, judged by no reference
    assert all(c["rounds_pooled"] == 1 and c["perfvalues"] for c in cases if c is not case)
    values = json.loads(case["launch_values"])
    # and the node's figures, judged first where the load is (the pair: a case of launches that can be near)
    assert {name.split(":")[-1] for name in case["perfvalues"]} == set(values) == {
        *SUBSET_VARIABLES, "node_probe_us", "node_pair_ns"}
    # the median over the launches whose CPUs were not far apart (load.near), over all six rounds' launches
    pairs = json.loads(case["launch_pair_ns"])
    kept = load.near(pairs)
    assert len(pairs) == 6 and case["launches_set_aside"] == kept.count(False)
    for name, pv in case["perfvalues"].items():
        launches = values[name.split(":")[-1]]
        assert len(launches) == 6
        assert pv[0] == pytest.approx(statistics.median(v for v, k in zip(launches, kept) if k))
    rows = perflog_rows(tmp_path)  # one row a round, the earlier ones their own values
    (row,) = [r for r in rows if r["rounds_pooled"] == "3"]
    assert row["rounds"] == "3" and row["launches"] == "2" and len(rows) == 3
    # the perflog's reader takes the case once: the earlier rounds are no repeats of it
    # (its node's figures, which sweep nothing, a case of their own beside the swept size's)
    logged, _ = runs.read_perflog(tmp_path / "out" / "perflogs" / "local" / "default" / "HaloCheck.log",
                                  None, Counter())
    assert [sorted(c.perf) for c in logged] == [["avg", "jitter", "max", "p99", "t_max"], ["node_pair_ns", "node_probe_us"]]
    assert sorted(p.value for c in logged for p in c.perf.values()) == sorted(pv[0] for pv in case["perfvalues"].values())
    info, read = reframe_report.report_cases(tmp_path / "out" / "report.json")
    assert [c["display_name"] for c in read] == [reframe_report.case_name(case["display_name"])]
    assert read[0]["perfvalues"] == case["perfvalues"] and reframe_report.ROUND not in read[0]["display_name"]
    # the report reads every round's launches: one document each
    halo, _ = runs.read_report(str(tmp_path / "out" / "report.json"), None, Counter())
    assert [len(c.documents) for c in halo] == [6, 0]  # with the first of the case's parts


@pytest.mark.reframe
def test_a_check_one_launch_decides_runs_in_the_first_round_only():
    """The eager-limit probe's verdict is one launch's (over_launches False): of --repeat 3, ReFrame
    lists its first round only; halo is listed in all three."""
    listed = listing("-c", "reframe_checks/eager.py", "-c", "reframe_checks/halo.py", "-n", "EagerCheck|HaloCheck",
                     "-P", "tasks_per_node=2", "-P", "placement=row", "-P", "eager_limit=default", "-p", "openmpi",
                     "--repeat", "3")
    rounds = {}
    for name, _ in listed:
        rounds.setdefault(name.split()[0], []).append(int(re.search(rf"%{ROUND}=(\d+)", name)[1]))
    assert sorted(rounds["EagerCheck"]) == [0] * len(rounds["EagerCheck"]) and rounds["EagerCheck"]
    assert sorted(set(rounds["HaloCheck"])) == [0, 1, 2]


def round_case(name, repeat, result="pass", perf=False, reason=None):
    return {"display_name": f"{name} %{reframe_report.ROUND}={repeat}", "system": "local", "partition": "default",
            "environ": "openmpi", "result": result, "fixture": False, "fail_reason": reason, "outputdir": f"/o/{repeat}",
            "rounds": 3, "rounds_pooled": 3 if perf else 1,
            "perfvalues": {"local:default:max": [1.0, 0, None, None, "us", "pass"]}}


@pytest.mark.unit
@pytest.mark.parametrize("rounds,verdict,repeat", [
    ([("pass", False), ("pass", True), ("pass", False)], "pass", 1),      # the round with the figure
    ([("pass", False), ("fail", False), ("pass", False)], "fail", 1),     # a round that failed: no figure
    ([("fail", False, f"{reframe_report.INCONCLUSIVE}: launch 1"), ("pass", False), ("fail", False, "sanity")],
     "fail", 2),                                                          # failed beats inconclusive
    ([("pass", False), ("fail", False, f"{reframe_report.INCONCLUSIVE}: launch 1"), ("pass", False)],
     reframe_report.INCONCLUSIVE, 1),
])
def test_a_case_s_rounds_read_as_one_case(rounds, verdict, repeat):
    name = "HaloCheck %nodes=1 %placement=row"
    report = {"runs": [{"testcases": [round_case(name, i, *r[:2], *r[2:]) for i, r in enumerate(rounds)]
                        + [round_case("HaloCheck %nodes=1 %placement=bunched", 0, perf=True)]}]}
    cases = reframe_report.last_attempts(report)
    assert [c["display_name"] for c in cases] == [name, "HaloCheck %nodes=1 %placement=bunched"]
    assert reframe_report.outcome(cases[0]) == verdict
    assert cases[0]["fail_reason"] == report["runs"][0]["testcases"][repeat]["fail_reason"]
    assert cases[0]["round_outputdirs"] == ["/o/0", "/o/1", "/o/2"]  # every round's launches, in round order
