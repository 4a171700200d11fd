"""jb-pairs's known answers on the virtual cluster (four nodes, links of 1 Gbit/s each way): a
clean cluster names no node; with one node's links at 15 Mbit/s (`vcluster.sh rate 15mbit 4`)
that node is named, its three pairs are exactly the outliers, their bandwidth is the link's,
and PairsCheck fails naming the node and its host.

15 Mbit/s, not 50: four nodes' ranks on two cores spread the clean pairs over 35-56 MB/s in some
runs, and the robust sigma of that spread put the bound (centre - k_pair sigma, k_pair 3.14 for 6
pairs at 1 %) at 3.7 MB/s, below 50 Mbit/s's 6 MB/s: the slow node went unnamed in 2 of 4 runs."""
from __future__ import annotations

import json
import subprocess

import pytest

from support import clusters
from support.clusters import REPO, VCLUSTER, run_env
from conftest import install_prefix
from jitterbench import mpi as mpis

pytestmark = [pytest.mark.vcluster, pytest.mark.skipif(clusters.why_not() is not None, reason=clusters.why_not() or "")]

NODES, SLOW = 4, 4  # vcluster's node numbers are 1-based; jb-pairs's 0-based: node SLOW - 1
SLOW_MBIT = 15      # the slow node's links (module docstring)
# 64 KiB windows: a window takes 0.56 s at 15 Mbit/s, so the test takes a minute and a half
OPTIONS = ["--windows", "18", "--bandwidth-size", "64K"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from clusters.cluster(tmp_path_factory, str(NODES), "--rails", "1", "--link-rate", "1gbit")


def pairs_run(cluster, tmp_path, name):
    doc = tmp_path / f"{name}.json"
    # four nodes' ranks on two cores: as PairsCheck there, the MPI yields (jitterbench/mpi.py's yield_vars)
    proc = subprocess.run(["srun", "-p", "vc", "-N", str(NODES), "--ntasks-per-node", "1", "--mpi=pmix",
                           str(mpis.OPENMPI.binary("pairs")), *OPTIONS, "--json", str(doc)],
                          env={**cluster, **mpis.OPENMPI.yield_vars}, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(doc.read_text())["results"]


def test_a_slow_node_is_named_and_its_pairs_are_the_outliers(cluster, tmp_path):
    clean = pairs_run(cluster, tmp_path, "clean")[-1]
    assert clean["named_nodes"] == "none" and clean["outlier_nodes"] == 0, clean
    rate = subprocess.run(["bash", str(VCLUSTER), "rate", f"{SLOW_MBIT}mbit", str(SLOW)], env=cluster,
                          capture_output=True,
                          text=True, timeout=60)
    assert rate.returncode == 0, rate.stderr
    results = pairs_run(cluster, tmp_path, "slow")
    summary, per_node = results[-1], results[:-1]
    assert summary["named_nodes"] == str(SLOW - 1) and [r["outlier"] for r in per_node] == [0, 0, 0, 1], \
        (summary, per_node)
    slow_pairs = sorted((o["a"], o["b"]) for o in summary["outliers"] if o["slow_bandwidth"])
    assert slow_pairs == [(0, 3), (1, 3), (2, 3)]
    # the link's rate in MB/s; tbf lets a little less through
    for a, b in slow_pairs:
        assert 0.7 * SLOW_MBIT / 8 < summary["matrix"]["bandwidth_mb_s"][a][b] < 1.05 * SLOW_MBIT / 8

    prefix = install_prefix(tmp_path / "prefix")
    out = tmp_path / "out"
    proc = subprocess.run(clusters.reframe_command(
        "vcluster", "-c", "reframe_checks/pairs.py", "-n", "PairsCheck", "-p", "^openmpi$", "--max-retries=0",
        "-S", "windows=18", "-S", "bandwidth_size=65536"), cwd=REPO,
        env={**run_env(cluster, out), "JB_PREFIX": str(prefix / "{environ}")}, capture_output=True, text=True,
        timeout=600)
    assert proc.returncode != 0
    assert f"outlier nodes (more than half their pairs outliers in one figure; the pairs and the rate in " \
           f"pairs.json): {SLOW - 1} (node{SLOW})" in proc.stdout, proc.stdout[-3000:]
