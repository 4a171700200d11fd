"""Reference files: validation with one clear line, and building them from ReFrame reports."""
from __future__ import annotations

import json
import math
import statistics
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from jitterbench import bounds, cli, reference_build, reference_lint, references, roles, runs

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.unit

PROVENANCE = {"system": "local", "source": "measured", "measured_by": "test", "date": "2026-11-22",
              "method": "by hand"}


def write(tmp_path, doc, name="local.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False) if not isinstance(doc, str) else doc)
    return path


def halo_entry(leaf):
    return {"$index": ["$partition", "pattern"], "local:default": {"sendrecv": {"max": leaf}}}


def test_a_well_formed_file_loads(tmp_path):
    doc = {"provenance": PROVENANCE, "HaloCheck": halo_entry([10.0, -0.5, 2.0, "us"])}
    assert references.load(write(tmp_path, doc))["HaloCheck"]["$index"] == ["$partition", "pattern"]


@pytest.mark.parametrize("doc,message", [
    ("a: [unclosed", "not YAML (line 2): did not find expected ',' or ']' (while parsing a flow sequence from line 1)"),
    ({"HaloCheck": halo_entry([1, -0.5, 0.5, "us"])}, "must start with a 'provenance' mapping"),
    ({"provenance": {"system": "local"}}, "provenance lacks source, date, method"),
    ({"provenance": PROVENANCE, "HaloCheck": {"local:default": {}}}, "HaloCheck: expected a mapping with an '$index' list"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry(["fast", -0.5, 0.5, "us"])},
     "HaloCheck > local:default > sendrecv > max: expected [value, lower, upper, unit]"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry([1.0, 0.5, 0.5, "us"])}, "thresholds must be"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry([1.0, "low", None, "us"])}, "expected [value, lower"),
    ({"provenance": PROVENANCE, "HaloCheck": {"$index": ["$partition", "pattern"], "local:default": [1, 2]}},
     "HaloCheck > local:default: expected a mapping"),
])
def test_malformed_files_name_the_problem(tmp_path, doc, message):
    with pytest.raises(references.ReferenceFileError) as err:
        references.load(write(tmp_path, doc))
    text = str(err.value)
    assert message in text and "\n" not in text and "local.yaml" in text


PAPER = {"system": "sp2", "source": "paper", "measured_by": "test", "date": "not stated", "method": "by hand"}
STATED = {"id": "throughput-p2", "quantity": "all-to-all throughput, 2 processors", "value": 40.991, "unit": "MB/s",
          "where": "section 3, Table 1"}


def with_stated(*entries):
    return {"provenance": PAPER, "stated": list(entries)}


def test_stated_numbers_load_beside_check_entries(tmp_path):
    figure = {**STATED, "id": "figure", "value": None, "unit": None, "note": "in the figure only"}
    counterpart = {**STATED, "metric": "alltoall_throughput", "at": {"tasks": 2, "msg_size": 1048576}}
    doc = {**with_stated(counterpart, figure, {**STATED, "id": "read", "read_off_figure": True}),
           "HaloCheck": halo_entry([10.0, None, None, "us"])}
    loaded = references.load(write(tmp_path, doc, "sp2.yaml"))
    assert [e["id"] for e in references.stated(loaded)] == ["throughput-p2", "figure", "read"]
    assert references.stated(references.load(write(tmp_path, {"provenance": PROVENANCE}))) == []


