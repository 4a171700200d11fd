"""`jitterbench simulate` on real benchmark output."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import halo_document, run_benchmark
from jitterbench import cli, simulate


@pytest.mark.mpi
def test_alltoall_simulation_from_a_jb_alltoall_document(mpi, tmp_path, capsys):
    run = run_benchmark(mpi, 2, ["--method", "pairwise", "--calls", "50"], json_path=tmp_path / "a.json",
                        benchmark="alltoall")
    assert run.returncode == 0, run.stderr
    out = tmp_path / "sim.json"
    assert cli.main(["simulate", "alltoall", str(tmp_path / "a.json"), "--procs", "2,4,8", "--trials", "2000",
                     "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["sample_size"] == len(run.results()[0]["samples_us"])
    assert [p["P"] for p in doc["procs"]] == [2, 4, 8]
    assert doc["procs"][0]["idle_mean_us"] == 0  # two processors never wait for a third
    assert all(a["total_mean_us"] < b["total_mean_us"] for a, b in zip(doc["procs"], doc["procs"][1:]))
    capsys.readouterr()


@pytest.mark.mpi
def test_halo_prediction_agrees_with_an_injected_run(mpi, tmp_path, capsys):
    """From 1 task with calibrated noise, predict MAX at 2 tasks; then measure 2 tasks."""
    p, wait_us, calls = 0.05, 5000, 400
    args = ["--inject", f"{p}:{wait_us}", "--pattern", "c", "--calls", str(calls), "--series", "--seed", "3"]
    one = run_benchmark(mpi, 1, args, json_path=tmp_path / "one.json")
    two = run_benchmark(mpi, 2, args, json_path=tmp_path / "two.json")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    out = tmp_path / "pred.json"
    assert cli.main(["simulate", "halo", str(tmp_path / "one.json"), "--tasks", "2", "--json", str(out)]) == 0
    pred = {e["tasks"]: e for e in json.loads(out.read_text())["predictions"]}
    assert pred[1]["max_us"] == pytest.approx(one.results()[0]["max_us"], rel=1e-6)  # N0 gives itself back
    measured = two.results()[0]
    se_measured = np.std(measured["series"]["max_us"], ddof=1) / math.sqrt(calls)
    allowed = 4 * math.hypot(pred[2]["max_se_us"], se_measured)
    assert abs(pred[2]["max_us"] - measured["max_us"]) < allowed, (pred[2], measured["max_us"], allowed)
    # without the barrier's coupling the injected waits average out within each task
    assert pred[2]["max_uncoupled_us"] < pred[2]["max_us"]
    capsys.readouterr()


@pytest.mark.unit
def test_bad_simulation_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("12.5\nfast\n")
    assert cli.main(["simulate", "alltoall", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.txt: line 2" in err[0]
    halo = tmp_path / "halo.json"
    halo.write_text(json.dumps({"benchmark": "halo", "config": {}, "metadata": {"ranks": 2},
                                "results": [{"max_us": 1.0, "avg_us": 1.0}]}))
    assert cli.main(["simulate", "halo", str(halo)]) == 2
    assert "run jb-halo with --series" in capsys.readouterr().err


@pytest.mark.unit
@pytest.mark.parametrize("argv, says", [
    (["alltoall", "{samples}", "--trials", "1000000000000", "--procs", "64"], "GiB, over the budget of"),
    (["alltoall", "{samples}", "--trials", "1000", "--procs", "4096"], "s, over the budget of 5 s"),
    # the halo's memory is a chunk of tasks, whatever their count (issue 61): 10^12 tasks is a matter of time
    (["halo", "{halo}", "--tasks", "1000000000000"], "s, over the budget of 5 s"),
    (["halo", "{halo}", "--tasks", "100000,100000000"], "s, over the budget of 5 s"),
])
def test_a_run_over_the_budget_is_refused_before_it_starts(tmp_path, monkeypatch, capsys, argv, says):
    """Estimated and refused in one line (the memory: half the machine's; the time:
    JB_SIMULATE_BUDGET_S), before any simulation is called: nothing is allocated or drawn."""
    samples = tmp_path / "samples.txt"
    samples.write_text("10\n12\n11\n")
    halo = tmp_path / "halo.json"
    halo.write_text(json.dumps(halo_document()))
    monkeypatch.setenv("JB_SIMULATE_BUDGET_S", "5")
    called = []  # each model as the command calls it: through the package's names
    for name in ("alltoall_results", "halo_extrapolation", "halo_prediction", "halo_trace_prediction"):
        monkeypatch.setattr(simulate, name, lambda *a, name=name, **k: called.append(name))
    code = cli.main(["simulate", *(a.format(samples=samples, halo=halo) for a in argv)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert called == []
