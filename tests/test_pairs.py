"""jb-pairs under each MPI's launcher, on virtual nodes of one machine: the tournament measures
every pair once (even and odd node counts), the matrix file and the JSON agree, and bad input
ends in one line.  The known answers on a rate-limited node are tests/test_pairs_vcluster.py's."""
from __future__ import annotations

import math
import statistics

import pytest

from conftest import assert_rejected, given_once, run_benchmark
from jitterbench import mpi as mpis

pytestmark = pytest.mark.mpi

SMALL = ["--calls", "6", "--windows", "6", "--passes", "1", "--bandwidth-size", "4K", "--tasks-per-node", "1"]


@pytest.mark.parametrize("nodes", [3, 4])  # an odd count's byes and an even one's; two: every test of records
def test_every_pair_once_in_the_rounds_and_the_matrix_file_says_the_same(mpi, tmp_path, nodes):
    matrix = tmp_path / "pairs.csv"
    run = run_benchmark(mpi, nodes, [*SMALL, "--matrix", str(matrix)], tmp_path / "pairs.json", benchmark="pairs")
    assert run.returncode == 0, run.stderr
    cfg, results = run.doc["config"], run.doc["results"]
    pairs = nodes * (nodes - 1) // 2
    assert (cfg["nodes"], cfg["pairs"], cfg["rounds"]) == (nodes, pairs, nodes if nodes % 2 else nodes - 1)
    per_node = [r for r in results if r["scope"] == "node"]
    (summary,) = [r for r in results if r["scope"] == "pairs"]
    assert [r["node"] for r in per_node] == list(range(nodes)) and summary["pairs"] == pairs
    # the JSON's matrix: symmetric, nothing on the diagonal, every pair measured
    for key in ("latency_us", "bandwidth_mb_s"):
        m = summary["matrix"][key]
        assert all(m[a][a] is None for a in range(nodes))
        assert all(m[a][b] == m[b][a] and m[a][b] > 0 for a in range(nodes) for b in range(nodes) if a != b)
    # the file: a header and every pair a < b once, each line 48 bytes, the JSON's figures
    lines = matrix.read_bytes().splitlines(keepends=True)
    assert len(lines) == pairs + 1 and {len(line) for line in lines} == {48}
    assert [f.strip() for f in lines[0].decode().split(",")] == ["a", "b", "latency_us", "bandwidth_mb_s"]
    rows = [[float(f) for f in line.decode().split(",")] for line in lines[1:]]
    assert [(int(a), int(b)) for a, b, _, _ in rows] == [(a, b) for a in range(nodes) for b in range(a + 1, nodes)]
    for a, b, latency, bandwidth in rows:
        assert latency == pytest.approx(summary["matrix"]["latency_us"][int(a)][int(b)], rel=1e-5, abs=1e-4)  # 6 digits, 4 decimals
        assert bandwidth == pytest.approx(summary["matrix"]["bandwidth_mb_s"][int(a)][int(b)], rel=1e-5, abs=1e-4)
    # the summary's medians are the medians of the node medians (on the log scale: even counts take
    # the geometric mean of the middle two)
    for key in ("latency_p50_us", "bandwidth_p50_mb_s"):
        logs = [math.log(r[key]) for r in per_node]
        assert summary[key] == pytest.approx(math.exp(statistics.median(logs)), rel=1e-5)
    # each node's slowest pair is the slowest of its row
    for r in per_node:
        row = [v for v in summary["matrix"]["latency_us"][r["node"]] if v is not None]
        assert r["latency_max_us"] == pytest.approx(max(row), rel=1e-5)
    assert not list(tmp_path.glob("*.jb-tmp-*"))


def test_one_node_has_no_pairs_and_says_so(mpi, tmp_path):
    run = run_benchmark(mpi, 1, SMALL, tmp_path / "pairs.json", benchmark="pairs")
    assert run.returncode == 0, run.stderr
    assert "# one node: no pairs to measure" in run.stdout
    assert run.doc["results"] == [{"scope": "pairs", "nodes": 1, "pairs": 0, "outlier_pairs": 0, "outlier_nodes": 0,
                                   "named_nodes": "none"}]


@pytest.mark.parametrize("args,message", [
    (["--window", "0"], "--window"),
    (["--rate", "0.9"], "--rate"),
    (["--bandwidth-size", "2G"], "message sizes above 1G are not supported"),
    (["--matrix", "/nonexistent/folder/m.csv"], "--matrix"),
    (["--passes", "2"], "--calls 6 and --windows 6 give a pass fewer than 6 of each over 2 passes"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    # the core parses them alike under every MPI: one is enough (CI's time)
    assert_rejected(mpis.OPENMPI, 2, given_once(SMALL, args), message, "pairs", tmp_path)
