"""The ReFrame workflow on `local`, for real: perflogs, eager limit, references."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from conftest import folder, install_prefix, run_benchmark
from jitterbench import benchmarks
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
# one small variant: row placement, two tasks, sendrecv at 4 KiB in its run; default and 2 KiB eager limits
SUBSET = ["-c", "reframe_checks/halo.py", "-n", "HaloCheck", "-P", "tasks_per_node=2", "-P", "placement=row",
          "-S", "patterns=sendrecv", "-S", "msg_sizes=4096", "-p", "openmpi"]
# the variables of that run: one per quantity of its one pattern and size
SUBSET_VARIABLES = {f"{q}_sendrecv_4096" for q in ("max", "avg", "p99", "t_max", "jitter")}

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


# the disturbed-run rule is off where a test checks something else, on a machine others may be using
NOT_JUDGING_LOAD = ["-S", "judge_load=0"]


def reframe(tmp_path, *args, references=None, mode=None, judge_load=False, env=None):
    # the binaries built by ci/setup.sh: a CMake build per environment would take a minute
    # (the fixture's own build runs in the vcluster tests)
    args = (*args, *([] if judge_load else NOT_JUDGING_LOAD))
    prefix = install_prefix(tmp_path / "prefix")
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(references or folder(tmp_path / "refs")),
               JB_PREFIX=str(prefix / "{environ}"), **(env or {}))
    cmd = [str(REFRAME), "-C", "systems/config.py", *(["--mode", mode] if mode else []), *SUBSET, *args, "-r"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    report = tmp_path / "out" / "report.json"
    cases = []
    if report.exists():
        cases = [c for run in json.loads(report.read_text())["runs"] for c in run["testcases"]
                 if not c.get("fixture")]
    return proc, cases


def write_references(tmp_path, method, halo_entry, fingerprint=None):
    """A local.yaml with one HaloCheck entry (and the fingerprint given); returns its folder."""
    refs = tmp_path / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    (refs / "local.yaml").write_text(yaml.safe_dump({
        "provenance": {"system": "local", "source": "test", "date": "2026-11-22", "method": method},
        **({"fingerprint": fingerprint} if fingerprint else {}),
        "HaloCheck": halo_entry,
    }, sort_keys=False))
    return refs


def perflog_rows(tmp_path):
    path = tmp_path / "out" / "perflogs" / "local" / "default" / "HaloCheck.log"
    lines = path.read_text().splitlines()
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"))) for line in lines[1:]]
    assert all(len(line.split("|")) == len(header) for line in lines), "a perflog row does not fit its header"
    return rows


@pytest.mark.reframe
def test_perflog_records_parameters_eager_variable_mpi_and_nodes(tmp_path):
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default,2048")
    assert proc.returncode == 0, proc.stdout[-3000:]
    rows = perflog_rows(tmp_path)
    assert sorted(r["eager_limit"] for r in rows) == ["2048", "default"]
    for row in rows:
        shape = (row["nodes"], row["tasks_per_node"], row["distribution"], row["placement"])
        assert shape == ("1", "2", "block", "row")
        # what the run swept, and its variables: one per quantity, pattern and size
        assert (row["patterns"], row["msg_sizes"]) == ("sendrecv", "4096")
        assert {k[:-len("_value")] for k in row if k.endswith("_value")} == SUBSET_VARIABLES
        assert row["mpi_library"].startswith("Open MPI v")
        assert row["job_nodelist"] == os.uname().nodename
        # IMB's t_max, the largest per-task mean, lies between the mean per-call AVG (the mean of
        # the per-task means) and the mean per-call MAX (each call's MAX bounds every task's time)
        value = {q: float(row[f"{q}_sendrecv_4096_value"]) for q in ("max", "avg", "p99", "t_max")}
        assert value["max"] >= value["t_max"] >= value["avg"] > 0, value
        assert row["p99_sendrecv_4096_unit"] == row["t_max_sendrecv_4096_unit"] == "us"
        assert row["binding"] == "cores" and re.fullmatch(r"n0:\d+ n0:\d+", row["cpu_sets"]), row
        assert row["max_sendrecv_4096_unit"] == "us"
        expected_var = "" if row["eager_limit"] == "default" else "OMPI_MCA_btl_vader_eager_limit"
        assert row["eager_var"] == expected_var

    # the variable reached the benchmark: its own JSON records the environment it ran with
    outputs = {}
    for path in (tmp_path / "out" / "output").rglob("halo.json"):
        doc = json.loads(path.read_text())
        outputs[doc["metadata"]["environment"].get("OMPI_MCA_btl_vader_eager_limit")] = doc
    assert set(outputs) == {None, "2048"}


@pytest.mark.reframe
def test_splitting_a_fixed_total_gives_the_speed_ratio_of_n_messages_over_one(tmp_path):
    """PingPongCheck sweep=totals (Hein, Booth and Bull, Figs. 3-4): each total sent as 1, 2,
    4 and 8 messages of total/n bytes; gain_<mode>_<total>_n<n> is speed(n) / speed(1) of
    the same run, exactly, as the benchmark's JSON gives the speeds."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(folder(tmp_path / "refs")),
               JB_PREFIX=str(install_prefix(tmp_path / "prefix") / "{environ}"))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *NOT_JUDGING_LOAD,
                           "-c", "reframe_checks/pingpong.py", "-n", "PingPongCheck", "-P", "sweep=totals,window",
                           "-P", "tasks_per_node=2", "-P", "eager_limit=default", "-S", "window_sizes=4096",
                           "-p", "openmpi$", "-S", "modes=isend", "-S", "totals=8192,65536", "-S", "calls=20", "-r"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = {c["sweep"]: c for run in json.loads((tmp_path / "out" / "report.json").read_text())["runs"]
             for c in run["testcases"] if not c.get("fixture")}
    docs = {json.loads(d.read_text())["results"][0]["mode"]: json.loads(d.read_text())
            for d in (tmp_path / "out" / "output").rglob("pingpong.json")}
    # sweep=window: osu_bw's definition, each message from its own buffer as osu_bw -b multiple
    window = docs["window"]
    assert window["config"]["buffers"] == "multiple" and window["results"][0]["messages"] == 64
    assert {k.split(":")[-1]: v[0] for k, v in cases["window"]["perfvalues"].items()}["speed_window_4096_n64"] == \
        pytest.approx(window["results"][0]["speed_mb_s"], rel=1e-5)
    case = cases["totals"]
    perf = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
    doc = docs["isend"]
    speed = {(r["total"], r["messages"]): r["speed_mb_s"] for r in doc["results"]}
    assert sorted(speed) == [(t, n) for t in (8192, 65536) for n in (1, 2, 4, 8)]
    gains = {k: v for k, v in perf.items() if k.startswith("gain_")}
    assert sorted(gains) == sorted(f"gain_isend_{t}_n{n}" for t in (8192, 65536) for n in (2, 4, 8))
    for (total, n), s in speed.items():
        assert perf[f"speed_isend_{total // n}_n{n}"] == pytest.approx(s, rel=1e-5)
        if n > 1:
            assert gains[f"gain_isend_{total}_n{n}"] == pytest.approx(s / speed[(total, 1)], rel=1e-4)


