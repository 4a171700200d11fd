"""The jitterbench command on real and malformed results files."""
from __future__ import annotations

import json

import pytest

from jitterbench import cli

pytestmark = pytest.mark.unit


def halo_doc(**result):
    base = {"placement": "row", "pattern": "isend-recv", "ns_size": 848, "ew_size": 1016,
            "off_node_per_node": 32, "max_us": 30.0, "avg_us": 20.0, "p99_us": 45.0,
            "t_max_us": 24.0, "start_skew_max_us": 1.25}
    base.update(result)
    return {"benchmark": "halo", "config": {}, "results": [base],
            "metadata": {"mpi_library": "Open MPI v4.1.4, package: Debian"}}


def test_summarize_prints_max_avg_and_ratio(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(halo_doc()))
    assert cli.main(["summarize", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["mpi", "placement", "off-node"]
    assert out[1].split() == ["Open", "MPI", "v4.1.4", "row", "32", "isend-recv", "848/1016",
                              "30.0", "20.0", "1.50", "45.0", "24.0", "1.2"]
    # a document of an older jb-halo, without t_max and the start skew, shows '-' for them
    path.write_text(json.dumps(halo_doc(t_max_us=None, start_skew_max_us=None)))
    assert cli.main(["summarize", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[-2:] == ["-", "-"]


def test_malformed_files_give_one_line_and_exit_2(tmp_path, capsys):
    cases = {
        "notjson.json": "{ not json",
        "list.json": "[]",
        "partial.json": json.dumps({"benchmark": "halo", "results": []}),
        "nofield.json": json.dumps({**halo_doc(), "results": [{"pattern": "a"}]}),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        assert cli.main(["summarize", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("jitterbench: error:"), (name, err)
    assert cli.main(["summarize", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("error, says", [(OSError(12, "Cannot allocate memory"), "error: Cannot allocate memory"),
                                         (MemoryError(), "for jitterbench table (the machine, or a limit"),
                                         (MemoryError("Unable to allocate 8 GiB"), "table: Unable to allocate 8 GiB")])
def test_running_out_of_memory_is_one_line(monkeypatch, capsys, error, says):
    def out_of_memory(args):
        raise error
    monkeypatch.setattr(cli, "run", out_of_memory)
    assert cli.main(["table", "x.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


def test_an_error_quoting_a_line_break_of_the_user_s_stays_one_line(tmp_path, capsys):
    """compare --baseline 'a<newline>b' (found by tests/support/fuzz_cli.py, seed 33) and an argparse
    refusal of such a value: one line each, the break written as an escape."""
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u", "time_start_unix": 1}, "runs": [{"testcases": [
        {"display_name": "HaloCheck %nodes=1", "nodes": 1, "system": "local", "partition": "default",
         "environ": "openmpi", "result": "pass", "perfvalues": {"local:default:max": [1.0, 0, None, None, "us", "pass"]}}]}]}))
    assert cli.main(["compare", str(report), "--baseline", "a\nb", "-o", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'a\\nb'" in err, err
    with pytest.raises(SystemExit):
        cli.main(["simulate", "profile", "--statistic", "x\ny"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x\\ny" in err, err
