"""The test tiers: pyproject.toml registers each of conftest's TIERS, a test without exactly one
of them stops the collection, naming it (conftest.pytest_collection_modifyitems), and a unit test
that starts a program fails (conftest._unit_tests_start_no_program)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TIERS
from jitterbench import checkout

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.unit
def test_every_tier_is_registered(pytestconfig):
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert TIERS[:2] == ("unit", "process") and set(TIERS) <= registered


@pytest.mark.unit
def test_a_unit_test_starts_no_program_but_asks_git_for_the_commit():
    with pytest.raises(AssertionError, match="a unit test starts true: mark it process"):
        subprocess.run(["true"])
    with pytest.raises(AssertionError, match=r"a unit test starts \S+ -m jitterbench --version"):
        subprocess.run([sys.executable, "-m", "jitterbench", "--version"], capture_output=True)
    with pytest.raises(AssertionError, match="a unit test starts git ls-files"):
        subprocess.run("git ls-files", shell=True, capture_output=True)
    assert checkout.commit()  # git rev-parse, as the references' provenance asks it


@pytest.mark.process
def test_a_test_without_exactly_one_tier_stops_the_collection(tmp_path):
    (tmp_path / "test_x.py").write_text("import pytest\n\n"
                                        "def test_none():\n    pass\n\n"
                                        "@pytest.mark.unit\n@pytest.mark.mpi\ndef test_two():\n    pass\n\n"
                                        "@pytest.mark.unit\ndef test_one():\n    pass\n")
    # this project's settings and its conftest as a plugin, on a folder of its own
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-c", str(REPO / "pyproject.toml"),
                           "--rootdir", str(tmp_path), "--collect-only", "-q", "-m", "unit", str(tmp_path)],
                          env=dict(os.environ, PYTHONPATH=str(REPO / "tests")), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "2 test(s) lack exactly one tier marker" in proc.stderr, proc.stderr
    assert "test_x.py::test_none: none" in proc.stderr and "test_x.py::test_two: mpi, unit" in proc.stderr
    assert "test_one" not in proc.stderr