@pytest.mark.reframe
def test_overlap_sweeps_the_work_and_takes_the_fastest_of_its_trials(tmp_path):
    """TorusCheck with work (Hein, Booth and Bull, section 9): the work parameter's size and
    work_sweep's in one run, each after and before the wait, trials x calls timed; the
    check's variables are its own size's, read from those lines exactly."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(folder(tmp_path / "refs")),
               JB_PREFIX=str(install_prefix(tmp_path / "prefix") / "{environ}"))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *NOT_JUDGING_LOAD, "-c", "reframe_checks/torus.py",
                           "-n", "TorusCheck",
                           "-P", "work=262144", "-P", "ndims=1", "-P", "tasks_per_node=2", "-P", "eager_limit=default",
                           "-p", "openmpi$", "-S", "patterns=isend", "-S", "work_sweep=65536", "-S", "trials=3",
                           "-S", "calls=10", "-r"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (case,) = [c for run in json.loads((tmp_path / "out" / "report.json").read_text())["runs"]
               for c in run["testcases"] if not c.get("fixture")]
    perf = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
    (doc,) = (tmp_path / "out" / "output").rglob("torus.json")
    results = {(r["work_bytes"], r["work"], r["size"]): r for r in json.loads(doc.read_text())["results"]}
    assert sorted({(w, place) for w, place, _ in results}) == [
        (65536, "after"), (65536, "before"), (262144, "after"), (262144, "before")]
    assert all((r["trials"], r["calls"]) == (3, 30) for r in results.values())
    for size in (1024, 16384):
        before, after = results[(262144, "before", size)], results[(262144, "after", size)]
        assert perf[f"fastest_isend_{size}"] == pytest.approx(before["fastest_us"], rel=1e-5)
        assert perf[f"fastest_work_after_isend_{size}"] == pytest.approx(after["fastest_us"], rel=1e-5)
        assert perf[f"max_isend_{size}"] == pytest.approx(before["max_us"], rel=1e-5)
        assert perf[f"max_work_after_isend_{size}"] == pytest.approx(after["max_us"], rel=1e-5)


@pytest.mark.reframe
def test_each_variable_is_read_from_the_summary_line_of_its_pattern_and_size(tmp_path):
    """One run sweeps two patterns and two sizes: each variable holds its own line's value,
    as the benchmark's JSON gives it, whatever order the lines come in."""
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", "-S", "patterns=two-phase,sendrecv",
                          "-S", "msg_sizes=4096,40960")
    assert proc.returncode == 0, proc.stdout[-3000:]
    (case,) = cases
    perf = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
    (halo,) = (tmp_path / "out" / "output").rglob("halo.json")
    results = json.loads(halo.read_text())["results"]
    quantities = (("max", "max_us"), ("avg", "avg_us"), ("p99", "p99_us"), ("t_max", "t_max_us"), ("jitter", "jitter"))
    assert len(results) == 4 and len(perf) == 4 * len(quantities)
    for r in results:
        for quantity, field in quantities:
            assert perf[f"{quantity}_{r['pattern']}_{r['ns_size']}"] == pytest.approx(r[field], rel=1e-5)