@pytest.mark.parametrize("doc,message", [
    ({"provenance": PAPER, "stated": {"a": 1}}, "stated: expected a list of entries"),
    (with_stated([1, 2]), "stated[0]: expected a mapping"),
    (with_stated({k: v for k, v in STATED.items() if k != "where"}), "stated > throughput-p2: lacks where"),
    (with_stated({k: v for k, v in STATED.items() if k != "id"}), "stated[0]: lacks id"),
    (with_stated(STATED, STATED), "stated > throughput-p2: id is not unique in the file"),
    (with_stated({**STATED, "quantity": " "}), "stated > throughput-p2: quantity must be a non-empty string"),
    (with_stated({**STATED, "value": "40.991"}), "value must be a number or null, got '40.991'"),
    (with_stated({**STATED, "value": True}), "value must be a number or null, got True"),
    (with_stated({**STATED, "unit": None}), "unit may be null only with a null value"),
    (with_stated({**STATED, "value": None, "unit": None}), "a null value needs a note saying why"),
    (with_stated({**STATED, "metric": "throughput"}), "metric must be one of alltoall_throughput, "),
    (with_stated({**STATED, "metric": "alltoall_throughput", "at": [2, 1048576]}), "at must be a mapping"),
    (with_stated({**STATED, "at": {"tasks": 2}}), "at says where a metric is taken: it needs a metric"),
    (with_stated({**STATED, "read_off_figure": "yes"}), "read_off_figure must be true or false, got 'yes'"),
    (with_stated({**STATED, "metrics": "alltoall_throughput"}), "stated > throughput-p2: unknown key(s) metrics"),
])
def test_malformed_stated_entries_name_the_entry(tmp_path, doc, message):
    with pytest.raises(references.ReferenceFileError) as err:
        references.load(write(tmp_path, doc, "sp2.yaml"))
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith(str(tmp_path / "sp2.yaml"))


