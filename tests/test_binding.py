"""Binding (issue 18, item 3): each benchmark records every rank's node and CPU set, says
whether the ranks are bound, and warns when two bound ranks of a node share a CPU."""
import json
import os
import re

import pytest

from conftest import openmpi_with, run_benchmark, run_pinned

pytestmark = pytest.mark.mpi

ARGS = ["--pattern", "c", "--size", "64", "--calls", "20"]


def placement(run):
    assert run.returncode == 0, run.stderr
    return run.doc["metadata"]["placement"]


def cpu_sets_line(stdout):
    return re.search(r"^# cpu_sets: (.*)$", stdout, re.M).group(1)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="binding two ranks to cores of their own needs 2 CPUs")
def test_the_mpis_binding_variables_give_each_rank_a_core_of_its_own(mpi, tmp_path):
    run = run_benchmark(mpi, 2, ARGS, json_path=tmp_path / "h.json", env=mpi.bind_vars)
    where = placement(run)
    assert where["binding"] == "cores", (mpi.bind_vars, where)
    assert where["nodes_bound"] == 1 and where["nodes_sharing_cpus"] == 0
    (node0, cpus0), (node1, cpus1) = where["rank_node_cpus"]
    assert node0 == node1 == 0 and cpus0 != cpus1 and cpus0.isdigit() and cpus1.isdigit()
    assert re.search(r"^# binding: cores \(rank 0 on CPUs \d+; 1 of 1 node\(s\) bound\)$", run.stdout, re.M)
    assert cpu_sets_line(run.stdout) == f"n0:{cpus0} n0:{cpus1}"
    assert "share a core" not in run.stdout


@pytest.fixture
def openmpi():
    return openmpi_with("halo")


def test_unbound_ranks_are_said_to_be_unbound(openmpi, tmp_path):
    if len(os.sched_getaffinity(0)) != os.cpu_count():
        pytest.skip("this test's own CPU mask is narrower than the machine: its ranks inherit it")
    run = run_benchmark(openmpi, 2, ARGS, json_path=tmp_path / "h.json",
                        env={"OMPI_MCA_hwloc_base_binding_policy": "none"})
    where = placement(run)
    every = f"0-{os.cpu_count() - 1}" if os.cpu_count() > 1 else "0"
    assert where["binding"] == "none" and where["nodes_bound"] == 0
    assert where["rank_node_cpus"] == [[0, every], [0, every]]
    assert cpu_sets_line(run.stdout) == f"n0:{every} n0:{every}"


def test_two_ranks_squeezed_onto_one_cpu_are_warned_about(openmpi, tmp_path):
    cpu = sorted(os.sched_getaffinity(0))[0]
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: a mask of one CPU is no narrower than the machine, so nothing is bound")
    run = run_pinned(openmpi, 2, cpu, [openmpi.binary("halo"), *ARGS, "--json", tmp_path / "h.json"])
    assert run.returncode == 0, run.stderr
    where = json.loads((tmp_path / "h.json").read_text())["metadata"]["placement"]
    assert where["binding"] == "shared" and where["nodes_sharing_cpus"] == 1
    assert where["rank_node_cpus"] == [[0, str(cpu)], [0, str(cpu)]]
    assert "# warning: ranks 0 and 1 are bound to a common CPU on one node: they share a core" in run.stdout
