"""ReFrame's perflogs of the checks on `local`, for real: every parameter, the eager-limit variable,
the MPI and the nodes in each row; each variable read from its pattern's and size's summary line."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import folder, install_prefix
from jitterbench import mpi as mpis
from support.reframe_runs import NOT_JUDGING_LOAD, REFRAME, REPO, SUBSET_VARIABLES, perflog_rows, reframe

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


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
