"""The cases ReFrame lists from the checks (nothing measured): node counts and tasks from the
partition, the studies' cases, the quick mode; folder variables refused before anything is listed."""
from __future__ import annotations

import os
import subprocess

import pytest

from conftest import folder
from jitterbench import benchmarks
from jitterbench import mpi as mpis
from support.reframe_runs import REFRAME, REPO, SUBSET, listing, params

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


@pytest.mark.reframe
def test_node_counts_and_tasks_per_node_come_from_the_partition():
    """c1a: 120 nodes of 32 cores; poe places ranks block-wise only."""
    halo = [params(name) for name, _ in listing("--system", "c1a", "-c", "reframe_checks/halo.py")]
    assert {int(p["nodes"]) for p in halo} == {1, 2, 4, 8, 16, 32, 64, 120}
    assert {int(p["tasks_per_node"]) for p in halo} == {1, 2, 16, 32}
    assert {p["distribution"] for p in halo} == {"block"}


@pytest.mark.reframe
def test_every_check_of_a_large_machine_is_listed():
    """c1a (120 nodes of 32 cores): every record's check that needs no topology, CongestionCheck
    too, whose `rounds` once clashed with the suite's and kept ReFrame from loading its file."""
    checks = {name.split()[0] for name, _ in listing("--system", "c1a")}
    assert checks >= {d.check for d in benchmarks.ALL if set(d.features) <= {"mpi"}} >= {"CongestionCheck"}


@pytest.mark.reframe
def test_the_build_stage_installs_for_every_environment_a_check_runs_under():
    """The pipeline's acceptance stage takes each environment's binaries from the build stage's
    install/<environ>; on the virtual cluster that is also the transports' variants (openmpi-ucx,
    mpich-ofi), whose checks failed at 'test -x install/openmpi-ucx/bin/jb-halo' when the build
    stage installed for the plain MPIs only."""
    installed = {where for _, where in listing("--system", "vcluster", "-c", "reframe_checks/install.py",
                                               "-S", "install_root=/nonexistent")}
    checked = {where for _, where in listing("--system", "vcluster", "-c", "reframe_checks/halo.py")}
    assert installed == checked and {"vcluster:vc+openmpi-ucx", "vcluster:vc+mpich-ofi"} <= installed


@pytest.mark.reframe
def test_the_study_s_torus_of_three_tasks_a_dimension_one_a_node_is_a_case(tmp_path):
    """Hein, Booth and Bull ran 3 processors per dimension, one per LPAR: 27 nodes of one task
    make a 3 x 3 x 3 torus (MPI_Dims_create), a dry run on c1a's partition of 120 nodes."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(folder(tmp_path / "none")))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "c1a", "-c", "reframe_checks/torus.py",
                           "-n", "TorusCheck", "-P", "nodes=27", "-P", "tasks_per_node=1", "-P", "ndims=3", "-P", "work=0",
                           "-P", "eager_limit=default", "--dry-run"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (script,) = [p for p in (tmp_path / "out" / "stage" / "c1a").rglob("rfm_job.sh") if "TorusCheck" in str(p)]
    line = script.read_text().splitlines()[-1]
    assert line.startswith("sh launches.sh 1 3 - MP_PROCS=27 MP_NODES=27 MP_TASKS_PER_NODE=1 poe ") and " --ndims 3 " in line, line


@pytest.mark.reframe
def test_the_study_s_p6_run_is_a_case_of_c1a(tmp_path):
    """1920 tasks on 120 nodes, as the study ran P6 (16 of its 32 cores a node)."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(folder(tmp_path / "none")))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "c1a", "-c", "reframe_checks/halo.py",
                           "-n", "HaloCheck%nodes=120%tasks_per_node=16%.*%eager_limit=default%placement=row",
                           "--dry-run"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (script,) = (tmp_path / "out" / "stage" / "c1a").rglob("rfm_job.sh")
    assert script.read_text().splitlines()[-1].startswith("sh launches.sh 1 3 - MP_PROCS=1920 MP_NODES=120 MP_TASKS_PER_NODE=16 poe ")


