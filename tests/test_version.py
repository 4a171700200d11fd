"""The release is written once, in the repository's VERSION file: the Python package (through
pyproject.toml's dynamic version), the command's --version and each CMake build take it there."""
from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

import jitterbench
from jitterbench import cli

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
RELEASE = (REPO / "VERSION").read_text().strip()


def test_the_release_is_one_version_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", RELEASE), RELEASE


def test_the_package_and_the_command_say_the_release(capsys):
    # the installed metadata lags behind VERSION until ci/setup.sh installs the package again
    assert version("jitterbench") == jitterbench.__version__ == RELEASE, "run ci/setup.sh"
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out == f"jitterbench {RELEASE}\n"


def test_every_build_is_configured_with_the_release():
    caches = sorted(REPO.glob("build/*/CMakeCache.txt"))
    if not caches:
        pytest.skip("no build/: run ci/setup.sh")
    for cache in caches:
        (line,) = [l for l in cache.read_text().splitlines() if l.startswith("CMAKE_PROJECT_VERSION:")]
        assert line.split("=", 1)[1] == RELEASE, f"{cache.parent} is configured for {line}: build it again"