@pytest.mark.reframe
def test_a_malformed_reference_file_is_a_clear_error(tmp_path):
    write_references(tmp_path, "malformed", {"$index": ["$partition"],
                                             "local:default": {"max_sendrecv_4096": "fast"}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default")
    assert proc.returncode != 0
    assert [c["result"] for c in cases] == ["fail"]
    assert ("local.yaml: HaloCheck > local:default > max_sendrecv_4096: expected [value, lower, upper, unit]"
            in cases[0]["fail_reason"])


@pytest.mark.reframe
def test_acceptance_mode_fails_without_a_reference_file(tmp_path):
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" for c in cases)
    assert all("no reference file for system 'local'" in c["fail_reason"] for c in cases)


@pytest.mark.reframe
def test_acceptance_mode_fails_on_a_variant_without_a_reference(tmp_path):
    write_references(tmp_path, "incomplete", {  # bunched has one; the row case run here has none
        "$index": ["$partition", "placement"],
        "local:default": {"bunched": {"max_sendrecv_4096": [10.0, -0.99, 100.0, "us"]}}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" and "reference" in c["fail_reason"] for c in cases)


@pytest.mark.reframe
def test_a_check_takes_only_the_references_of_the_machine_it_ran_on(tmp_path):
    """A file whose fingerprint names another CPU asserts nothing (the verdict table says why) and
    fails the acceptance mode naming the difference; with this host's CPU it asserts."""
    from jitterbench import fingerprint, verdict_table
    entry = {"$index": ["$partition"], "local:default": {"max_sendrecv_4096": [1e-3, None, 0.01, "us"]}}
    for i, (cpu, mode) in enumerate((("Other CPU; 64 CPUs", None), ("Other CPU; 64 CPUs", "acceptance"),
                                     (fingerprint.this_host(), None))):
        run = tmp_path / str(i)
        refs = write_references(run, "fingerprint", entry, {"system": "local", "cpu": [cpu]})
        proc, cases = reframe(run, "-P", "eager_limit=default", mode=mode, references=refs)
        (case,) = [c for c in cases if c["environ"] == "openmpi"]  # the acceptance mode adds openmpi-ucx
        if cpu != fingerprint.this_host() and mode is None:   # passes, nothing asserted, saying why
            assert proc.returncode == 0, proc.stdout[-3000:]
            assert case["references_from"].startswith("none of this machine: refs/local.yaml: cpu '")
            assert "the references' 'Other CPU; 64 CPUs'" in case["references_from"]
            table = verdict_table.table([str(run / "out" / "report.json")])
            assert "(no references of this machine)" in table
        elif mode == "acceptance":
            assert case["result"] == "fail" and "no references of this machine" in case["fail_reason"]
        else:  # this machine's file: its bound 1 ns x 1.01 fails the run, naming the variable
            assert case["result"] == "fail" and case["references_from"] == str(refs / "local.yaml")
            assert "max_sendrecv_4096" in case["fail_reason"]


PER_CALL = ("max", "avg", "p99", "t_max")  # the per-call statistics every per-call record asserts
HALO_VARIABLES = {f"{q}_{p}_{size}" for q in (*PER_CALL, "jitter") for size in (4096, 40960)
                  for p in ("two-phase", "irecv-isend", "isend-recv", "sendrecv")}
PINGPONG_VARIABLES = {f"{q}_{mode}_{size}_n{n}" for q in ("cycle", "speed") for size in (8, 4096, 65536)
                      for n in (1, 8) for mode in ("send", "isend", "ssend", "issend")}
TORUS_VARIABLES = {f"{q}_{p}_{size}" for q in (*PER_CALL, "bandwidth") for size in (1024, 16384)
                   for p in ("phases", "sendrecv", "isend", "issend", "ibsend")}


@pytest.mark.unit
def test_committed_local_references_are_made_by_the_rule_and_cover_the_quick_suite():
    """reference_data/local.yaml: five quick runs (ci/main.sh's baseline) by the stated rule, with the
    fingerprint of the machine type; every variable of the quick suite there, every noisy one listed."""
    from jitterbench import references
    doc = references.load(REPO / "reference_data" / "local.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    assert (prov["repeats"], prov["false_alarm_rate"], prov["modes"], prov["calls"]) == (5, 0.01, ["quick"], [100])
    assert "/work" not in (REPO / "reference_data" / "local.yaml").read_text()
    assert fp["cpu"] and all(re.fullmatch(r".+; \d+ CPUs", cpu) for cpu in fp["cpu"])
    assert sorted(fp["mpi_library"]) == sorted(fp["transport"]) == ["intelmpi", "mpich", "openmpi"]
    # each case the median of the main job's launches; the checks that run once, once
    assert {check: fp["launches"][check] for check in ("HaloCheck", "JacobiCheck", "EagerCheck", "NoiseCheck")} == {
        "HaloCheck": [5], "JacobiCheck": [5], "EagerCheck": [1], "NoiseCheck": [1]}
    quick = {"HaloCheck": ({v for v in HALO_VARIABLES if "_isend-recv_" in v}, ("row", "bunched")),
             "PingPongCheck": ({v for v in PINGPONG_VARIABLES if "_send_" in v and v.endswith("_n1")}, ("sizes",)),
             "TorusCheck": ({v for v in TORUS_VARIABLES if "_isend_" in v}, ((1, 0),))}
    for environ in ("openmpi", "mpich", "intelmpi"):
        for check, (variables, leaves) in quick.items():
            for leaf in leaves:
                node = doc[check]["local:default"][environ][1][2]["block"][1]["default"]
                for key in leaf if isinstance(leaf, tuple) else (leaf,):
                    node = node[key]
                assert set(node) == variables, (check, environ, leaf)
    # the noisy ones: unbounded in the file, each listed with its slowdown above the limit
    for item in doc["not_assertable"]:
        node = doc[item["check"]]
        for key in item["at"]:
            node = node[key]
        assert node[item["variable"]][1:3] == [None, None]
        assert item["detectable_slowdown"] is None or item["detectable_slowdown"] > prov["max_detectable"]

    def count(node):
        return sum(count(v) for v in node.values()) if isinstance(node, dict) else (node[1:3] != [None, None])
    bounded = sum(count({k: v for k, v in doc[c].items() if k != "$index"}) for c in doc if c not in references.SECTIONS)
    assert bounded == prov["bounded"]


@pytest.mark.unit
def test_committed_torus_references_are_made_by_the_rule_and_hold_the_contention_test_s_variable():
    """reference_data/torus.yaml: five quick runs on the ring of six by the stated rule, with its
    fingerprint; the link pattern's slowdown at 3 pairs that test_contention.py checks against it."""
    from jitterbench import references
    text = (REPO / "reference_data" / "torus.yaml").read_text()
    doc = references.load(REPO / "reference_data" / "torus.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    assert (prov["system"], prov["false_alarm_rate"], prov["modes"], prov["repeats"]) == ("torus", 0.01, ["quick"], 5)
    assert "/work" not in text and set(fp["mpi_library"]) == set(fp["transport"]) == {"openmpi", "intelmpi"}
    link = doc["ContentionCheck"]["torus:links"]["openmpi"][6][1]["block"][1]["default"]["link"]
    assert link["slowdown_65536_d3"][0] > 1 and link["latency_65536_d3"][0] > 0
    listed = {(i["check"], tuple(i["at"]), i["variable"]) for i in doc["not_assertable"]}
    assert len(listed) == len(doc["not_assertable"]) == prov["asserted"] - prov["bounded"]


@pytest.mark.unit
def test_committed_vcluster_references_are_made_by_the_rule_and_cover_the_quick_suite():
    """reference_data/vcluster.yaml: five quick runs on the 3-node virtual cluster by the stated
    rule, with its fingerprint; the quick suite's halo and ping-pong variables (one pattern or send
    mode a run, every size: systems/config.py, QUICK) at 1 to 3 nodes for every MPI."""
    from jitterbench import references
    text = (REPO / "reference_data" / "vcluster.yaml").read_text()
    doc = references.load(REPO / "reference_data" / "vcluster.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    assert (prov["system"], prov["false_alarm_rate"], prov["modes"]) == ("vcluster", 0.01, ["quick"])
    assert str(prov["repeats"]).split("-")[-1] == "5" and "/work" not in text
    assert {"openmpi", "mpich", "intelmpi"} <= set(fp["mpi_library"]) and set(fp["transport"]) == set(fp["mpi_library"])
    halo_quick = {v for v in HALO_VARIABLES if "_isend-recv_" in v}
    pingpong_quick = {v for v in PINGPONG_VARIABLES if "_send_" in v and v.endswith("_n1")}
    for environ in ("openmpi", "mpich", "intelmpi"):
        for nodes in (1, 2, 3):
            for placement in ("row", "bunched"):
                halo = doc["HaloCheck"]["vcluster:vc"][environ][nodes][2]["block"][1]["default"][placement]
                assert set(halo) == halo_quick
            pingpong = doc["PingPongCheck"]["vcluster:vc"][environ][nodes][2]
            for distribution in ("block", "cyclic") if nodes > 1 else ("block",):
                assert set(pingpong[distribution][1]["default"]["sizes"]) == pingpong_quick
    # every variable either bounded or listed as not assertable, with its reason
    listed = {(i["check"], tuple(i["at"]), i["variable"]) for i in doc["not_assertable"]}
    for item in doc["not_assertable"]:
        node = doc[item["check"]]
        for key in item["at"]:
            node = node[key]
        assert node[item["variable"]][1:3] == [None, None]
    assert len(listed) == len(doc["not_assertable"])


def listing(*args):
    """The test cases ReFrame lists (--list=C), nothing run: (display name, partition+environ)."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *args, "--list=C"], cwd=REPO,
                              env=dict(os.environ, JB_OUTPUT=out), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = re.findall(r"^- (\S+(?: %\S+)*) /\w+ @(\S+)$", proc.stdout, re.M)
    return [(name, where) for name, where in cases]


def params(name):
    return dict(re.findall(r"%(\w+)=(\S+)", name))


@pytest.mark.reframe
def test_node_counts_and_tasks_per_node_come_from_the_partition():
    """c1a: 120 nodes of 32 cores; poe places ranks block-wise only."""
    halo = [params(name) for name, _ in listing("--system", "c1a", "-c", "reframe_checks/halo.py")]
    assert {int(p["nodes"]) for p in halo} == {1, 2, 4, 8, 16, 32, 64, 120}
    assert {int(p["tasks_per_node"]) for p in halo} == {1, 2, 16, 32}
    assert {p["distribution"] for p in halo} == {"block"}


@pytest.mark.reframe
def test_the_study_s_torus_of_three_tasks_a_dimension_one_a_node_is_a_case(tmp_path):
    """Hein, Booth and Bull ran 3 processors per dimension, one per LPAR: 27 nodes of one task
    make a 3 x 3 x 3 torus (MPI_Dims_create), a dry run on c1a's partition of 120 nodes."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(folder(tmp_path / "none")))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "c1a", "-c", "reframe_checks/torus.py",
                           "-n", "TorusCheck", "-P", "nodes=27", "-P", "tasks_per_node=1", "-P", "ndims=3", "-P", "work=0",
                           "-P", "eager_limit=default", "--dry-run"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (script,) = [p for p in (tmp_path / "out" / "stage" / "c1a").rglob("rfm_job.sh") if "TorusCheck" in str(p)]
    line = script.read_text().splitlines()[-1]
    assert line.startswith("sh launches.sh 1 3 MP_PROCS=27 MP_NODES=27 MP_TASKS_PER_NODE=1 poe ") and " --ndims 3 " in line, line


@pytest.mark.reframe
def test_the_study_s_p6_run_is_a_case_of_c1a(tmp_path):
    """1920 tasks on 120 nodes, as the study ran P6 (16 of its 32 cores a node)."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(folder(tmp_path / "none")))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "c1a", "-c", "reframe_checks/halo.py",
                           "-n", "HaloCheck%nodes=120%tasks_per_node=16%.*%eager_limit=default%placement=row",
                           "--dry-run"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (script,) = (tmp_path / "out" / "stage" / "c1a").rglob("rfm_job.sh")
    assert script.read_text().splitlines()[-1].startswith("sh launches.sh 1 3 MP_PROCS=1920 MP_NODES=120 MP_TASKS_PER_NODE=16 poe ")


@pytest.mark.reframe
def test_quick_mode_runs_every_check_at_two_tasks_a_node_with_the_mpi_s_eager_limit():
    cases = listing("--mode", "quick")
    checks = {name.split()[0] for name, _ in cases}
    # every record's check whose partition features local has (not the contention check's topology)
    # and that runs on its one node (not pairs and congestion)
    assert checks == {d.check for d in benchmarks.ALL if set(d.features) <= {"mpi"} and d.min_nodes == 1}
    assert {"HaloCheck", "PerftestCheck"} <= checks and "ContentionCheck" not in checks
    # perftest uses no MPI: each program once, on this one node, in one environment
    verbs = [(params(n), where) for n, where in cases if n.startswith("PerftestCheck")]
    assert sorted(p["benchmark"] for p, _ in verbs) == ["ib_read_lat", "ib_send_lat", "ib_write_bw"]
    assert {(p["nodes"], p["adapter"]) for p, _ in verbs} == {("1", "0")} and len({w for _, w in verbs}) == 1
    for name, where in cases:
        if name.startswith("PerftestCheck"):
            continue
        p = params(name)
        assert (p["nodes"], p["tasks_per_node"], p["distribution"]) == ("1", "2", "block"), name
        assert p.get("eager_limit", "default") == "default" or name.startswith("EagerCheck"), name
    assert {params(n)["placement"] for n, _ in cases if n.startswith("HaloCheck")} == {"row", "bunched"}
    assert {params(n)["eager_limit"] for n, _ in cases if n.startswith("EagerCheck")} == {"default", "8192"}
    # every environment of the machine, each case once
    environs = {m.name for m in mpis.available()}
    assert {where.split("+")[1] for _, where in cases} == environs
    assert len(cases) == len(set(cases))


@pytest.mark.reframe
def test_plan_counts_the_cases_reframe_lists_and_estimates_their_time(capsys):
    from jitterbench import plan
    assert plan.main(["--system", "local", "--mode", "quick"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out[2:] if line.split() and line.split()[0].endswith("Check")}
    cases = listing("--mode", "quick")
    assert {check: int(row[1]) for check, row in rows.items()} == {
        check: sum(name.startswith(check + " ") for name, _ in cases) for check in rows}
    (total,) = [line.split() for line in out if line.startswith("total")]
    assert int(total[1]) == len(cases) and float(total[-1]) > 0


@pytest.mark.parametrize("argv,message", [
    (["--system", "nosuch"], "unknown system 'nosuch'"),
    (["--system", "local", "--mode", "fast"], "unknown mode 'fast' for system 'local'"),
    (["--system", "local", "-C", "/nonexistent/config.py"], "no ReFrame configuration at /nonexistent/config.py"),
])
@pytest.mark.unit
def test_plan_refuses_bad_input_in_one_line(capsys, argv, message):
    from jitterbench import plan
    assert plan.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err


@pytest.mark.parametrize("check,variable,quantity,swept", [
    ("HaloCheck", "max_isend-recv_4096", "max", {"pattern": "isend-recv", "msg_size": 4096}),
    ("PingPongCheck", "cycle_send_65536_n8", "cycle", {"mode": "send", "msg_size": 65536, "messages": 8}),
    ("TorusCheck", "max_work_after_isend_16384", "max_work_after", {"pattern": "isend", "msg_size": 16384}),
    ("ContentionCheck", "latency_p50_8_d2", "latency_p50", {"msg_size": 8, "distance": 2}),
    ("EagerCheck", "eager_limit_shm", "eager_limit_shm", {}),
    ("OsuCheck", "latency_8", "latency", {"msg_size": 8}),
])
@pytest.mark.unit
def test_a_swept_variable_names_its_quantity_and_swept_values(check, variable, quantity, swept):
    from jitterbench import sweeps
    assert sweeps.unfold(check, variable) == (quantity, swept)
    word = {k: v for k, v in swept.items() if k == sweeps.WORD.get(check)}
    assert sweeps.name(quantity, *word.values(), **{k: v for k, v in swept.items() if k not in word}) == variable


@pytest.mark.unit
def test_split_gives_the_cases_a_run_would_have_been_with_every_swept_value_a_parameter():
    from jitterbench import sweeps
    split = sweeps.split("HaloCheck", {"nodes": 2}, {"max_sendrecv_4096": 1.0, "avg_sendrecv_4096": 0.5,
                                                     "max_sendrecv_40960": 3.0})
    assert split == [({"nodes": 2, "pattern": "sendrecv", "msg_size": 4096}, {"max": 1.0, "avg": 0.5}),
                     ({"nodes": 2, "pattern": "sendrecv", "msg_size": 40960}, {"max": 3.0})]


@pytest.mark.unit
def test_unswept_cases_keep_their_documents_once_and_a_case_without_values_whole():
    from jitterbench import runs, sweeps
    doc = {"benchmark": "halo"}
    swept = runs.Case("local", "local", "default", "openmpi", "HaloCheck", {"nodes": 1},
                      {"max_sendrecv_4096": 1.0, "max_sendrecv_40960": 2.0}, documents=[doc])
    failed = runs.Case("local", "local", "default", "openmpi", "HaloCheck", {"nodes": 2}, {}, result="fail")
    cases = sweeps.unswept([swept, failed])
    assert [(c.params, c.perf, c.documents) for c in cases] == [
        ({"nodes": 1, "pattern": "sendrecv", "msg_size": 4096}, {"max": 1.0}, [doc]),
        ({"nodes": 1, "pattern": "sendrecv", "msg_size": 40960}, {"max": 2.0}, []),
        ({"nodes": 2}, {}, [])]
    assert cases[2].result == "fail"


@pytest.mark.unit
def test_scales_are_powers_of_two_and_the_partition_s_own_size():
    from jitterbench.rfm import per_node_scale, scale
    assert scale(1) == [1] and scale(3) == [1, 2, 3] and scale(128) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert scale(120) == [1, 2, 4, 8, 16, 32, 64, 120]
    assert per_node_scale(1) == [1] and per_node_scale(2) == [1, 2] and per_node_scale(32) == [1, 2, 16, 32]
    with pytest.raises(ValueError):
        scale(0)


@pytest.mark.reframe
@pytest.mark.parametrize("variable", ["JB_PREFIX", "JB_REFERENCE_DIR", "JB_SPACK_VIEWS"])
def test_a_folder_variable_holding_commands_or_naming_nothing_is_one_line_and_runs_none(tmp_path, variable):
    """JB_PREFIX reaches the build's and the job's shell lines, JB_REFERENCE_DIR the checks, JB_SPACK_VIEWS
    the prefixes: a name of $(...), backticks, ; and spaces is refused as JB_OUTPUT's is (it failed later as
    "build job failed", naming no variable), and so is one naming nothing (a views folder that is not there
    ran 0 of 2 and passed; a references folder that is not there was not read): one line naming the
    variable, before ReFrame runs anything, and no command in it runs (issue 44)."""
    hostile = "$(touch X);`touch Y`; touch Z"
    for value in (str(folder(tmp_path / f"p {hostile}")), str(tmp_path / "nothing-here")):
        env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"),
                   **{variable: value + ("/{environ}" if variable == "JB_PREFIX" else "")})
        proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *SUBSET, "-l"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode != 0 and f"jitterbench: {variable}=" in proc.stderr, proc.stdout[-3000:] + proc.stderr
        assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr
    assert not [p for p in tmp_path.rglob("*") if p.name in ("X", "Y", "Z")]
    assert not [p for p in REPO.rglob("*") if p.name in ("X", "Y", "Z") and ".git" not in p.parts]
