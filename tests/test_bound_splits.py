"""benchmarks/bound_splits.py judges a held-out run as ReFrame does, against the bounds the rule
itself (reference_build.build) made from the other runs: exactly, on known values."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jitterbench import reference_build, references, reframe_report
from test_references import MAXIMA, report


SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bound_splits.py"
spec = importlib.util.spec_from_file_location("bound_splits", SCRIPT)
bound_splits = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bound_splits)


def runs(tmp_path, held_out):
    """Five runs of two patterns (MAXIMA, and half of them) and a sixth with held_out as its sendrecv
    max, each figure a median of two launches."""
    return [report(tmp_path, f"r{i}.json", [("sendrecv", v), ("isend-recv", v / 2)], launches=2)
            for i, v in enumerate([*MAXIMA, held_out])]


@pytest.mark.unit
def test_a_held_out_run_fails_exactly_where_its_value_passes_the_bound(tmp_path):
    paths = runs(tmp_path, 11.0)
    doc = reference_build.build(paths[:5], "local", "tester", max_detectable=100)
    held_out = reframe_report.report_cases(paths[5])[1]
    sendrecv = next(c for c in held_out if c["pattern"] == "sendrecv")
    ref = bound_splits.entry(doc, sendrecv, "max")
    assert ref == doc["HaloCheck"]["local:default"]["openmpi"][1]["sendrecv"]["max"] and ref[0] == 11.0
    mds = references.detectable_slowdown(ref)
    assert bound_splits.judged(doc, held_out) == (set(), {}, set())  # at the median: no alarm, nothing slowed
    # slowed by a factor: its times times it (max), its ratio jitter too; the target fails past the bound only
    for factor, past in ((mds * 0.99, False), (mds * 1.01, True)):
        alarm, slowed, unjudged = bound_splits.judged(doc, held_out, ("HaloCheck", factor, "max"))
        assert not alarm and not unjudged and slowed == {("HaloCheck", "openmpi"): [past, past]}
    # a held-out value past the bound is a false alarm; one for a variable with no bound is not judged
    (tmp_path / "past").mkdir()
    assert bound_splits.judged(doc, reframe_report.report_cases(runs(tmp_path / "past", 11.0 * mds * 1.01)[5])[1])[0]
    assert bound_splits.entry(doc, sendrecv, "p99")[1:3] == [None, None]


@pytest.mark.unit
def test_a_case_whose_node_is_past_its_bound_is_not_judged(tmp_path):
    """Node first in the splits as in the checks: a held-out case whose compute probe is past its bound is
    unjudged (never an alarm, whatever its other figures), one within it is judged as usual."""
    probes = [2000.0, 2010.0, 1990.0, 2050.0, 2005.0]
    paths = runs(tmp_path, 11.0 * 100)  # the held-out sendrecv far past any bound
    for path, probe in zip(paths, [*probes, None]):
        run = json.loads(path.read_text())
        for case in run["runs"][0]["testcases"]:
            case["perfvalues"]["local:default:node_probe_us"] = [probe or 1e6, 0, None, None, "us", "pass"]
        path.write_text(json.dumps(run))
    doc = reference_build.build(paths[:5], "local", "tester", max_detectable=100)
    held_out = reframe_report.report_cases(paths[5])[1]
    assert bound_splits.judged(doc, held_out) == (set(), {}, {(c["display_name"], "openmpi") for c in held_out})
    for case in held_out:
        case["perfvalues"]["local:default:node_probe_us"][0] = 2005.0
    failed, _, unjudged = bound_splits.judged(doc, held_out)
    assert failed == {(c["display_name"], "openmpi") for c in held_out} and not unjudged  # both 100x their median
    # node first over the run: one case past its node bound holds back the failure of the other on its node
    sendrecv, isend = sorted(held_out, key=lambda c: c["pattern"] != "sendrecv")
    sendrecv["perfvalues"]["local:default:node_probe_us"][0] = 1e6
    for node_list, expected in (("vm", (set(), {key(sendrecv), key(isend)})), ("n2", ({key(isend)}, {key(sendrecv)}))):
        sendrecv["node_list"], isend["node_list"] = "vm", node_list
        assert bound_splits.judged(doc, held_out)[::2] == expected


def key(case):
    return case["display_name"], case["environ"]


@pytest.mark.unit
def test_confirm_fails_a_run_only_where_the_next_run_fails_the_same_case(tmp_path):
    paths = runs(tmp_path, 11.0)
    doc = reference_build.build(paths[:5], "local", "tester", max_detectable=100)
    variants = doc["HaloCheck"]["local:default"]["openmpi"][1]
    refs = {pattern: variants[pattern]["max"] for pattern in ("sendrecv", "isend-recv")}
    bound = {pattern: ref[0] * references.detectable_slowdown(ref) for pattern, ref in refs.items()}
    # four judged runs: sendrecv past its bound in the first two, isend-recv alone in the third, none in the fourth
    shares = [(1.01, 0.5), (1.01, 0.5), (0.5, 1.01), (0.5, 0.5)]
    judged = [reframe_report.report_cases(report(tmp_path, f"j{i}.json", [("sendrecv", bound["sendrecv"] * sendrecv),
                                                                       ("isend-recv", bound["isend-recv"] * isend)],
                                             launches=2))[1] for i, (sendrecv, isend) in enumerate(shares)]
    alone = bound_splits.verdicts(doc, judged, [], confirm=False)
    assert [alarm for alarm, _, _ in alone] == [True, True, True, False]
    # each run against the next: the same case in the first pair, different cases in the second, none in the third
    confirmed = bound_splits.verdicts(doc, judged, [], confirm=True)
    assert [alarm for alarm, _, _ in confirmed] == [True, False, False]
    # the slowed check past its bound in every run is confirmed in every pair
    slow = ("HaloCheck", 100.0, "max")
    assert [hits for _, hits, _ in bound_splits.verdicts(doc, judged, [slow], confirm=True)] == \
        [{(slow, "openmpi"): (True, True)}] * 3


@pytest.mark.process
def test_the_script_prints_the_splits_and_refuses_bad_input_in_one_line(tmp_path):
    paths = [str(p) for p in runs(tmp_path, 11.0)]
    ok = subprocess.run([sys.executable, str(SCRIPT), *paths, "--splits", "3", "--slow", "HaloCheck:100:max",
                         "--max-detectable", "1000"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    # three baselines of five of the six runs, each judging the one left
    assert "3 baseline(s) of 5 of the 6 runs at 0.01 a run; figures over launches: median" in ok.stdout
    assert re.search(r"false alarms: [0-3] of 3 judged runs \(.*; the references' rate 0.01 a run\)", ok.stdout)
    assert re.search(r"openmpi +central figures' minimum detectable slowdown: median [0-9.]+x \(range [0-9.]+-[0-9.]+x\); "
                     r"bounded within 1000x: median 100% of them \(range 100%-100%\)", ok.stdout), ok.stdout
    assert "HaloCheck x100 under openmpi: failed in 1.00 of 3 judged runs, max in 1.00" in ok.stdout
    first = subprocess.run([sys.executable, str(SCRIPT), *paths, "--first"], capture_output=True, text=True, timeout=120)
    assert "the first baseline(s) of 5 of the 6 runs" in first.stdout and " of 1 judged runs " in first.stdout, first.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"runs": []}))
    for args, message in (([str(bad), *paths], "not a ReFrame run report"), (paths[:5], "--k must be"),
                          ([*paths, "--slow", "HaloCheck:0:max"], "a FACTOR is a positive number"),
                          ([*paths, "--false-alarm-rate", "2"], "the false-alarm rate must be between 0 and 1")):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