@pytest.mark.reframe
def test_rotate_roles_rotates_them_where_a_case_is_several_launches(tmp_path):
    """-S rotate_roles=1: a case of launches rotates the ranks' roles from launch to launch
    (launches.sh's FIRST: 1 in the first round; '-', the default above, adds no --rank-order);
    jb-pairs, which one launch decides and which names its nodes in the node list's order, keeps '-'."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(folder(tmp_path / "none")))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "c1a", "-c", "reframe_checks/pairs.py",
                           "-c", "reframe_checks/halo.py", "-n", "PairsCheck",
                           "-n", "HaloCheck%nodes=120%tasks_per_node=16%.*%eager_limit=default%placement=row",
                           "-P", "eager_limit=default", "-S", "rotate_roles=1", "--dry-run"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    lines = {}
    for script in (tmp_path / "out" / "stage" / "c1a").rglob("rfm_job.sh"):
        lines.setdefault(script.parent.name.split("_")[0], []).append(script.read_text().splitlines()[-1])
    (halo,) = lines["HaloCheck"]
    assert halo.startswith("sh launches.sh 1 3 1 MP_PROCS=1920 "), halo
    assert lines["PairsCheck"] and all(line.startswith("sh launches.sh 1 3 - ") for line in lines["PairsCheck"]), lines
    assert not any("--rank-order" in line for found in lines.values() for line in found)


@pytest.mark.reframe
def test_quick_mode_runs_every_check_at_two_tasks_a_node_with_the_mpi_s_eager_limit():
    cases = listing("--mode", "quick")
    checks = {name.split()[0] for name, _ in cases}
    # every record's check whose partition features local has (not the contention check's topology)
    # and that runs on its one node (not pairs and congestion)
    assert checks == {d.check for d in benchmarks.ALL if set(d.features) <= {"mpi"} and d.min_nodes == 1}
    assert {"HaloCheck", "PerftestCheck"} <= checks and "ContentionCheck" not in checks
    # perftest uses no MPI: each program once, on this one node, in one environment
    verbs = [(params(n), where) for n, where in cases if n.startswith("PerftestCheck")]
    assert sorted(p["benchmark"] for p, _ in verbs) == ["ib_read_lat", "ib_send_lat", "ib_write_bw"]
    assert {(p["nodes"], p["adapter"]) for p, _ in verbs} == {("1", "0")} and len({w for _, w in verbs}) == 1
    for name, where in cases:
        if name.startswith("PerftestCheck"):
            continue
        p = params(name)
        assert (p["nodes"], p["tasks_per_node"], p["distribution"]) == ("1", "2", "block"), name
        assert p.get("eager_limit", "default") == "default" or name.startswith("EagerCheck"), name
    assert {params(n)["placement"] for n, _ in cases if n.startswith("HaloCheck")} == {"row", "bunched"}
    assert {params(n)["eager_limit"] for n, _ in cases if n.startswith("EagerCheck")} == {"default", "8192"}
    # every environment of the machine, each case once
    environs = {m.name for m in mpis.available()}
    assert {where.split("+")[1] for _, where in cases} == environs
    assert len(cases) == len(set(cases))


@pytest.mark.reframe
@pytest.mark.parametrize("variable", ["JB_PREFIX", "JB_REFERENCE_DIR", "JB_SPACK_VIEWS"])
def test_a_folder_variable_holding_commands_or_naming_nothing_is_one_line_and_runs_none(tmp_path, variable):
    """JB_PREFIX reaches the build's and the job's shell lines, JB_REFERENCE_DIR the checks, JB_SPACK_VIEWS
    the prefixes: a name of $(...), backticks, ; and spaces is refused as JB_OUTPUT's is (it failed later as
    "build job failed", naming no variable), and so is one naming nothing (a views folder that is not there
    ran 0 of 2 and passed; a references folder that is not there was not read): one line naming the
    variable, before ReFrame runs anything, and no command in it runs (issue 44)."""
    hostile = "$(touch X);`touch Y`; touch Z"
    for value in (str(folder(tmp_path / f"p {hostile}")), str(tmp_path / "nothing-here")):
        env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"),
                   **{variable: value + ("/{environ}" if variable == "JB_PREFIX" else "")})
        proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *SUBSET, "-l"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode != 0 and f"jitterbench: {variable}=" in proc.stderr, proc.stdout[-3000:] + proc.stderr
        assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr
    assert not [p for p in tmp_path.rglob("*") if p.name in ("X", "Y", "Z")]
    assert not [p for p in REPO.rglob("*") if p.name in ("X", "Y", "Z") and ".git" not in p.parts]
