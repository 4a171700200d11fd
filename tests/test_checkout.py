"""The checkout a command works on (jitterbench/checkout.py): the one its configuration names,
else the one it is run from, else the one it was installed from; a package installed with
`pip install .` works from inside a checkout and is refused in one line elsewhere."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import checkout_copy

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")


def jitterbench(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "jitterbench", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def digest(folder):
    """Every file under folder and its content's hash: what a command changed there."""
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in Path(folder).rglob("*")
            if p.is_file() and ".git" not in p.parts}


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    """A second checkout, outside this one's folder: a user's fresh clone beside the one the
    package was installed from."""
    return checkout_copy(tmp_path_factory.mktemp("clone"))


@pytest.mark.process
def test_the_checkout_is_the_folder_run_from_or_above_it(other):
    probe = "from jitterbench import checkout; print(checkout.root(), checkout.output(), checkout.results_store())"
    for cwd in (other, other / "docs"):
        out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=60,
                             env={k: v for k, v in os.environ.items() if k not in ("JB_OUTPUT", "RFM_SQLITE_DB_FILE")})
        assert out.stdout.split() == [str(other), str(other / "output"), str(other / "output" / "results.db")]


@pytest.mark.process
def test_outside_any_checkout_the_installed_one_is_used_and_named(tmp_path):
    out = jitterbench("history", "--store", str(tmp_path / "none.db"), cwd=tmp_path)
    probe = subprocess.run([sys.executable, "-c", "from jitterbench import checkout; print(checkout.root())"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == str(REPO)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "none.db" in out.stderr


@pytest.mark.unit
def test_a_folder_that_is_no_checkout_is_refused_in_one_line(tmp_path):
    from jitterbench import checkout
    with pytest.raises(checkout.CheckoutError, match="not a jitterbench checkout"):
        checkout.use(tmp_path)


@pytest.mark.process
def test_site_new_and_history_work_on_the_clone_they_run_in_and_name_it(other):
    ours = digest(REPO / "systems")
    made = jitterbench("site", "new", "beside", "--hostname", "^beside$", "--scheduler", "slurm", "--launcher",
                       "srun", "--mpi", "openmpi", "--network", "ib", "--partition", "cpu:4:8", cwd=other / "docs")
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0] == f"jitterbench site new: checkout {other}"
    assert (other / "systems" / "sites" / "beside.py").is_file()
    assert digest(REPO / "systems") == ours  # nothing written into the checkout the package came from
    # the clone's store, which no run has written yet: named, in one line
    history = jitterbench("history", cwd=other, env={"JB_OUTPUT": "", "RFM_SQLITE_DB_FILE": ""})
    assert history.returncode == 2 and history.stderr.count("\n") == 1
    assert history.stderr.startswith(f"jitterbench: error: {other}/output/results.db: no results store there")


@pytest.fixture(scope="module")
def installed(other, tmp_path_factory):
    """The package as `pip install .` leaves it: a copy in a folder of its own (its
    dependencies those of this environment), which Python finds before the editable one.
    Built from the clone: setuptools writes its build/ in the folder it builds."""
    target = tmp_path_factory.mktemp("site-packages")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                           str(other)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"pip install . failed: {proc.stderr[-2000:]}")
    return {"PYTHONPATH": str(target)}


@pytest.mark.reframe
def test_a_non_editable_install_plans_and_builds_from_the_checkout_it_is_given(installed, other, tmp_path):
    where = subprocess.run([sys.executable, "-c", "import jitterbench; print(jitterbench.__file__)"],
                           capture_output=True, text=True, env={**os.environ, **installed}, cwd=tmp_path)
    assert where.stdout.startswith(installed["PYTHONPATH"])  # the copy, not the editable checkout
    # outside any checkout, a command that needs one says what to do in one line
    refused = jitterbench("site", "new", "x", "--hostname", "x", "--scheduler", "slurm", "--launcher", "srun",
                          "--mpi", "openmpi", "--network", "ib", "--partition", "cpu:4:8", cwd=tmp_path, env=installed)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "not inside a jitterbench checkout" in refused.stderr and "pip install -e" in refused.stderr
    # a ReFrame run of the clone's configuration builds the clone's sources (ReFrame's --dry-run
    # writes the build script and runs nothing)
    out = tmp_path / "out"
    env = {**os.environ, **installed, "JB_OUTPUT": str(out)}
    proc = subprocess.run([str(REFRAME), "-C", str(other / "systems" / "config.py"), "--system", "local",
                           "-n", "HaloCheck", "--mode", "quick", "-p", "openmpi", "--dry-run"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    scripts = list(out.rglob("JitterbenchBuild*/rfm_build.sh"))
    assert scripts and all(f"cmake -S {other}/src " in s.read_text() for s in scripts), scripts
