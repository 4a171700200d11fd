"""Hostile command lines, files and JB_* values against the `jitterbench` command
(tests/support/fuzz_cli.py): none may hang, trace back, end without one line, or change what it did not
make."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import fuzz_cli as fz

SEED = 31         # issue 31; a failure names its case: python tests/support/fuzz_cli.py --seed 31 --case N replays it
SECONDS = 20      # new cases start until then (CI's 40 minutes); longer sessions: the script


@pytest.mark.fuzz
def test_fuzz_the_command():
    s = fz.fuzz(SEED, SECONDS, workers=2)
    print(s.text(SEED))
    outcomes = {outcome for _, outcome in s.outcomes}
    assert not s.errors and s.cases > 0, s.text(SEED)
    assert {"ok", "refused"} <= outcomes, s.text(SEED)  # the cases reach runs and refusals, or test nothing
    assert all(s.families.get(f) for f in fz.FAMILIES), s.text(SEED)  # every family, issue 44's too
    assert not s.failures, s.text(SEED)


def case(command=("table",), outputs=()):
    return fz.Case(0, command, list(command), {}, list(outputs))


@pytest.mark.parametrize("code, err, says", [
    (None, "", "hang"),
    (-9, "", "killed by signal 9"),
    (2, "Traceback (most recent call last):\n  ...\nKeyError: 'x'\n", "a traceback"),
    (2, "usage: jitterbench table\njitterbench table: error: x\n", "exactly one line"),
    (2, "", "exactly one line"),
    (3, "jitterbench: error: x\n", "exit 3"),
])
@pytest.mark.unit
def test_the_judge_fails_each_kind_of_failure(tmp_path, code, err, says):
    assert says in fz.judge(case(), tmp_path, code, "", err, {}, {})


@pytest.mark.unit
def test_the_judge_passes_a_refusal_and_a_verdict_but_not_a_verdict_where_none_is_given(tmp_path):
    assert fz.judge(case(), tmp_path, 2, "", "jitterbench table: error: x\n", {}, {}) is None
    assert fz.judge(case(("history",)), tmp_path, 1, "WORSE ...", "", {}, {}) is None
    assert fz.judge(case(("summarize",)), tmp_path, 1, "", "", {}, {}) == "exit 1"


@pytest.mark.unit
def test_the_judge_fails_a_change_to_what_was_there_and_what_no_option_named(tmp_path):
    (tmp_path / "mine.txt").write_text("mine")
    before = fz.snapshot(tmp_path)
    (tmp_path / "mine.txt").write_text("overwritten")
    assert "changed what the case did not make" in fz.judge(case(), tmp_path, 0, "", "", before, fz.snapshot(tmp_path))
    (tmp_path / "mine.txt").write_text("mine")
    (tmp_path / ".tmp-left").write_text("")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "index.html").write_text("")
    after = fz.snapshot(tmp_path)
    assert "left what no option named" in fz.judge(case(outputs=["out"]), tmp_path, 0, "", "", before, after)
    (tmp_path / ".tmp-left").unlink()
    assert fz.judge(case(outputs=["out"]), tmp_path, 0, "", "", before, fz.snapshot(tmp_path)) is None
    (tmp_path / "new" / "deeper").mkdir(parents=True)  # made to hold the named output
    (tmp_path / "new" / "deeper" / "report.html").write_text("")
    after = fz.snapshot(tmp_path)
    assert fz.judge(case(outputs=["out", "new/deeper/report.html"]), tmp_path, 0, "", "", before, after) is None
    assert "left what no option named" in fz.judge(case(outputs=["out"]), tmp_path, 0, "", "", before, after)


@pytest.mark.unit
def test_a_session_whose_worker_raised_or_that_ran_nothing_fails(monkeypatch, capsys):
    def broken(folder: Path):
        raise OSError("no room")
    monkeypatch.setattr(fz, "make_inputs", broken)
    assert fz.main(["--seconds", "1", "--workers", "1"]) == 1
    assert "WORKER ERROR: OSError: no room" in capsys.readouterr().out


@pytest.mark.unit
def test_any_twelve_cases_hold_every_family(tmp_path):
    """Case i is of FAMILIES[i % 12]: CI's short session, of more cases than that, runs each
    (issue 44's seven, issue 61's five)."""
    n = len(fz.FAMILIES)
    assert n == 12
    inputs = {**{f"report{i}.json": f"r{i}" for i in range(5)},
              **{f"traversal{t}-{i}.json": f"t{t}-{i}" for t in range(len(fz.TRAVERSALS)) for i in range(5)}}
    outputs = {"folder": str(tmp_path / "mine")}
    subcommands = {("table",): []}
    cases = [fz.make_case(31, i, subcommands, inputs, outputs, tmp_path) for i in range(100, 100 + n)]
    assert sorted(c.family for c in cases) == sorted(fz.FAMILIES)
    full = next(fz.make_case(31, i, subcommands, inputs, outputs, tmp_path) for i in range(n)
                if fz.FAMILIES[i % n] == "full-stdout")
    assert full.stdout == "full" and full.program == fz.JITTERBENCH
    signalled = next(c for c in cases if c.family == "signal-import")
    assert signalled.signal[0] in fz.SIGNALS and 0 < signalled.signal[1] <= 0.8
    repeated = next(c for c in cases if c.family == "c-repeat")
    assert repeated.argv[0] == "--c-repeat" and repeated.program == fz.FUZZ


@pytest.mark.unit
def test_the_judge_of_a_signalled_case_takes_the_one_interrupted_line_or_a_death_before_the_entry_point(tmp_path):
    signalled = fz.Case(0, ("report",), ["report"], {}, [], "signal-import", signal=("SIGTERM", 0.1))
    assert fz.judge(signalled, tmp_path, 130, "", "jitterbench: interrupted\n", {}, {}) is None
    assert fz.judge(signalled, tmp_path, -15, "", "", {}, {}) is None  # before Python ran the entry point
    assert "exactly the one line" in fz.judge(signalled, tmp_path, 130, "", "Traceback ...\njitterbench: "
                                              "interrupted\n", {}, {})
    assert "killed by signal 2" in fz.judge(signalled, tmp_path, -2, "", "jitterbench: interrupted\n", {}, {})
    assert "killed by signal 15" in fz.judge(signalled, tmp_path, -15, "", "jitterbench: interrupted\n", {}, {})
    assert fz.judge(case(("report",)), tmp_path, 130, "", "jitterbench: interrupted\n", {}, {}) == "exit 130"


@pytest.mark.unit
def test_the_judge_fails_python_s_exception_ignored(tmp_path):
    err = "Exception ignored in: <_io.TextIOWrapper name='<stdout>'>\nOSError: [Errno 28] No space left on device\n"
    assert "Exception ignored" in fz.judge(case(("summarize",)), tmp_path, 0, "", err, {}, {})
