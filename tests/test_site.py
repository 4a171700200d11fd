"""A site's whole journey on the virtual Slurm cluster (ci/vcluster/vcluster.sh), the README's
way: `jitterbench site new` pointed at the cluster's Slurm (its squeue scheduler: the cluster
keeps no accounting), srun and its partition; the quick mode, narrowed to the ping-pong check;
the table of the run.  All in a copy of the checkout, where `git status` then shows the site's
files and nothing else.  Needs root and network namespaces; elsewhere it skips and says why.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from support import clusters
from conftest import checkout_copy, install_prefix
from jitterbench import mpi as mpis

pytestmark = [pytest.mark.vcluster,
              pytest.mark.skipif(clusters.why_not() is not None, reason=clusters.why_not() or "")]

NODES = 2


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from clusters.cluster(tmp_path_factory, str(NODES))


def jitterbench(copy, env, *args):
    """The command of the copy's own package (python -m, run there), as a site runs it."""
    return subprocess.run([sys.executable, "-m", "jitterbench", *args], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_site_made_by_the_command_runs_the_quick_mode_on_slurm_and_tables_it(cluster, tmp_path):
    if not mpis.OPENMPI.binary("pingpong").exists():
        pytest.skip("Open MPI's jb-pingpong is not built (run ci/setup.sh)")
    started = time.monotonic()
    copy = checkout_copy(tmp_path / "checkout")
    out = tmp_path / "out"
    env = {**clusters.run_env(cluster, out), "JB_PREFIX": str(install_prefix(tmp_path / "prefix") / "{environ}")}

    made = jitterbench(copy, env, "site", "new", "journey", "--scheduler", "squeue", "--launcher", "srun",
                       "--mpi", "openmpi", "--network", "tcp", "--partition", f"vc:{NODES}:2")
    print(made.stdout)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1].startswith("next: fill in the lines marked SITE")
    # what the site fills in here: its nodes share this machine's two cores, so no binding
    module = copy / "systems" / "sites" / "journey.py"
    assert module.read_text().count('"binding": "cores"') == 1
    module.write_text(module.read_text().replace('"binding": "cores"', '"binding": "none"', 1))

    # the quick mode, the ping-pong check only: 2 nodes (its smoke test's count), with each distribution
    proc = subprocess.run(clusters.reframe_command("journey", "--mode", "quick", "-n", "^PingPongCheck",
                                                   "--max-retries=1"),
                          cwd=copy, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = clusters.report_cases(out)
    ran = [c for c in cases if c["result"] != "skip"]
    assert ran and all(c["result"] == "pass" for c in ran), clusters.failures(ran, proc.stdout)
    assert {(c["system"], c["partition"], c["environ"]) for c in ran} == {("journey", "vc", "openmpi")}
    assert sorted((c["nodes"], c["distribution"]) for c in ran) == [(2, "block"), (2, "cyclic")]
    # Slurm placed the two-node jobs on two nodes, and Open MPI said it went over TCP between them
    two = [c for c in ran if c["nodes"] == 2]
    assert all(sorted(c["node_list"].split(",")) == ["node1", "node2"] for c in two), two
    assert all("pml=ob1 btl=" in c["transport"] and "tcp" in c["transport"] for c in two), two

    table = jitterbench(copy, env, "table", str(out / "report.json"))
    print(table.stdout)
    assert table.returncode == 0, table.stderr
    # the verdict: one line for the check under its MPI, every case passed but none judged (no references yet)
    (verdict,) = [line.split() for line in table.stdout.splitlines() if line.startswith("PingPongCheck")]
    assert verdict[1:5] == ["openmpi", "not", "judged", f"{len(ran)}/{len(ran)}"], table.stdout

    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy,
                            capture_output=True, text=True, check=True).stdout
    assert sorted(status.splitlines()) == ["?? systems/sites/journey.py", "?? systems/sites/journey/definitions.yaml",
                                           "?? systems/sites/journey/packages.yaml"], status
    print(f"the site's journey: {time.monotonic() - started:.0f} s, {len(ran)} test cases "
          f"({json.dumps(sorted((c['nodes'], c['distribution']) for c in ran))})")