def report(tmp_path, name, values, system="local", calls=100, uuid=None, quiet=False, launches=None, rounds=None,
           probes=(), check="HaloCheck"):
    """A ReFrame run report with one variant of check (HaloCheck) per (pattern, max) value under
    openmpi, and where quiet the same variants under mpich with the same value in every run (7.0)."""
    cases = [{
        "display_name": f"{check} %nodes=1 %pattern={pattern}", "nodes": 1, "pattern": pattern,
        "system": system, "partition": "default", "environ": environ, "result": "pass", "fixture": False,
        "calls": calls, "mpi_library": "Open MPI v4.1.4", "cpu": "AMD EPYC; 2 CPUs", "transport": "vm: shm",
        **({"launches": launches} if launches else {}), **({"rounds": rounds} if rounds else {}),
        # the launches' load as the perflog holds it, with each launch's compute probe
        **({"load_before": "; ".join(f"node=vm runnable=2 disturbed=0 probe_us={p}" for p in probes)} if probes else {}),
        "perfvalues": {f"{system}:default:max": [v, 0, None, None, "us", "pass"],
                       f"{system}:default:p99": [3 * v, 0, None, None, "us", "pass"],
                       f"{system}:default:jitter": [1.5, 0, None, None, "MAX/AVG", "pass"]},
    } for environ, pairs in (("openmpi", values), ("mpich", [(p, 7.0) for p, _ in values] if quiet else []))
        for pattern, v in pairs]
    doc = {"session_info": {"version": "4.10.4", "time_start_unix": 1795323075, "uuid": uuid or name,
                            "hostname": "vm", "cmdline": "/work/main/.venv/bin/reframe -C systems/config.py "
                                                         "--mode quick -r"},
           "runs": [{"testcases": cases}]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


MAXIMA = [10.0, 12.0, 20.0, 11.0, 10.5]


def repeats(tmp_path, values=MAXIMA, **kw):  # five runs of two patterns
    return [report(tmp_path, f"r{i}.json", [("sendrecv", v), ("isend-recv", v / 2)], **kw)
            for i, v in enumerate(values)]


def test_a_reference_bounds_the_worse_side_at_the_groups_detectable_slowdown(tmp_path):
    doc = reference_build.build(repeats(tmp_path), "local", "tester", max_detectable=100)
    leaf = doc["HaloCheck"]["local:default"]["openmpi"][1]
    assert doc["HaloCheck"]["$index"] == ["$partition", "$environ", "nodes", "pattern"]
    # one group (HaloCheck, openmpi): the 20 leave-one-out scores of max and jitter of both patterns
    # (p99 over 100 calls is not asserted), at 0.01 a run judged in two attempts (ci/main.sh): 0.1 an
    # attempt, over those 4 asserted variables
    logs = np.log([MAXIMA, [v / 2 for v in MAXIMA], [1.5] * 5, [1.5] * 5])
    mds = np.exp(bounds.threshold(bounds.loo_scores(logs), 0.1 / 4))
    value, lower, upper, unit = leaf["sendrecv"]["max"]
    assert (value, lower, unit) == (11.0, None, "us") and upper == pytest.approx(mds - 1, abs=1e-4)
    assert references.detectable_slowdown(leaf["sendrecv"]["max"]) == pytest.approx(mds, abs=1e-4)
    assert leaf["isend-recv"]["max"][2] == leaf["sendrecv"]["jitter"][2] == upper   # one slowdown for the group
    assert leaf["sendrecv"]["jitter"][:2] == [1.5, None]
    assert leaf["sendrecv"]["p99"][1:] == [None, None, "us"]           # 100 calls hold no p99
    prov = doc["provenance"]
    assert (prov["repeats"], prov["false_alarm_rate"], prov["asserted"], prov["bounded"]) == (5, 0.01, 4, 4)
    assert (prov["attempts"], prov["false_alarm_rate_per_attempt"]) == (2, 0.1)
    assert prov["modes"] == ["quick"] and prov["calls"] == [100]
    # the machine: what the runs said of it, per environment where it is the MPI's
    assert doc["fingerprint"] == {"system": "local", "hosts": ["vm"], "cpu": ["AMD EPYC; 2 CPUs"], "nodes": [1],
                                  "mpi_library": {"openmpi": ["Open MPI v4.1.4"]},
                                  "transport": {"openmpi": ["vm: shm"]}, "launches": {"HaloCheck": [1]}}
    assert references.loads(references.dump(doc), "local.yaml")["fingerprint"] == doc["fingerprint"]
    assert "/work" not in references.dump(doc) and prov["commands"] == ["reframe -C systems/config.py --mode quick -r"]
    # each run against the others: the median of its 4 scores (max of both patterns at log(v) minus the
    # median of the others' logs, the jitters at 0), as a factor; the run of 20 us stands apart
    assert [r["report"] for r in prov["runs"]] == [f"r{i}.json" for i in range(5)]
    assert [r["factors"]["openmpi"] for r in prov["runs"]] == [
        float(f"{math.sqrt(v / math.exp(statistics.median(math.log(w) for w in MAXIMA if w != v))):.3g}")
        for v in MAXIMA]
    assert not any("probe" in r for r in prov["runs"])  # these runs took no compute probe


def test_node_figures_are_bounded_by_the_same_rule_at_the_run_s_rate_over_them_alone(tmp_path):
    """The node's figures (the compute probe, the cores' round trip) are a pool of their own each, bounded
    at the run's false-alarm rate split over the node figures (judged first, in one attempt: a node
    finding is not judged again); the network's figures keep the rate an attempt over theirs alone."""
    probes = [2000.0, 2010.0, 1990.0, 2050.0, 2005.0]
    paths = []
    for i, (v, probe) in enumerate(zip(MAXIMA, probes)):
        path = report(tmp_path, f"n{i}.json", [("sendrecv", v)])
        run = json.loads(path.read_text())
        for case in run["runs"][0]["testcases"]:
            case["perfvalues"]["local:default:node_probe_us"] = [probe, 0, None, None, "us", "pass"]
            case["hardware"] = "vendor=AuthenticAMD family=25 model=1"
        path.write_text(json.dumps(run))
        paths.append(path)
    doc = reference_build.build(paths, "local", "tester", max_detectable=100)
    leaf = doc["HaloCheck"]["local:default"]["openmpi"][1]["sendrecv"]
    node = float(np.exp(bounds.threshold(bounds.loo_scores(np.log([probes])), 0.01 / 1)))
    assert leaf["node_probe_us"] == [2005.0, None, math.ceil((node - 1) * 1e4) / 1e4, "us"]
    network = float(np.exp(bounds.threshold(bounds.loo_scores(np.log([MAXIMA, [1.5] * 5])), 0.1 / 2)))
    assert leaf["max"][2] == pytest.approx(network - 1, abs=1e-4) and leaf["jitter"][2] == leaf["max"][2]
    prov = doc["provenance"]
    assert prov["asserted"] == 2 and prov["bounded"] == 3
    assert {k: v for k, v in prov["node_figures"].items() if k != "rule"} == {
        "asserted": 1, "false_alarm_rate": 0.01, "attempts": 1}
    assert [p["variables"] for p in prov["pools"]] == ["node figure node_probe_us", "time"]
    assert doc["fingerprint"]["hardware"] == ["vendor=AuthenticAMD family=25 model=1"]
    # lint knows the node figures and their units
    path = tmp_path / "local.yaml"
    path.write_text(references.dump(doc))
    assert reference_lint.lint(path) == []
    doc["HaloCheck"]["local:default"]["openmpi"][1]["sendrecv"]["node_probe_us"][3] = "ns"
    path.write_text(references.dump(doc))
    assert [line.split(": ", 1)[1] for line in reference_lint.lint(path)] == [
        "HaloCheck > local:default > openmpi > 1 > sendrecv > node_probe_us: unit 'ns', but the node figure "
        "node_probe_us is in 'us'"]


def test_a_check_noisier_than_its_environment_s_others_is_bounded_by_its_own_scores(tmp_path):
    """Each variable is bounded at the larger of two slowdowns: its environment's (every check's scores
    pooled: a check whose runs happened to be steady is not bounded tighter than its MPI's runs allow)
    and its check's own (a check whose runs spread more than its MPI's others does not take more than
    its share of the rate)."""
    steady, noisy = [10.0, 10.2, 9.9, 10.1, 10.0], [10.0, 13.0, 9.0, 16.0, 10.5]
    paths = []
    for i, (s, n) in enumerate(zip(steady, noisy)):
        run = json.loads(report(tmp_path, f"h{i}.json", [("sendrecv", s)]).read_text())
        other = json.loads(report(tmp_path, f"o{i}.json", [("sendrecv", n)], check="OsuCheck").read_text())
        run["runs"][0]["testcases"] += other["runs"][0]["testcases"]
        paths.append(tmp_path / f"h{i}.json")
        paths[-1].write_text(json.dumps(run))
    doc = reference_build.build(paths, "local", "tester", max_detectable=100)
    jitter = [1.5] * 5  # the same every run: scores of 0

    def mds(*series):  # 4 asserted variables: max and jitter of each check (p99 over 100 calls is not)
        return float(np.exp(bounds.threshold(bounds.loo_scores(np.log(series)), 0.1 / 4)))  # 0.1 an attempt
    environment, halo, osu = mds(steady, jitter, noisy, jitter), mds(steady, jitter), mds(noisy, jitter)
    assert halo < environment < osu
    for check, expected in (("HaloCheck", environment), ("OsuCheck", osu)):
        leaf = doc[check]["local:default"]["openmpi"][1]["sendrecv"]
        assert references.detectable_slowdown(leaf["max"]) == pytest.approx(expected, abs=1e-4)
        assert leaf["jitter"][2] == leaf["max"][2]
    (pool,) = doc["provenance"]["pools"]
    assert pool["detectable_slowdown"] == pytest.approx(environment, rel=1e-3) and pool["asserted"] == 4
    assert pool["checks"] == {"HaloCheck": pytest.approx(halo, rel=1e-3), "OsuCheck": pytest.approx(osu, rel=1e-3)}
    assert pool["bounded"] == 4


def test_each_run_s_compute_probe_is_set_against_the_other_runs(tmp_path):
    """The compute probe beside each launch (before_probe_us, logged in load_before): per run the
    median over its cases' launches, against the median of the other runs' (above 1: its CPU was
    slower); a run that took none has no factor and is no other run's."""
    probes = [(1000, 1010, 990), (1400, 1390), (1000,), (), (1200, 1000)]  # per run, its launches' (each case)
    paths = [report(tmp_path, f"p{i}.json", [("sendrecv", v)], probes=p) for i, (v, p) in enumerate(zip(MAXIMA, probes))]
    runs = reference_build.build(paths, "local", "tester", max_detectable=100)["provenance"]["runs"]
    medians = [1000, 1395, 1000, None, 1100]
    expected = [float(f"{m / statistics.median([o for j, o in enumerate(medians) if o and j != i]):.3g}") if m else None
                for i, m in enumerate(medians)]
    assert [r.get("probe") for r in runs] == expected
    assert expected[1] > 1.25 > max(e for i, e in enumerate(expected) if e and i != 1)  # the slow run stands apart


def test_runs_of_one_file_name_in_folders_of_their_own_are_told_apart(tmp_path):
    """verdict_rates.py leaves run-1/report.json, run-2/report.json, ...: each run's line names its folder."""
    for i in range(5):
        (tmp_path / f"run-{i}").mkdir()
    paths = [report(tmp_path / f"run-{i}", "report.json", [("sendrecv", v)], uuid=f"u{i}") for i, v in enumerate(MAXIMA)]
    runs = reference_build.build(paths, "local", "tester", max_detectable=100)["provenance"]["runs"]
    assert [r["report"] for r in runs] == [f"run-{i}/report.json" for i in range(5)]


def test_runs_of_different_launches_a_case_are_refused_and_the_count_is_the_file_s(tmp_path, capsys):
    """Each repeat is a case's median over its launches: runs of 1 and 5 launches are not repeats of
    one figure (one line, nothing written); runs of 5 make a file that says so."""
    mixed = [report(tmp_path, f"m{i}.json", [("sendrecv", v)], launches=5 if i else 1) for i, v in enumerate(MAXIMA)]
    out = tmp_path / "mixed.yaml"
    assert cli.main(["reference", *map(str, mixed), "-o", str(out)]) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HaloCheck cases were medians of 1 launch in one job and of 5 launches in one job" in err
    doc = reference_build.build([report(tmp_path, f"f{i}.json", [("sendrecv", v)], launches=5)
                            for i, v in enumerate(MAXIMA)], "local", "test")
    assert doc["fingerprint"]["launches"] == {"HaloCheck": [5]}
    rounds = [report(tmp_path, f"r{i}.json", [("sendrecv", v)], launches=1, rounds=5) for i, v in enumerate(MAXIMA)]
    doc = reference_build.build(rounds, "local", "test")
    assert doc["fingerprint"]["launches"] == {"HaloCheck": ["5x1"]}
    assert references.loads(references.dump(doc), "local.yaml")["fingerprint"]["launches"] == {"HaloCheck": ["5x1"]}
    assert cli.main(["reference", *map(str, [*rounds[:4], mixed[1]]), "-o", str(out)]) == 2 and not out.exists()
    assert "medians of 5 launches in one job and of 1 launch in each of 5 rounds" in capsys.readouterr().err


def test_a_variable_too_noisy_for_the_limit_is_left_unbounded_and_listed(tmp_path):
    doc = reference_build.build(repeats(tmp_path, calls=300, quiet=True), "local", "tester", max_detectable=1.5)
    noisy, quiet = (doc["HaloCheck"]["local:default"][env][1]["sendrecv"] for env in ("openmpi", "mpich"))
    assert noisy["max"][1:3] == noisy["jitter"][1:3] == [None, None]      # the group of openmpi: too noisy
    assert quiet["max"] == [7.0, None, 0.0, "us"]                          # mpich's: the same value every run
    listed = {(e["at"][1], e["variable"]) for e in doc["not_assertable"]}
    assert listed == {("openmpi", v) for v in ("max", "p99", "jitter")}
    listed = {e["variable"]: e for e in doc["not_assertable"]}
    assert listed["max"]["detectable_slowdown"] > 1.5
    assert listed["max"]["at"] == ["local:default", "openmpi", 1, "sendrecv"] and "noise" in listed["max"]["reason"]
    assert references.loads(references.dump(doc), "local.yaml")["not_assertable"] == doc["not_assertable"]
    # report and compare read such a file as cases of its checks, the list aside
    path = tmp_path / "local.yaml"
    path.write_text(references.dump(doc))
    cases = runs.collect([str(path)], progress=False).cases
    assert {c.check for c in cases} == {"HaloCheck"} and len(cases) == 4   # 2 environments, 2 patterns


@pytest.mark.parametrize("make,message", [
    (lambda t: repeats(t)[:4], "4 run report(s) given: a bound needs at least 5 repeats"),
    (lambda t: repeats(t)[:4] + repeats(t)[:1], "the same run as"),
    (lambda t: repeats(t, uuid="same"), "same session uuid"),
])
def test_fewer_than_five_distinct_runs_are_refused(tmp_path, capsys, make, message):
    out = tmp_path / "local.yaml"
    assert cli.main(["reference", *map(str, make(tmp_path)), "--system", "local", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not out.exists()


@pytest.mark.parametrize("option,message", [
    (["--false-alarm-rate", "-0.01"], "the false-alarm rate must be between 0 and 1, got -0.01"),
    (["--false-alarm-rate", "1"], "the false-alarm rate must be between 0 and 1, got 1.0"),
    (["--false-alarm-rate", "nan"], "'nan' is not a finite number"),
    (["--max-detectable", "inf"], "'inf' is not a finite number"),
    (["--max-detectable", "0.5"], "the largest detectable slowdown must be above 1, got 0.5"),
    (["--min-slack", "0.5"], "unrecognized arguments: --min-slack"),   # no hand floor any more
])
def test_a_bad_option_is_refused_in_one_line(tmp_path, capsys, option, message):
    out = tmp_path / "local.yaml"
    argv = ["reference", *map(str, repeats(tmp_path)), "--system", "local", "-o", str(out), *option]
    try:
        status = cli.main(argv)
    except SystemExit as e:  # argparse: its usage, then one line naming the problem
        status = e.code
    assert status == 2 and message in capsys.readouterr().err.strip().splitlines()[-1] and not out.exists()


def test_want_bounded_exits_4_naming_each_mpi_whose_central_figures_too_few_bounds_hold(tmp_path, capsys):
    """ci/main.sh's baseline adds runs while this says too few: Open MPI's times spread 16x over its
    runs (none bounded within 2x), MPICH's the same every run (all bounded): exit 4, the file
    written whole, the line naming Open MPI's share alone; a share that is not one is refused."""
    runs = repeats(tmp_path, values=[10.0, 40.0, 5.0, 80.0, 12.0], quiet=True)
    out = tmp_path / "local.yaml"
    assert reference_build.central_bounded(reference_build.build(runs, "local", "t")) == {"openmpi": 0.0, "mpich": 1.0}
    assert cli.main(["reference", *map(str, runs), "-o", str(out), "--want-bounded", "0.8"]) == 4
    assert references.load(out)["provenance"]["repeats"] == 5
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  too few central figures bounded within 2x (wanted 80%): openmpi 0%: more runs would bound more")
    assert cli.main(["reference", *map(str, runs), "-o", str(out), "--want-bounded", "0"]) == 0
    with pytest.raises(SystemExit) as e:
        cli.main(["reference", *map(str, runs), "-o", str(out), "--want-bounded", "80"])
    assert e.value.code == 2 and "'80' is not a share between 0 and 1" in capsys.readouterr().err


def test_reference_command_writes_a_loadable_file(tmp_path, capsys):
    out = tmp_path / "local.yaml"
    assert cli.main(["reference", *map(str, repeats(tmp_path)), "--system", "local", "-o", str(out)]) == 0
    doc = references.load(out)
    assert doc["HaloCheck"]["local:default"]["openmpi"][1]["isend-recv"]["max"][0] == 5.5
    said = capsys.readouterr().out.strip().splitlines()
    assert re.search(r": \d variable\(s\) bounded, \d not assertable \(at 0.1 an attempt split over 4; 0.01 a run of 2 "
                     r"attempt\(s\)\)$", said[0]), said
    # per pool, what decides whether a run can fail on speed: its asserted variables and their one slowdown
    (pool,) = doc["provenance"]["pools"]
    assert (pool["environ"], pool["variables"], pool["asserted"]) == ("openmpi", "time", 4)
    leaf = doc["HaloCheck"]["local:default"]["openmpi"][1]["isend-recv"]["max"]
    mds = references.detectable_slowdown(leaf) if pool["bounded"] else \
        next(e["detectable_slowdown"] for e in doc["not_assertable"] if e["variable"] == "max")
    assert pool["detectable_slowdown"] == pool["checks"]["HaloCheck"] == pytest.approx(mds, rel=1e-3)
    assert pool["bounded"] in (0, 4) and doc["provenance"]["bounded"] == pool["bounded"]
    assert said[1] == (f"  local:default openmpi: 4 time variable(s) the rules assert, minimum detectable slowdown "
                       f"{pool['detectable_slowdown']:g}x, by check HaloCheck {pool['detectable_slowdown']:g}x "
                       f"(each variable's the larger): {pool['bounded']} bounded within 2x")
    # then each run against the others: the one of 20 us among runs of 10-12 stands apart
    assert said[2].startswith("  each run against the others") and len(said) == 3 + len(MAXIMA)
    assert said[5] == "    r2.json: openmpi 1.36x"
    assert cli.main(["reference", *map(str, repeats(tmp_path)), "--system", "vcluster",
                     "-o", str(tmp_path / "v.yaml")]) == 2
    assert "no performance values for system 'vcluster'" in capsys.readouterr().err
    assert not (tmp_path / "v.yaml").exists()


@pytest.mark.parametrize("entry,message", [
    ({"check": "HaloCheck"}, "expected a mapping of check, at, variable"),
    ({"check": "HaloCheck", "at": "x", "variable": "max", "detectable_slowdown": 3, "reason": "noise"}, "at must be"),
    ({"check": "HaloCheck", "at": [], "variable": "max", "detectable_slowdown": 0.5, "reason": "noise"},
     "detectable_slowdown must be a number >= 1 or null"),
])
def test_a_malformed_not_assertable_entry_is_named(tmp_path, entry, message):
    with pytest.raises(references.ReferenceFileError) as err:
        references.load(write(tmp_path, {"provenance": PROVENANCE, "not_assertable": [entry]}))
    assert "not_assertable[0]: " + message in str(err.value)


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "reference_data").glob("*.yaml")))
def test_the_committed_reference_files_load(name):
    assert references.load(REPO / "reference_data" / name)["provenance"]["system"]


