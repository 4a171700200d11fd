"""The release is written once, in the repository's VERSION file: the Python package (through
pyproject.toml's dynamic version), the command's --version and each CMake build take it there."""
from __future__ import annotations

import os
import re
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

import jitterbench
from jitterbench import cli


REPO = Path(__file__).resolve().parents[1]
RELEASE = (REPO / "VERSION").read_text().strip()


@pytest.mark.unit
def test_the_release_is_one_version_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", RELEASE), RELEASE


@pytest.mark.unit
def test_the_package_and_the_command_say_the_release(capsys):
    # the installed metadata lags behind VERSION until ci/setup.sh installs the package again
    assert version("jitterbench") == jitterbench.__version__ == RELEASE, "run ci/setup.sh"
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out == f"jitterbench {RELEASE}\n"


@pytest.mark.unit
def test_every_build_is_configured_with_the_release():
    caches = sorted(REPO.glob("build/*/CMakeCache.txt"))
    if not caches:
        pytest.skip("no build/: run ci/setup.sh")
    for cache in caches:
        (line,) = [l for l in cache.read_text().splitlines() if l.startswith("CMAKE_PROJECT_VERSION:")]
        assert line.split("=", 1)[1] == RELEASE, f"{cache.parent} is configured for {line}: build it again"


@pytest.mark.process
def test_each_build_stamps_the_commit_it_is_built_from(tmp_path):
    """src/version.cmake runs at every build: after a pull, `make` alone stamps the new commit
    (taken at configure time, results carried the old one); it leaves the header alone while
    nothing changed, so nothing recompiles."""
    checkout, out = tmp_path / "checkout", tmp_path / "jb_version.h"
    checkout.mkdir()

    def git(*args):
        return subprocess.run(["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    def stamp(git_path="git"):
        subprocess.run(["cmake", f"-DSOURCE={checkout}", "-DRELEASE=1.2.3", f"-DGIT={git_path}", f"-DOUT={out}",
                        "-P", str(REPO / "src" / "version.cmake")], check=True)
        return out.read_text()

    git("init", "-q")
    (checkout / "a").write_text("1")
    git("add", "a")
    git("commit", "-q", "-m", "one")
    assert stamp() == f'#define JB_VERSION "1.2.3+{git("rev-parse", "--short", "HEAD")}"\n'
    os.utime(out, ns=(0, 0))  # a rewrite would give it the time of day, whatever the clock's tick
    stamp()
    assert out.stat().st_mtime_ns == 0
    (checkout / "a").write_text("2")
    assert stamp().endswith('-dirty"\n')
    git("commit", "-q", "-am", "two")
    assert stamp() == f'#define JB_VERSION "1.2.3+{git("rev-parse", "--short", "HEAD")}"\n'
    assert stamp(git_path="") == '#define JB_VERSION "1.2.3"\n'
