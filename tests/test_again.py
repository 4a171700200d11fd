"""A verdict in two attempts (`jitterbench again`, docs/references.md "Two attempts"): each check
that failed under an MPI runs again alone, its report recorded in the run's, and fails only if it
fails again.  The unit tests on reports whose cases are known; one ReFrame run for real."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from jitterbench import again, cli, mpi as mpis, reference_build, references, reframe_report, verdict_table
from support.reframe_runs import NOT_JUDGING_LOAD, REFRAME, REPO, SUBSET, reframe, write_references
from test_verdict_table import halo_case, pingpong_case


def write(path, *runs, head=None):
    path.write_text(json.dumps({"session_info": head or {"version": "4.10.4", "time_start_unix": 1795323075},
                                "runs": [{"num_cases": len(r), "run_index": i, "testcases": r} for i, r in enumerate(runs)]},
                               indent=2))
    return path


@pytest.mark.unit
def test_the_checks_to_judge_again_are_each_check_failed_under_an_mpi_once(tmp_path):
    path = write(tmp_path / "report.json", [halo_case("openmpi", "fail", 30.0, 8.0),
                                            halo_case("openmpi", "fail", 30.0, 8.0, placement="bunched"),
                                            halo_case("mpich", "pass", 11.0, 8.0), pingpong_case("mpich", 2.0, 16.0)])
    assert verdict_table.failed([path]) == [("HaloCheck", "openmpi")]


@pytest.mark.unit
def test_a_second_attempt_is_recorded_as_a_later_run_and_its_cases_decide(tmp_path):
    first = write(tmp_path / "report.json", [halo_case("openmpi", "fail", 30.0, 8.0), halo_case("mpich", "pass", 11.0, 8.0)])
    second = write(tmp_path / "again.json", [halo_case("openmpi", "pass", 12.0, 8.0)],
                   head={"uuid": "second", "cmdline": "reframe -n ^HaloCheck\\b", "time_start_unix": 1795323200})
    reframe_report.add_attempts(first, [second])
    report = json.loads(first.read_text())
    assert [r["run_index"] for r in report["runs"]] == [0, 1]
    assert report["runs"][1]["session_info"]["uuid"] == "second" and report["session_info"].get("uuid") is None
    assert verdict_table.outcomes_of([first]) == {("HaloCheck", "openmpi"): ["pass"], ("HaloCheck", "mpich"): ["pass"]}
    assert verdict_table.failed([first]) == []


@pytest.mark.unit
def test_only_a_report_as_reframe_writes_it_is_rewritten_and_nothing_runs_before_it_is_refused(tmp_path, capsys):
    failed = {"testcases": [halo_case("openmpi", "fail", 30.0, 8.0)]}
    cases = (("mine.json", json.dumps({"runs": [failed], "session_info": {}}), "does not begin as ReFrame writes"),
             ("broken.json", '{"session_info": {}, "runs": [', "broken.json"),
             ("link.json", None, "is a symbolic link"))
    for name, text, message in cases:
        path = tmp_path / name
        if text is None:
            path.symlink_to(write(tmp_path / "report.json", failed["testcases"]))
        else:
            path.write_text(text)
        before = path.read_text()
        # a command that would leave a mark if it ran
        assert cli.main(["again", str(path), "--", "touch", str(tmp_path / "ran")]) == 2
        assert path.read_text() == before and not (tmp_path / "ran").exists()
        (err,) = capsys.readouterr().err.splitlines()
        assert message in err


@pytest.mark.unit
def test_the_run_s_own_command_loses_its_names_and_keeps_the_rest():
    assert again.without_names(["reframe", "-n", "HaloCheck", "-S", "calls=10", "--name=Jacobi", "-nPairs", "-r"]) == [
        "reframe", "-S", "calls=10", "-r"]


@pytest.mark.unit
def test_without_a_command_or_with_nothing_failed_nothing_runs(tmp_path, capsys):
    path = write(tmp_path / "report.json", [halo_case("openmpi", "pass", 11.0, 8.0)])
    assert cli.main(["again", str(path)]) == 2
    assert "give the run's ReFrame command after --" in capsys.readouterr().err
    assert cli.main(["again", str(path), "--", str(path)]) == 2  # a file, not a command: refused before anything
    assert "no such command to run again" in capsys.readouterr().err
    before = path.read_text()
    assert cli.main(["again", str(path), "--", "false"]) == 0
    assert "no check failed; nothing to judge again" in capsys.readouterr().out and path.read_text() == before


@pytest.mark.process
def test_a_second_attempt_that_leaves_no_report_fails_the_check(tmp_path, capsys):
    path = write(tmp_path / "report.json", [halo_case("openmpi", "fail", 30.0, 8.0)])
    before = path.read_text()
    assert cli.main(["again", str(path), "--", "false"]) == 1
    assert capsys.readouterr().out.startswith("HaloCheck under openmpi failed, then did not run (")
    assert path.read_text() == before  # no second attempt to record: the report as it was
    assert verdict_table.failed([path]) == [("HaloCheck", "openmpi")]


@pytest.mark.unit
def test_the_references_state_the_rate_of_an_attempt_and_of_a_run(tmp_path):
    from test_references import repeats  # noqa: PLC0415
    paths = repeats(tmp_path)
    two, one = (reference_build.build(paths, "local", "test", attempts=n)["provenance"] for n in (2, 1))
    assert (two["false_alarm_rate"], two["attempts"], two["false_alarm_rate_per_attempt"]) == (0.01, 2, 0.1)
    assert (one["false_alarm_rate"], one["attempts"], one["false_alarm_rate_per_attempt"]) == (0.01, 1, 0.01)
    with pytest.raises(references.ReferenceFileError, match="a verdict takes 1 or 2 attempts"):
        reference_build.build(paths, "local", "test", attempts=3)


@pytest.mark.reframe
@pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")
def test_a_check_slow_in_its_first_attempt_passes_the_second_and_one_slow_in_both_fails(tmp_path):
    """The halo slowed by 500 us a call (its calibrated wait, --inject) in the first attempt, against
    a bound of 50 us: judged again without the wait it passes; with it, it fails again."""
    refs = write_references(tmp_path, "50 us, a bound no clean run of the subset reaches",
                            {"$index": ["$partition"], "local:default": {"max_sendrecv_4096": [5.0, None, 9.0, "us"]}})
    proc, cases = reframe(tmp_path, "-S", "inject=1:500", references=refs)
    assert proc.returncode != 0 and {c["result"] for c in cases} == {"fail"}, proc.stdout[-2000:]
    report = tmp_path / "out" / "report.json"
    first = report.read_text()
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(refs),
               JB_PREFIX=str(tmp_path / "prefix" / "{environ}"))
    command = [sys.executable, "-m", "jitterbench", "again", str(report), "--", str(REFRAME), "-C", "systems/config.py",
               *SUBSET, *NOT_JUDGING_LOAD, "-r"]
    for slowed, code, said, verdict in ((False, 0, "passed", "pass"), (True, 1, "failed again", "FAIL")):
        report.write_text(first)
        proc = subprocess.run([*command[:-1], *(["-S", "inject=1:500"] if slowed else []), "-r"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == code, proc.stdout + proc.stderr
        log = tmp_path / "out" / "output" / "again" / "HaloCheck-openmpi.log"
        assert proc.stdout == f"HaloCheck under openmpi failed, then {said} ({log})\n"
        runs = json.loads(report.read_text())["runs"]
        assert len(runs) == 2 and "^HaloCheck" in runs[1]["session_info"]["cmdline"]
        # the first attempt's output stays where it was; the second's is beside it
        assert all("/output/again/" in c["outputdir"] for c in runs[1]["testcases"] if not c.get("fixture"))
        (row,) = [line.split() for line in verdict_table.table([report]).splitlines()[1:]]
        assert row[:3] == ["HaloCheck", "openmpi", verdict]
    assert yaml.safe_load((refs / "local.yaml").read_text())["HaloCheck"]  # the references untouched
