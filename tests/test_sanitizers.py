"""The ASan+UBSan build (cmake -DJB_SANITIZE=ON, built by tests/support/fuzz_benchmarks.py into
build/asan-openmpi): the C unit tests, and one ordinary run of every benchmark on 1 and
2 ranks, without a sanitizer report.  Hostile options run it in tests/test_hostile_c.py
and tests/test_fuzz.py."""
from __future__ import annotations

import subprocess

import pytest

from support import fuzz_benchmarks as fz
from conftest import run_benchmark

pytestmark = pytest.mark.fuzz

ASAN = fz.sanitized_mpi()

# one ordinary run each, small enough for a sanitized build; {np} is the rank count.
# A benchmark not listed here runs with --calls 3 alone.
NORMAL = {
    "halo": ["--calls", "5", "--validate", "--series", "--trace-tasks", "0"],
    "pingpong": ["--calls", "3", "--size", "8,4K", "--messages", "1,4", "--validate", "--series"],
    "torus": ["--calls", "3", "--size", "1K", "--work", "1K", "--validate", "--series"],
    "jacobi": ["--calls", "3", "--local", "6x5", "--trials", "2", "--validate", "--series"],
    "alltoall": ["--calls", "3", "--size", "1K", "--series", "--samples", "{tmp}/samples.txt"],
    "eager": ["--delay", "1000", "--repeats", "1", "--max-size", "4K"],
    "contention": ["--dims", "{np}", "--calls", "3", "--size", "8:1K", "--validate"],
    "noise": ["--duration", "0.1", "--calls", "2", "--trace", "{tmp}/trace.txt"],
    "pairs": ["--calls", "6", "--windows", "6", "--passes", "1", "--bandwidth-size", "4K", "--tasks-per-node", "1",
              "--matrix", "{tmp}/matrix.csv"],
    "congestion": ["--calls", "4", "--rounds", "2", "--tasks-per-node", "1", "--congestors", "none"],
}
# on one rank these refuse, as they should: the refusal is what runs under the sanitizers
ONE_RANK_REFUSAL = {"pingpong": "needs an even number of tasks", "eager": "needs at least 2 tasks",
                    "contention": "needs at least 2 nodes", "congestion": "the canaries need 2 nodes"}


@pytest.fixture(scope="module")
def asan_build():
    return fz.require_sanitized_build()


def test_the_build_is_instrumented(asan_build):
    for binary in [*asan_build.glob("jb-*"), *asan_build.glob("test_*")]:
        data = binary.read_bytes()
        assert b"__asan_init" in data and b"__ubsan_handle" in data, binary


def test_unit_tests_pass_under_asan_and_ubsan(asan_build):
    # src/CMakeLists.txt gives these tests their ASAN_OPTIONS (with leak checks: no MPI in them)
    done = subprocess.run(["ctest", "--test-dir", str(asan_build), "--output-on-failure"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert done.returncode == 0, done.stdout
    assert not fz.SANITIZER_REPORT.search(done.stdout), done.stdout
    assert "tests passed" in done.stdout


@pytest.mark.parametrize("np", [1, 2])
@pytest.mark.parametrize("benchmark", fz.benchmarks())
def test_an_ordinary_run_is_clean(asan_build, tmp_path, benchmark, np):
    args = [a.format(np=np, tmp=tmp_path) for a in NORMAL.get(benchmark, ["--calls", "3"])]
    run = run_benchmark(ASAN, np, args, json_path=tmp_path / "r.json", benchmark=benchmark, timeout=120)
    assert not fz.SANITIZER_REPORT.search(run.stderr), run.stderr
    if np == 1 and benchmark in ONE_RANK_REFUSAL:
        assert run.returncode != 0 and run.stderr.splitlines() == run.error_lines(benchmark), run.stderr
        assert ONE_RANK_REFUSAL[benchmark] in run.stderr
        return
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert run.doc["benchmark"] == benchmark and run.results()
    if benchmark == "alltoall" and np == 2:  # one task has no partner: no exchange, no sample
        assert (tmp_path / "samples.txt").read_text().split()
