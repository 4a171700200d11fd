"""Hostile options of issue 16, one regression case each: the run is refused before it
starts (no result printed, no results file), with stderr exactly one line
'jb-NAME: error: ...' naming the problem, and no hang.  They run the ASan+UBSan build (tests/support/fuzz_benchmarks.py): a refusal that
corrupts memory on its way out fails too, and a run that would take the node's memory
ends at the sanitizer's RSS cap instead."""
from __future__ import annotations

import os
import socket

import pytest

from support import fuzz_benchmarks as fz
from conftest import run_benchmark

pytestmark = pytest.mark.fuzz

ASAN = fz.sanitized_mpi()

# (benchmark, ranks, options, what the one error line must hold); {tmp} is the test's
# folder, {fifo} a FIFO there, {topology} a topology file whose dims product wraps 64 bits
CASES = [
    ("contention", 2, ["--topology", "{topology}"], "line 1: shape '65536x65536x65536x65536'"),
    ("contention", 2, ["--dims", "65536x65536x65536"], "--dims: shape '65536x65536x65536'"),
    ("torus", 2, ["--dims", "65536x65536x65536"], "--dims: shape '65536x65536x65536'"),
    ("alltoall", 2, ["--size", "9223372036854775808"], "--size: 9223372036854775808 bytes"),
    # 2 GiB to the one task: one over what an MPI count (an int) can carry
    ("alltoall", 1, ["--size", "2147483648"], "--size: 2147483648 bytes"),
    ("torus", 2, ["--ndims", "4", "--size", "256M"], "--ndims x --size"),
    ("halo", 2, ["--block", "1048576x1048576"], "--block: shape '1048576x1048576'"),
    ("halo", 2, ["--placement", "bunched", "--block", "1048576x1048576"], "--block: shape '1048576x1048576'"),
    ("torus", 2, ["--work", "9223372036854775807"], "--work"),
    ("halo", 2, ["--inject", "1:inf"], "--inject wait (us): 'inf' is not a finite number"),
    ("halo", 2, ["--inject", "1:nan"], "--inject wait (us): 'nan' is not a finite number"),
    ("halo", 2, ["--inject", "1:5:-1"], "--inject wait's standard deviation (us): -1 is out of range"),
    ("halo", 2, ["--inject", "1:5:1:1"], "--inject: '1:5:1:1' is not P:US or P:US:SD"),
    ("halo", 2, ["--inject", "1:5", "--inject-by", "nap"], "--inject-by: 'nap' is not spin or sleep"),
    ("alltoall", 2, ["--inject", "1:5"], "--inject delays the pairwise exchanges: give --method pairwise"),
    ("alltoall", 2, ["--procs", "2,3"], "--procs: 3 is out of range (2 to 2)"),
    ("contention", 2, ["--topology", "{fifo}"], "--topology: '{fifo}' is not a regular file"),
    ("contention", 2, ["--topology", "{tmp}"], "--topology: '{tmp}' is not a regular file"),
    ("halo", 2, ["--json", ""], "--json: an empty file name"),
    ("halo", 2, ["--json", "{tmp}"], "--json: '{tmp}' is a folder"),
    ("alltoall", 2, ["--samples", "/proc/version"], "--samples: cannot write '/proc/version'"),
    ("halo", 2, ["--calls", "2", "-ZZ"], "unknown option '-ZZ'"),
    ("halo", 2, ["--calls", " 5"], "--calls: ' 5' is not a whole number"),
    ("halo", 2, ["--calls", "5 "], "--calls: '5 ' is not a whole number"),
    ("halo", 2, ["--size", " -1"], "--size: ' -1' is not a size"),
    # default --messages 1..64 of 1 GiB each way: refused before allocating, naming both
    ("pingpong", 2, ["--size", "1G"], "--messages x --size"),
    ("pingpong", 2, ["--size", "1G"], "137438953"),
    ("pingpong", 2, ["--messages", "1", "--total", "9223372036854775807"], "--total"),
    # --total 1G with the default --messages: the error names the option given, --total
    ("pingpong", 2, ["--total", "1G"], "--total"),
    ("torus", 2, ["--work", "4G"], "--work"),
    # calls x trials past what one result may time: refused before allocating, naming both
    ("torus", 2, ["--calls", "100000000", "--trials", "1000"], "--calls x --trials"),
    # a lattice of 2^40 points a task: refused by the memory check, naming it
    ("jacobi", 2, ["--local", "1048576x1048576"], "--local"),
    ("jacobi", 2, ["--dims", "65536x65536"], "--dims: shape '65536x65536'"),
    # a long option given a value it does not take is named as written (the fuzz's finding)
    ("halo", 2, ["--series="], "'--series"),
    ("halo", 2, ["--help=x"], "'--help"),
    # a short option that is not ASCII: named, not the argument before it
    ("halo", 2, ["--calls", "2", "-é"], "unknown option '-é'"),
    # issue 61: an option given twice is refused, not the last one taken, by every benchmark (one parser)
    *((b, 2, ["--calls", "1", "--calls", "2"], "option '--calls' given twice")
      for b in ("alltoall", "congestion", "contention", "eager", "halo", "jacobi", "noise", "pairs", "pingpong", "torus")),
    ("halo", 2, ["--json", "{tmp}/never.json", "--json", "{tmp}/never.json"], "option '--json' given twice"),
    ("pairs", 2, ["--validate", "--validate"], "option '--validate' given twice"),
    ("halo", 2, ["--size", "8", "--size=8"], "option '--size' given twice"),
    ("pingpong", 2, ["--messages", "1", "--messages", "1"], "option '--messages' given twice"),
    ("eager", 2, ["--repeats", "3", "--repeats", "3"], "option '--repeats' given twice"),
    ("torus", 2, ["--ndims", "1", "--ndims", "1"], "option '--ndims' given twice"),
]


@pytest.fixture(scope="module")
def asan_build():
    return fz.require_sanitized_build()


@pytest.fixture
def paths(tmp_path):
    fifo = tmp_path / "topology.fifo"
    os.mkfifo(fifo)
    topology = tmp_path / "huge.txt"
    topology.write_text(f"dims 65536x65536x65536x65536\n{socket.gethostname()} 0 0 0 0\n")
    return {"tmp": str(tmp_path), "fifo": str(fifo), "topology": str(topology)}


@pytest.mark.parametrize("benchmark,np,args,message", CASES,
                         ids=[f"{b}-np{n}-{' '.join(a)}" for b, n, a, _ in CASES])
def test_hostile_option_is_refused_with_one_line(asan_build, paths, tmp_path, benchmark, np, args, message):
    out = tmp_path / "never.json"
    # the run's own --json, unless the case gives one (an option is given once)
    run = run_benchmark(ASAN, np, [a.format(**paths) for a in args], json_path=None if "--json" in args else out,
                        benchmark=benchmark, timeout=90)
    assert not fz.SANITIZER_REPORT.search(run.stderr), run.stderr
    assert run.returncode != 0 and run.stderr.splitlines() == run.error_lines(benchmark), run.stderr
    assert len(run.error_lines(benchmark)) == 1 and message.format(**paths) in run.stderr, run.stderr
    assert "JB_RESULT" not in run.stdout and not out.exists() and not list(tmp_path.glob("never.json*"))
