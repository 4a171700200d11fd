"""Two rails (Hein's two switch planes; two adapters per node today) on the virtual
cluster: `vcluster.sh up 2 --rails 2` gives each node two networks limited to 100 Mbit/s
each way, and the checks' `rails` parameter restricts the MPI to one or both through its
transport's device variable (jitterbench/transports.py).  The known answers, measured as
ratios in one run: a 1 MiB message, whose time the rate limit sets, moves about twice as
fast over two rails as over one; an 8-byte message, whose time is the MPI's own path, does not.
The cluster's nodes list their devices in one order (vcluster.sh, second_rail_up): UCX pairs
lanes by that order, and a pair across the rails once put both lanes on one rail (1.0x in CI)."""
from __future__ import annotations

import json
import subprocess

import pytest

from support import clusters
from support.clusters import REPO, VCLUSTER, report_cases, run_env
from conftest import install_prefix
from jitterbench import mpi as mpis

pytestmark = [pytest.mark.vcluster, pytest.mark.skipif(clusters.why_not() is not None, reason=clusters.why_not() or "")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from clusters.cluster(tmp_path_factory, "2", "--rails", "2", "--link-rate", "100mbit")


def test_a_third_rail_or_a_torus_with_rails_is_refused_in_one_line(cluster):
    for args, message in ((["--rails", "3"], "--rails must be 1 or 2, not '3'"),
                          (["--rails", "2", "--torus", "2"],
                           "--rails and --torus do not combine (the torus has its own links)")):
        proc = subprocess.run(["bash", str(VCLUSTER), "up", "2", *args], env=cluster, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode != 0 and proc.stderr.strip().splitlines() == [f"vcluster: error: {message}"]
    status = subprocess.run(["bash", str(VCLUSTER), "status"], env=cluster, capture_output=True, text=True, timeout=60)
    assert status.stdout.startswith("rails: eth0 eth1 at 100mbit each way")


def test_two_rails_carry_a_large_message_twice_as_fast(cluster, tmp_path):
    prefix = install_prefix(tmp_path / "prefix", clusters.TRANSPORT_VARIANTS)
    out = tmp_path / "out"
    args = ["-c", "reframe_checks/pingpong.py", "-n", "PingPongCheck", "-P", "nodes=2", "-P", "tasks_per_node=1",
            "-P", "eager_limit=default", "-P", "distribution=block", "-P", "rails=1,2", "-P", "sweep=sizes", "-S", "modes=send",
            "-S", "messages=1", "-S", "msg_sizes=8,1048576", "-S", "calls=30",
            "-p", "^(openmpi|openmpi-ucx|mpich)$"]
    proc = subprocess.run(clusters.reframe_command("vcluster", *args), cwd=REPO,
                          env={**run_env(cluster, out), "JB_PREFIX": str(prefix / "{environ}")},
                          capture_output=True, text=True, timeout=900)
    cases = [c for c in report_cases(out) if c["result"] != "skip"]
    assert proc.returncode == 0 and cases, proc.stdout[-3000:]
    # the large message's time is the link rate's (the emulated links): its median over calls.
    # The small one's is this machine's software path (about 20 us), which other processes on its
    # two cores stretch: its ratio, once asserted within 1.6x, came out 2.0x in a CI run (MPICH,
    # the fastest of 30 calls), and is not asserted: a speed on two shared cores.
    median = {}
    for case in cases:
        (doc,) = [p for p in (out / "output").rglob("pingpong.json") if f"/{case['environ']}/{case['short_name']}" in str(p)]
        for r in json.loads(doc.read_text())["results"]:
            key = (case["environ"], case["rails"], r["size"])
            median[key] = r["p50_us"]
    environs = {"openmpi", "openmpi-ucx"} | ({"mpich"} if mpis.MPICH.available() else set())
    assert {e for e, _, _ in median} == environs
    for environ in environs:
        large = median[(environ, 1, 1048576)] / median[(environ, 2, 1048576)]
        assert 1.7 <= large <= 2.3, (environ, large, median)
