"""jb-congestion under each MPI's launcher, on virtual nodes of one machine: where the canaries and
each congestor kind sit, that the factors are the ratios of the phases' figures, and bad input.
Its known answer on shared links is tests/test_congestion_vcluster.py's."""
from __future__ import annotations

import pytest

from conftest import assert_rejected, run_benchmark
from jitterbench import mpi as mpis

pytestmark = pytest.mark.mpi

SMALL = ["--calls", "4", "--rounds", "2", "--tasks-per-node", "1"]


def test_canaries_and_congestors_sit_as_placed_and_the_factors_are_the_phases_ratios(mpi, tmp_path):
    # ten nodes: canaries on 2, (i x 2) mod 10 < 2, nodes 0 and 5; the other 8 dealt alltoall,
    # incast, bcast in turn: 3, 3 and 2
    run = run_benchmark(mpi, 10, SMALL, tmp_path / "c.json", benchmark="congestion")
    assert run.returncode == 0, run.stderr
    cfg, results = run.doc["config"], run.doc["results"]
    assert (cfg["nodes"], cfg["canary_nodes"]) == (10, 2)
    assert [(c["congestor"], c["tasks"]) for c in cfg["congestors"]] == [("alltoall", 3), ("incast", 3), ("bcast", 2)]
    assert [(r["canary"], r["phase"], r["tasks"], r["calls"]) for r in results] == [
        (canary, phase, 2, 4) for canary in ("latency", "bandwidth", "allreduce") for phase in ("isolated", "congested")]
    # the canary tasks are ranks 0 and 5: the slowest of every call is one of them
    assert all(r["slowest"]["node_tasks"] == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0] for r in results)
    for isolated, congested in zip(results[::2], results[1::2]):
        assert congested["impact_avg"] == pytest.approx(congested["avg_us"] / isolated["avg_us"], rel=1e-4)
        assert congested["impact_p99"] == pytest.approx(congested["p99_us"] / isolated["p99_us"], rel=1e-4)
    (bandwidth,) = [r for r in results if r["canary"] == "bandwidth" and r["phase"] == "congested"]
    assert bandwidth["bandwidth_mb_s"] == pytest.approx(2 * 131072 / bandwidth["avg_us"], rel=1e-4)


@pytest.mark.parametrize("args,message", [
    (["--congestors", "none,alltoall"], "--congestors: none goes alone"),
    (["--sync", "window"], "--sync window: the canaries start each call after a barrier"),
    (["--canary-share", "2"], "--canary-share"),
    (["--congestor-size", "2G"], "message sizes above 1G are not supported"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    # the core parses them alike under every MPI: one is enough (CI's time)
    assert_rejected(mpis.OPENMPI, 3, [*SMALL, *args], message, "congestion", tmp_path)


def test_two_nodes_leave_no_node_for_a_congestor(mpi, tmp_path):
    assert_rejected(mpi, 2, SMALL, "2 node(s): the canaries need 2 nodes and the congestors 1 more", "congestion",
                    tmp_path)
    run = run_benchmark(mpi, 2, [*SMALL, "--congestors", "none"], tmp_path / "n.json", benchmark="congestion")
    assert run.returncode == 0 and run.doc["config"]["congestors"] == [], run.stderr
