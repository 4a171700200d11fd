"""The virtual Slurm cluster (ci/vcluster/vcluster.sh) for tests: bring-up and
tear-down, and ReFrame runs on it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[2]
VCLUSTER = REPO / "ci" / "vcluster" / "vcluster.sh"
REFRAME = Path(sys.executable).with_name("reframe")
# the cluster's transport variants of its MPIs (systems/sites/vcluster.py VARIANTS)
TRANSPORT_VARIANTS = ("openmpi-ucx", "mpich-ofi")


def why_not():
    """Why the virtual cluster cannot run here, or None."""
    if os.geteuid() != 0:
        return "the virtual cluster needs root"
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        return "this machine cannot create network namespaces"
    if not mpis.OPENMPI.available():
        return "Open MPI is not installed"
    return None


def cluster(tmp_path_factory, *up_args):
    """Generator for a module fixture: the cluster up (vcluster.sh up *up_args), then down.
    Yields the environment that reaches it."""
    state = tmp_path_factory.mktemp("vcluster")
    env = dict(os.environ, JB_VCLUSTER_DIR=str(state), SLURM_CONF=str(state / "slurm.conf"))
    up = subprocess.run(["bash", str(VCLUSTER), "up", *up_args], env=env, capture_output=True, text=True,
                        timeout=300)
    if up.returncode != 0:  # leave nothing running: a fixture that fails here gets no teardown
        subprocess.run(["bash", str(VCLUSTER), "down"], env=env, capture_output=True, timeout=120)
    assert up.returncode == 0, up.stderr
    yield env
    down = subprocess.run(["bash", str(VCLUSTER), "down"], env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    assert not state.exists()


def reframe_command(system, *args):
    return [str(REFRAME), "-C", "systems/config.py", "--system", system, *args, "-r"]


def run_env(cluster_env, out, references=None):
    """ReFrame's environment: output under out; references from the folder given, else none."""
    if references is None:
        references = out / "no-references"  # then the suite's speed is not what a test asserts
        references.mkdir(parents=True, exist_ok=True)
    # poll Slurm at least twice a second: the jobs here take seconds, not hours
    return dict(cluster_env, JB_OUTPUT=str(out), JB_REFERENCE_DIR=str(references), RFM_POLL_RATE_MIN="2")


def failures(cases, stdout):
    """An assertion's message for a run whose cases should all have passed: each failed case's
    name, phase and reason first (CI shows a failing test's message cut short, and ReFrame's
    summary names the reason last), then the output's tail."""
    failed = [f"{c['display_name']} @{c['system']}:{c['partition']}+{c['environ']}: {c.get('fail_phase')}: "
              f"{c.get('fail_reason')}" for c in cases if c["result"] == "fail"]
    return "\n".join([*failed, stdout[-2000:]])


def report_cases(out):
    """The last outcome of every test case: a retried case's retry replaces its failure."""
    report = json.loads((out / "report.json").read_text())
    last = {(c["name"], c["environ"]): c for run in report["runs"] for c in run["testcases"] if not c.get("fixture")}
    return list(last.values())
