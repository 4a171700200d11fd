"""jb-pingpong: multi-ping-pong under real MPI launchers."""
from __future__ import annotations

import pytest

from conftest import assert_rejected, run_benchmark

pytestmark = pytest.mark.mpi

MODES = ["send", "isend", "ssend", "issend"]


def pingpong(mpi, tmp_path, np, *args):
    run = run_benchmark(mpi, np, list(args), json_path=tmp_path / "pp.json", benchmark="pingpong")
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.parametrize("np", [2, 4])
def test_every_send_mode_delivers_intact_payloads(mpi, tmp_path, np):
    # 8 bytes go eagerly everywhere; 128 KiB goes by rendezvous everywhere
    run = pingpong(mpi, tmp_path, np, "--validate", "--size", "8,128K", "--messages", "1,4",
                   "--calls", "20", "--warmup", "2")
    results = run.results()
    assert [(r["mode"], r["messages"], r["size"]) for r in results] == [
        (m, n, s) for m in MODES for n in (1, 4) for s in (8, 131072)]
    for r in results:
        assert r["pairs"] == np // 2
        assert r["max_us"] >= r["avg_us"] >= r["min_us"] > 0
        # the speed formula on the reported numbers: 2 n size / cycle time, MB = 10^6 B
        assert r["speed_mb_s"] == pytest.approx(2 * r["messages"] * r["size"] / r["max_us"], rel=1e-5)
        assert r["total"] == r["messages"] * r["size"]
        if r["messages"] == 1:  # osu_latency: the mean half round trip
            assert r["latency_us"] == pytest.approx(r["avg_us"] / 2, rel=1e-5)
        else:
            assert "latency_us" not in r


@pytest.mark.parametrize("tasks_per_node,crossing", [(1, [0, 1, 2]), (3, [0, 1, 2]), (6, [])])
def test_pairs_that_cross_nodes_are_reported_exactly(mpi, tmp_path, tasks_per_node, crossing):
    # 6 tasks: pairs (0,3), (1,4), (2,5); nodes of 1, 3 or 6 consecutive tasks
    run = pingpong(mpi, tmp_path, 6, "--tasks-per-node", str(tasks_per_node), "--size", "8", "--messages", "1",
                   "--mode", "isend", "--calls", "5")
    config = run.doc["config"]
    assert config["pairs"] == 3
    assert config["off_node_pairs_below_64"] == crossing
    assert config["pairs_off_node"] == len(crossing) == run.results()[0]["pairs_off_node"]


def test_fixed_total_mode_splits_the_total(mpi, tmp_path):
    run = pingpong(mpi, tmp_path, 2, "--total", "64K", "--messages", "1,2,8", "--mode", "isend",
                   "--calls", "10", "--validate")
    assert [(r["messages"], r["size"], r["total"]) for r in run.results()] == [
        (1, 65536, 65536), (2, 32768, 65536), (8, 8192, 65536)]


@pytest.mark.parametrize("np,args,message", [
    (3, [], "needs an even number of tasks"),
    (2, ["--total", "100", "--messages", "3"], "--total 100 does not split into 3 equal messages"),
    (2, ["--messages", "65"], "--messages: 65 is out of range"),
    (2, ["--mode", "bsend"], "unknown name 'bsend'"),
    (2, ["--size", "8", "--total", "64"], "either --size or --total"),
])
def test_bad_input(mpi, tmp_path, np, args, message):
    assert_rejected(mpi, np, args, message, "pingpong", tmp_path)