def test_a_check_runs_against_its_entry_with_what_the_rules_do_not_assert_unbounded():
    doc = {"provenance": {"system": "local", "source": "measured", "date": "2026-11-25", "method": "by hand"},
           "HaloCheck": {"$index": ["$partition"], "local:default": {
               "max_sendrecv_4096": [10.0, None, 0.5, "us"], "p99_sendrecv_4096": [20.0, None, 0.5, "us"],
               "jitter_sendrecv_4096": [1.2, None, 0.3, "MAX/AVG"]}},
           "NoiseCheck": {"$index": ["$partition"], "local:default": {
               "length_max": ["$xfail", "known", [900.0, None, 1.0, "us"]], "rate": [10.0, -0.5, 0.5, "1/s"]}}}
    halo_100, released = roles.asserted_only(doc, "HaloCheck", calls=100)
    assert set(halo_100) == {"provenance", "HaloCheck"} and released == ["p99_sendrecv_4096"]
    leaf = halo_100["HaloCheck"]["local:default"]
    assert leaf["p99_sendrecv_4096"] == [20.0, None, None, "us"] and leaf["max_sendrecv_4096"] == [10.0, None, 0.5, "us"]
    assert roles.asserted_only(doc, "HaloCheck", calls=299)[1] == []        # 1 - 0.99^299 >= 0.95
    assert roles.asserted_only(doc, "HaloCheck", calls=None)[1] == ["p99_sendrecv_4096"]
    noise, released = roles.asserted_only(doc, "NoiseCheck")
    assert released == ["length_max"]  # a maximum over calls: reported, never bounded, even where expected to fail
    assert noise["NoiseCheck"]["local:default"]["length_max"] == ["$xfail", "known", [900.0, None, None, "us"]]
    assert noise["NoiseCheck"]["local:default"]["rate"] == [10.0, -0.5, 0.5, "1/s"]
    assert roles.asserted_only(doc, "TorusCheck") == ({"provenance": doc["provenance"]}, [])


def test_the_repository_s_reference_files_name_only_what_exists():
    """reference --lint on every file of reference_data/: their checks, $index names, partitions,
    environments, variables and units are the records' and the systems'."""
    for path in sorted((REPO / "reference_data").glob("*.yaml")):
        assert reference_lint.lint(path) == [], path
