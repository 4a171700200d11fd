"""Fuzzed command lines (tests/support/fuzz_benchmarks.py) against the ASan+UBSan build: none may
crash, hang, trip a sanitizer, or end without exactly one 'jb-NAME: error:' line."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from support import fuzz_benchmarks as fz

SEED = 16         # issue 16; a failure names its case: --seed 16 --case N replays it
EXECUTIONS = 6000  # at most: the time budget ends the session first on most machines
SECONDS = 30      # starts of new cases stop after this (CI's 40 minutes); longer: tests/support/fuzz_benchmarks.py
WORKERS = 4       # a sanitized singleton waits more than it computes (~0.05 s CPU in ~0.2 s)


@pytest.fixture(scope="module")
def asan_build():
    return fz.require_sanitized_build()


@pytest.mark.fuzz
def test_fuzz(asan_build, tmp_path):
    s = fz.fuzz(asan_build, SEED, EXECUTIONS, SECONDS, WORKERS, tmp=tmp_path)
    print(s.text(most=5))
    # the cases reach both the runs and the refusals, or the driver tests nothing
    assert s.outcomes.get("ok", 0) > 0 and s.outcomes.get("refused", 0) > 0, s.text()
    assert all(s.watchdog.values()), f"not every benchmark takes --timeout: {s.watchdog}"
    assert not s.failures and not s.errors, s.text()


@pytest.mark.fuzz
def test_a_relative_build_path_runs_cases_and_a_raising_worker_fails_the_session(asan_build, monkeypatch, capsys):
    """As the docstring shows it (--build build/asan-openmpi, relative): cases run; and a session
    whose worker raised, having run nothing, exits 1 saying so."""
    relative = os.path.relpath(asan_build)
    assert fz.main(["--build", relative, "--seed", "3", "--seconds", "5", "--workers", "1"]) == 0
    assert re.search(r": [1-9]\d* executions", capsys.readouterr().out)

    def broken(*args, **kwargs):
        raise OSError("no room")
    monkeypatch.setattr(fz, "judge", broken)
    assert fz.main(["--build", relative, "--seed", "3", "--seconds", "5", "--workers", "1"]) == 1
    assert "WORKER ERROR: OSError: no room" in capsys.readouterr().out


@pytest.mark.fuzz
def test_the_driver_knows_every_documented_option(asan_build):
    """Each option --help names is in the getopt_long table the driver reads."""
    for benchmark in fz.benchmarks():
        cmd, env = fz.launch(fz.mpis.OPENMPI, 1, asan_build / f"jb-{benchmark}", ["--help"], True)
        res = fz.execute(cmd, env, 60)
        assert res.returncode == 0, res.stderr
        documented = set(re.findall(r"^\s+--([a-z][\w-]*)|, --([a-z][\w-]*)", res.stdout, re.M))
        documented = {a or b for a, b in documented}
        assert documented and documented <= set(fz.read_options(benchmark)), (benchmark, documented)


# ---- the judge on made-up runs: each check can fail -------------------------------------

OPTIONS = fz.read_options("halo")


def judged(stderr="", returncode=2, stdout="", argv=("--calls", "2"), may_run_long=False, tmp_path=None):
    case = fz.Case(0, "halo", 1, list(argv), may_run_long)
    return fz.judge(case, list(argv), OPTIONS, fz.Result(returncode, stdout, stderr, 1.0), tmp_path, True)


@pytest.mark.parametrize("kw,outcome", [
    (dict(stderr="jb-halo: error: --calls: 'x' is not a whole number\n"), "refused"),
    (dict(returncode=0, stdout="JB_RESULT benchmark=halo\n"), "ok"),
    (dict(returncode=0, stdout="usage: ...\n"), "no-results"),
    (dict(returncode=None, may_run_long=True, stderr=""), "failure"),  # --timeout should have ended it
    (dict(stderr="jb-halo: error: --timeout 10 s passed in set-up after 0 timed call(s)\n", may_run_long=True), "long"),
])
@pytest.mark.unit
def test_judge_accepts(tmp_path, kw, outcome):
    assert judged(tmp_path=tmp_path, **kw)[0] == outcome


@pytest.mark.parametrize("kw,problem", [
    (dict(returncode=None), "hang"),
    (dict(returncode=-11, stderr="jb-halo: error: x\n"), "signal 11"),
    (dict(returncode=134), "signal 6"),
    (dict(stderr="decomp.c:19:15: runtime error: signed integer overflow\n    #0 0x1 in f /r/src/halo/decomp.c:19\n"
                 "jb-halo: error: x\n"), "sanitizer: decomp.c:19:15: runtime error"),
    (dict(returncode=1, stderr="==1==ERROR: AddressSanitizer: heap-buffer-overflow\n"), "AddressSanitizer"),
    (dict(stderr="jb-halo: error: one\njb-halo: error: two\n"), "not one"),
    (dict(stderr="Traceback (most recent call last):\n  File x\n"), "not one"),
    (dict(stderr="jb-torus: error: x\n"), "not one"),
    (dict(stderr=""), "not one"),
    (dict(returncode=0, stderr="warning\n", stdout="JB_RESULT x\n"), "exit 0 with stderr"),
    (dict(stderr="jb-halo: error: unknown option '2' (see --help)\n", argv=("--calls", "2", "-ZZ")), "names '2'"),
    (dict(stderr="jb-halo: error: unknown option '-Z' (see --help)\n", argv=("-ZZ",)), "names '-Z'"),
    (dict(stderr="jb-halo: error: unknown option '--series' (see --help)\n", argv=("--series",)), "names"),
    (dict(stderr="jb-halo: error: --timeout 10 s passed in set-up after 0 timed call(s)\n"), "--timeout"),
])
@pytest.mark.unit
def test_judge_finds(tmp_path, kw, problem):
    outcome, found = judged(tmp_path=tmp_path, **kw)
    assert outcome == "failure" and problem in found, found


@pytest.mark.unit
def test_judge_finds_an_output_left_by_a_refused_run(tmp_path):
    (tmp_path / "ok.json.tmp.123").write_text("{")
    assert "left temporary files" in judged(tmp_path=tmp_path, stderr="jb-halo: error: x\n")[1]


@pytest.mark.unit
def test_cases_are_the_same_for_a_seed(tmp_path):
    first = fz.Fuzzer(7, fz.Fixtures(tmp_path), {}, fz.benchmarks())
    again = fz.Fuzzer(7, first.fixtures, {}, fz.benchmarks())
    assert [first.case(i).key() for i in range(50)] == [again.case(i).key() for i in range(50)]
    other = fz.Fuzzer(8, first.fixtures, {}, fz.benchmarks())
    assert [first.case(i).key() for i in range(50)] != [other.case(i).key() for i in range(50)]


@pytest.mark.process
def test_a_killed_run_takes_its_children_along(tmp_path):
    pidfile = tmp_path / "child"
    res = fz.execute(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], {}, 1)
    assert res.returncode is None
    stat = Path(f"/proc/{int(pidfile.read_text())}/stat")
    time.sleep(0.2)
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"  # gone, or dead unreaped


@pytest.mark.parametrize("args,value", [
    (["--json", "a", "--json=b"], "b"),
    (["--jso", "a"], "a"),             # a prefix getopt_long takes
    (["--size", "--json", "x"], None),  # "--json" is --size's value
    (["--", "--json", "a"], None),
    (["--json"], None),
])
@pytest.mark.unit
def test_the_driver_reads_the_last_value_as_getopt_does(args, value):
    assert fz.last_value(args, "json", OPTIONS) == value
