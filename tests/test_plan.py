"""`jitterbench plan`: the cases ReFrame would run and their modelled time; bad input in one line."""
from __future__ import annotations

import pytest

from jitterbench import cli
from support.reframe_runs import listing


@pytest.mark.reframe
def test_plan_counts_the_cases_reframe_lists_and_estimates_their_time(capsys):
    assert cli.main(["plan", "--system", "local", "--mode", "quick"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out[2:] if line.split() and line.split()[0].endswith("Check")}
    cases = listing("--mode", "quick")
    assert {check: int(row[1]) for check, row in rows.items()} == {
        check: sum(name.startswith(check + " ") for name, _ in cases) for check in rows}
    (total,) = [line.split() for line in out if line.startswith("total")]
    assert int(total[1]) == len(cases) and float(total[-1]) > 0


@pytest.mark.parametrize("argv,message", [
    (["--system", "nosuch"], "unknown system 'nosuch'"),
    (["--system", "local", "--mode", "fast"], "unknown mode 'fast' for system 'local'"),
    (["--system", "local", "-C", "/nonexistent/config.py"], "no ReFrame configuration at /nonexistent/config.py"),
])
@pytest.mark.unit
def test_plan_refuses_bad_input_in_one_line(capsys, argv, message):
    assert cli.main(["plan", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err
