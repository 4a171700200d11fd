"""The multi-node workflow on the virtual Slurm cluster (ci/vcluster/vcluster.sh), for real.

Needs root and network namespaces; elsewhere the tests skip and say why.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
VCLUSTER = REPO / "ci" / "vcluster" / "vcluster.sh"
REFRAME = Path(sys.executable).with_name("reframe")


def can_run():
    if os.geteuid() != 0:
        return "the virtual cluster needs root"
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        return "this machine cannot create network namespaces"
    if not mpis.OPENMPI.available():
        return "Open MPI is not installed"
    return None


pytestmark = pytest.mark.skipif(can_run() is not None, reason=can_run() or "")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    state = tmp_path_factory.mktemp("vcluster")
    env = dict(os.environ, JB_VCLUSTER_DIR=str(state))
    up = subprocess.run(["bash", str(VCLUSTER), "up", "3"], env=env, capture_output=True, text=True, timeout=300)
    if up.returncode != 0:  # leave nothing running: a fixture that fails here gets no teardown
        subprocess.run(["bash", str(VCLUSTER), "down"], env=env, capture_output=True, timeout=120)
    assert up.returncode == 0, up.stderr
    yield env
    down = subprocess.run(["bash", str(VCLUSTER), "down"], env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    assert not state.exists()


def reframe(env, out, *args):
    run_env = dict(env, JB_OUTPUT=str(out), SLURM_CONF=str(Path(env["JB_VCLUSTER_DIR"]) / "slurm.conf"))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "vcluster", "-p", "openmpi",
                           "-P", "tasks_per_node=2", *args, "-r"], cwd=REPO, env=run_env,
                          capture_output=True, text=True, timeout=900)
    report = json.loads((out / "report.json").read_text())
    cases = [c for run in report["runs"] for c in run["testcases"] if not c.get("fixture")]
    return proc, cases


def test_bring_up_is_idempotent_and_a_bad_count_is_refused(cluster):
    again = subprocess.run(["bash", str(VCLUSTER), "up", "3"], env=cluster, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "3 nodes idle" in again.stdout
    other = subprocess.run(["bash", str(VCLUSTER), "up", "2"], env=cluster, capture_output=True, text=True, timeout=60)
    assert other.returncode != 0 and other.stderr.strip().startswith("vcluster: error: a cluster of 3 nodes is up")
    bad = subprocess.run(["bash", str(VCLUSTER), "up", "x"], env=cluster, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "node count" in bad.stderr


def test_halo_across_two_real_nodes(cluster, tmp_path):
    proc, cases = reframe(cluster, tmp_path, "-c", "reframe_checks/halo.py", "-P", "nodes=2",
                          "-P", "eager_limit=default", "-P", "HaloCheck.pattern=isend-recv",
                          "-P", "HaloCheck.msg_size=4096")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert {c["placement"] for c in cases} == {"row", "bunched"}
    for case in cases:
        assert sorted(case["job_nodelist"]) == ["node1", "node2"]  # two distinct nodes
        doc = json.loads(next((tmp_path / "output").rglob(f"{case['short_name']}*/halo.json")).read_text())
        meta = doc["metadata"]
        assert (meta["nodes"], meta["tasks_per_node"], meta["virtual_nodes"]) == (2, 2, False)
        assert sorted(meta["node_list"]) == ["node1", "node2"]
        # 4 tasks as a 4 x 1 ring, 2 per node: each node's strip has one off-node side each way
        assert doc["config"]["off_node_per_node"] == 2


def test_eager_probe_sees_tcp_between_nodes_and_the_variables_move_both(cluster, tmp_path):
    proc, cases = reframe(cluster, tmp_path, "-c", "reframe_checks/eager.py", "-P", "nodes=2")
    assert proc.returncode == 0, proc.stdout[-3000:]
    by_limit = {c["eager_limit"]: {k.split(":")[-1]: v[0] for k, v in c["perfvalues"].items()} for c in cases}
    assert 65536 - 256 <= by_limit["default"]["eager_limit_tcp"] <= 65536  # Open MPI's TCP default, less header
    for limit in ("8192", "32768"):
        for transport in ("shm", "tcp"):
            assert int(limit) - 256 <= by_limit[limit][f"eager_limit_{transport}"] <= int(limit)


def test_off_node_ping_pong_is_slower_than_on_node_in_one_run(cluster, tmp_path):
    proc, cases = reframe(cluster, tmp_path, "-c", "reframe_checks/pingpong.py", "-P", "nodes=1,2",
                          "-P", "eager_limit=default", "-P", "PingPongCheck.mode=send",
                          "-P", "PingPongCheck.messages=1", "-P", "PingPongCheck.msg_size=8")
    assert proc.returncode == 0, proc.stdout[-3000:]
    median = {}
    for case in cases:  # the median cycle: a core lost to another process inflates the mean, not this
        doc = json.loads(next((tmp_path / "output").rglob(f"{case['short_name']}*/pingpong.json")).read_text())
        median[case["nodes"]] = doc["results"][0]["p50_us"]
        # 2 nodes of 2 tasks: pairs (0, 2) and (1, 3) both cross; on one node neither does
        assert doc["results"][0]["pairs_off_node"] == (2 if case["nodes"] == 2 else 0)
    # a ratio measured side by side, not a speed: TCP over veth against shared memory
    assert median[2] > 2 * median[1], median
