"""jb-alltoall under real MPI launchers."""
from __future__ import annotations

import pytest

from conftest import assert_rejected, run_benchmark

pytestmark = pytest.mark.mpi


def alltoall(mpi, tmp_path, np, *args):
    run = run_benchmark(mpi, np, list(args), json_path=tmp_path / "a.json", benchmark="alltoall")
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.parametrize("np", [2, 3, 4, 5])
def test_both_methods_deliver_every_block(mpi, tmp_path, np):
    run = alltoall(mpi, tmp_path, np, "--validate", "--size", "8,64K", "--calls", "10", "--warmup", "1")
    assert "every payload arrived intact" in run.stdout
    assert {r["rounds"] for r in run.results()} == {np - 1 if np % 2 == 0 else np}
    assert [(r["method"], r["size"]) for r in run.results()] == [
        ("pairwise", 8), ("alltoall", 8), ("pairwise", 65536), ("alltoall", 65536)]
    for r in run.results():
        assert r["max_us"] >= r["avg_us"] >= r["min_us"] > 0
        assert r["throughput_mb_s"] == pytest.approx(2 * (np - 1) * r["size"] / r["max_us"], rel=1e-5)


def test_exchange_and_idle_times_are_counted_per_exchange(mpi, tmp_path):
    np, calls = 4, 25
    run = alltoall(mpi, tmp_path, np, "--method", "pairwise", "--calls", str(calls), "--max-samples", "40",
                   "--samples", str(tmp_path / "samples.txt"))
    r = run.results()[0]
    exchanges = np * (np - 1) * calls  # every task, every round, every call (even P: nobody sits out)
    # those whose clocks broke causality (more clock error than exchange time) are counted apart
    assert r["exchange_histogram"]["total"] == r["idle_histogram"]["total"] == exchanges - r["exchanges_unknown"]
    assert 0 <= r["exchanges_unknown"] < exchanges / 2, r["exchanges_unknown"]
    assert len(r["samples_us"]) == 40 and all(s > 0 for s in r["samples_us"])
    lines = (tmp_path / "samples.txt").read_text().split()
    assert [float(x) for x in lines] == pytest.approx(r["samples_us"], rel=1e-5)


def test_odd_task_counts_sit_one_task_out_per_round(mpi, tmp_path):
    np, calls = 5, 10
    run = alltoall(mpi, tmp_path, np, "--method", "pairwise", "--calls", str(calls))
    # P rounds, each task sits out one: P - 1 exchanges per task and call (timed, or of unknown times)
    r = run.results()[0]
    assert r["exchange_histogram"]["total"] + r["exchanges_unknown"] == np * (np - 1) * calls


@pytest.mark.parametrize("args,message", [
    (["--method", "bruck"], "unknown name 'bruck'"),
    (["--method", "alltoall", "--samples", "x.txt"], "--samples needs the pairwise method"),
    (["--max-samples", "0"], "--max-samples: 0 is out of range"),
])
def test_bad_input(mpi, tmp_path, args, message):
    assert_rejected(mpi, 2, args, message, "alltoall", tmp_path)


def test_procs_and_injected_waits_count_every_exchange(mpi, tmp_path):
    """--procs: the first P tasks exchange, each of the P - 1 rounds; --inject 1:US makes every task
    wait before each exchange, so every exchange (from the later partner's start) lasts the wait."""
    calls, wait_us = 6, 3000
    run = alltoall(mpi, tmp_path, 4, "--method", "pairwise", "--procs", "2,3,4", "--calls", str(calls),
                   "--inject", f"1:{wait_us}", "--inject-by", "sleep", "--validate")
    assert "every payload arrived intact" in run.stdout
    results = run.results()
    assert [(r["tasks"], r["rounds"]) for r in results] == [(2, 1), (3, 3), (4, 3)]
    for r in results:
        p = r["tasks"]
        assert r["injected_exchanges"] == p * (p - 1) * calls  # the timed calls', not the warm-up's
        assert r["exchange_histogram"]["total"] + r["exchanges_unknown"] == p * (p - 1) * calls
        slack = r["clock_error_us"] if "clock_error_us" in r else run.doc["config"]["clock_error_us"]
        assert min(r["samples_us"]) >= wait_us - slack - 1, (min(r["samples_us"]), slack)
        assert r["throughput_mb_s"] == pytest.approx(2 * (p - 1) * r["size"] / r["max_us"], rel=1e-5)
    assert run.doc["config"]["inject_by"] == "sleep" and run.doc["config"]["inject_us"] == wait_us
