"""`jitterbench history`: series, change points and the verdict on run reports whose values are
drawn from known distributions (a seeded generator), and the inputs it refuses."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from conftest import until_the_command_handles_signals
from jitterbench import cli, history


DAY = 86400
START = 1795323075


def case(value, bound=(10.0, None, 0.2), variable="max_isend-recv_4096", unit="us", environ="openmpi",
         check="HaloCheck"):
    return {"display_name": f"{check} %nodes=1 %placement=row", "nodes": 1, "placement": "row", "system": "local",
            "partition": "default", "environ": environ, "result": "pass",
            "perfvalues": {f"local:default:{variable}": [value, *bound, unit, "pass"]}}


def reports(tmp_path, values, **kw):
    """One run report a day, each holding one case of the value given."""
    paths = []
    for i, value in enumerate(values):
        path = tmp_path / f"run-{i + 1:03d}.json"
        path.write_text(json.dumps({"session_info": {"uuid": f"u{i}", "time_start_unix": START + i * DAY},
                                    "runs": [{"testcases": [case(value, **kw)]}]}))
        paths.append(str(path))
    return paths


def series(n=15, step_at=None, factor=1.0, sigma=0.05, seed=1):
    """Lognormal run-to-run spread around 10 us; from run step_at (1-based) on, factor times it."""
    values = 10.0 * np.exp(np.random.default_rng(seed).normal(0, sigma, n))
    if step_at:
        values[step_at - 1:] *= factor
    return [float(v) for v in values]


@pytest.fixture(autouse=True)
def no_store(monkeypatch, tmp_path):
    """The reports alone: the default store (RFM_SQLITE_DB_FILE) does not exist."""
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(tmp_path / "no-store" / "results.db"))


def run(capsys, *argv):
    code = cli.main(["history", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.unit
def test_a_step_at_run_10_is_found_there_with_its_size_and_fails_the_history(tmp_path, capsys):
    code, out, _ = run(capsys, *reports(tmp_path, series(step_at=10, factor=1.5)), "--json")
    doc = json.loads(out)
    (s,) = doc["series"]
    (cp,) = s["change_points"]
    assert cp["run"] == 10 and abs(cp["step"] / 1.5 - 1) < 0.2 and cp["worse"] is True
    assert s["alarm"] == cp and s["detectable_slowdown"] == pytest.approx(1.2)
    assert code == 1


@pytest.mark.unit
def test_the_alarm_names_the_variable_the_step_and_where_it_began(tmp_path, capsys):
    code, out, _ = run(capsys, *reports(tmp_path, series(step_at=10, factor=2.0)))
    (line,) = [x for x in out.splitlines() if x.startswith("WORSE")]
    assert "max_isend-recv_4096: run 10 (" in line and code == 1
    assert abs(float(re.search(r" x([0-9.]+) p=", line).group(1)) / 2.0 - 1) < 0.2


@pytest.mark.unit
def test_a_flat_series_has_no_change_point_and_passes(tmp_path, capsys):
    code, out, _ = run(capsys, *reports(tmp_path, series()), "--json")
    assert json.loads(out)["series"][0]["change_points"] == [] and code == 0


@pytest.mark.unit
@pytest.mark.parametrize("why, kw, factor", [
    ("to the better side", {}, 0.5),
    ("smaller than the reference detects", {"bound": (10.0, None, 0.6)}, 1.5),
    ("no bound, smaller than --min-step", {"bound": (10.0, None, None)}, 1.5),
    ("a maximum over calls: never asserted", {"check": "NoiseCheck", "variable": "length_max"}, 3.0),
])
def test_a_step_that_is_no_alarm(tmp_path, capsys, why, kw, factor):
    code, out, _ = run(capsys, *reports(tmp_path, series(step_at=10, factor=factor), **kw), "--json")
    (s,) = json.loads(out)["series"]
    assert [cp["run"] for cp in s["change_points"]] == [10], why
    assert s["alarm"] is None and code == 0, why


@pytest.mark.unit
def test_a_variable_no_reference_bounds_alarms_past_min_step(tmp_path, capsys):
    paths = reports(tmp_path, series(step_at=10, factor=3.0), bound=(10.0, None, None))
    code, out, _ = run(capsys, *paths, "--json")
    (s,) = json.loads(out)["series"]
    assert s["alarm"]["run"] == 10 and s["detectable_slowdown"] == 2.0 and code == 1
    assert run(capsys, *paths, "--min-step", "4")[0] == 0


@pytest.mark.unit
def test_a_bandwidth_is_worse_when_it_falls(tmp_path, capsys):
    values = series(step_at=10, factor=0.5)
    code, out, _ = run(capsys, *reports(tmp_path, values, bound=(100.0, -0.2, None), variable="bw_8192", unit="MB/s"),
                       "--json")
    (s,) = json.loads(out)["series"]
    assert s["alarm"]["run"] == 10 and s["alarm"]["worse"] is True and code == 1


@pytest.mark.unit
def test_a_step_back_ends_the_alarm(tmp_path, capsys):
    values = series(n=24, step_at=8, factor=2.0)
    values[15:] = [v / 2.0 for v in values[15:]]
    code, out, _ = run(capsys, *reports(tmp_path, values), "--json")
    (s,) = json.loads(out)["series"]
    assert [cp["run"] for cp in s["change_points"]][:2] == [8, 16] and s["alarm"] is None and code == 0


@pytest.mark.unit
def test_since_and_the_filters_narrow_the_series(tmp_path, capsys):
    paths = reports(tmp_path, series(step_at=10, factor=2.0))
    sixth = datetime.fromtimestamp(START + 5 * DAY, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    code, out, _ = run(capsys, *paths, "--json", "--since", sixth)
    doc = json.loads(out)
    assert len(doc["runs"]) == 10 and doc["series"][0]["alarm"]["run"] == 5 and code == 1
    for argv in (["--check", "^Ping"], ["--var", "^avg_"]):
        code, out, _ = run(capsys, *paths, "--json", *argv)
        assert json.loads(out)["series"] == [] and code == 0


@pytest.mark.unit
def test_a_run_given_twice_counts_once(tmp_path, capsys):
    paths = reports(tmp_path, series())
    code, out, _ = run(capsys, *paths, *paths[:3], "--json")
    assert len(json.loads(out)["runs"]) == 15


def store(path, reports_):
    """A database of ReFrame's schema (its sessions table, the report as JSON text) holding the reports."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE sessions(uuid TEXT PRIMARY KEY, session_start_unix REAL, session_end_unix REAL, "
                     "json_blob TEXT, report_file TEXT)")
        for p in reports_:
            doc = json.loads(open(p).read())
            conn.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (doc["session_info"]["uuid"],
                         doc["session_info"]["time_start_unix"], None, json.dumps(doc), p))
    return path


@pytest.mark.unit
def test_the_store_is_read_with_the_reports_and_a_run_in_both_counts_once(tmp_path, capsys):
    paths = reports(tmp_path, series(step_at=10, factor=2.0))
    db = store(tmp_path / "results.db", paths[:12])
    assert cli.main(["history", "--store", str(db), *paths[10:], "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["runs"]) == 15 and doc["series"][0]["alarm"]["run"] == 10


@pytest.mark.unit
def test_a_store_read_in_shares_and_reports_beside_it_make_one_series_in_order(tmp_path, capsys):
    """60 runs, 55 in the store (enough to be read by a worker a core), a second variable gapped in
    the older runs, and the newest 10 runs given as reports (5 of them also in the store): every value once, in
    the order of the runs, the bound the newest run's."""
    values = series(n=60, step_at=45, factor=2.0)
    paths = reports(tmp_path, values)
    for i, path in enumerate(paths):
        doc = json.loads(Path(path).read_text())
        doc["session_info"]["hostname"] = f"host{i}"
        if i >= 30:
            doc["runs"][0]["testcases"].append(case(values[i] / 2, bound=(9.0 + i, None, 0.5), variable="avg_x",
                                                    environ="mpich"))
        Path(path).write_text(json.dumps(doc))
    db = store(tmp_path / "results.db", paths[:55])
    assert history._shares(55) == (os.cpu_count() or 1)
    code, out, _ = run(capsys, "--store", str(db), *paths[50:], "--json")
    doc = json.loads(out)
    assert code == 1 and [r["run"] for r in doc["runs"]] == list(range(1, 61))
    assert [r["hostname"] for r in doc["runs"]] == [f"host{i}" for i in range(60)]
    by_var = {s["variable"]: s for s in doc["series"]}
    assert by_var["max_isend-recv_4096"]["values"] == values and by_var["max_isend-recv_4096"]["alarm"]["run"] == 45
    assert by_var["avg_x"]["runs"] == list(range(31, 61)) and by_var["avg_x"]["values"] == [v / 2 for v in values[30:]]
    assert by_var["avg_x"]["bound"] == [68.0, None, 0.5]


@pytest.mark.unit
def test_a_stored_value_python_writes_as_nan_is_a_gap(tmp_path, capsys):
    paths = reports(tmp_path, [10.0, float("nan"), 11.0])  # json.dumps writes NaN, which orjson refuses
    assert "NaN" in Path(paths[1]).read_text()
    code, out, _ = run(capsys, "--store", str(store(tmp_path / "results.db", paths)), "--json")
    (s,) = json.loads(out)["series"]
    assert code == 0 and s["runs"] == [1, 3] and s["values"] == [10.0, 11.0]


@pytest.mark.unit
@pytest.mark.parametrize("seed", range(4))
def test_a_series_the_screen_passes_over_has_no_change_point_by_otava(seed):
    """The screen (history._may_step) skips otava only where otava finds nothing: checked on
    series of every kind (spread, steps, outliers, flat stretches, short, heavy-tailed), and it
    skips some of them, or it would save nothing."""
    rng = np.random.default_rng(seed)
    made = []
    for k in range(60):
        n = int(rng.choice([3, 4, 7, 26, 51, 75, 140]))
        v = np.exp(rng.normal(0, rng.choice([0.01, 0.1, 0.5]), n))
        if k % 4 == 1:
            v[rng.integers(n):] *= rng.choice([1.05, 1.2, 2.0])
        elif k % 4 == 2:
            v[rng.integers(n)] *= 10
        elif k % 4 == 3:
            v = np.exp(rng.standard_cauchy(n) * 0.05)
        if k % 15 == 0:
            v[: n // 2] = 1.0
        made.append([float(x) for x in v])
    max_pvalue = 0.01 / len(made)
    may = history._may_step(made, max_pvalue)
    for values, step in zip(made, may):
        if not step:
            assert history.change_points(values, max_pvalue) == [], values
    assert 0 < sum(may) < len(made)


@pytest.mark.unit
@pytest.mark.parametrize("argv, says", [
    (["--since", "yesterday"], "--since 'yesterday': not a date"),
    (["--check", "("], "--check/--var: not a regular expression"),
    (["--false-alarm-rate", "1.5"], "--false-alarm-rate must be between 0 and 1"),
    (["--min-step", "0.5"], "--min-step must be a finite number above 1"),
    (["--min-step", "inf"], "--min-step must be a finite number above 1"),
    (["--false-alarm-rate", "nan"], "--false-alarm-rate must be between 0 and 1"),
])
def test_a_bad_option_gets_one_line(tmp_path, capsys, argv, says):
    code, out, err = run(capsys, *reports(tmp_path, series(n=3)), *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err


@pytest.mark.unit
def test_a_bad_store_or_report_gets_one_line(tmp_path, capsys):
    bad_db = tmp_path / "results.db"
    bad_db.write_text("not a database")
    assert cli.main(["history", "--store", str(bad_db)]) == 2
    assert "not a ReFrame results database" in capsys.readouterr().err
    assert cli.main(["history", "--store", str(tmp_path / "none.db")]) == 2
    assert "no results store there" in capsys.readouterr().err
    for blob, says in (("[1]", "session u0: is not a run report"), ("{", "not a ReFrame results database"),
                       ('{"session_info": {}, "runs": [{"testcases": [{"display_name": 5}]}]}',
                        "session u0: runs[0].testcases[0].display_name is not a string")):
        with sqlite3.connect(tmp_path / "odd.db") as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS sessions(uuid TEXT PRIMARY KEY, session_start_unix REAL, "
                         "session_end_unix REAL, json_blob TEXT, report_file TEXT)")
            conn.execute("INSERT OR REPLACE INTO sessions VALUES ('u0', 1, NULL, ?, '')", (blob,))
        code, out, err = run(capsys, "--store", str(tmp_path / "odd.db"))
        assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"session_info": {"time_start_unix": "noon"}, "runs": []}))
    code, _, err = run(capsys, str(report))
    assert code == 2 and "session_info.time_start_unix is not a number" in err


@pytest.mark.unit
def test_a_level_of_fewer_than_three_runs_is_an_outlier_not_a_step(tmp_path, capsys):
    values = series(n=15)
    values[-2:] = [v * 3 for v in values[-2:]]  # the newest two runs disturbed
    code, out, _ = run(capsys, *reports(tmp_path, values), "--json")
    (s,) = json.loads(out)["series"]
    assert [cp["run"] for cp in s["change_points"]] == [14] and s["alarm"] is None and code == 0
    values[-3] *= 3  # a third: now a level the series holds
    code, out, _ = run(capsys, *reports(tmp_path, values), "--json")
    assert json.loads(out)["series"][0]["alarm"]["run"] == 13 and code == 1


@pytest.mark.unit
def test_a_gap_and_a_zero_leave_the_rest_of_the_series(tmp_path, capsys):
    values = series(step_at=10, factor=2.0)
    values[3] = 0.0
    code, out, _ = run(capsys, *reports(tmp_path, values), "--json")
    (s,) = json.loads(out)["series"]
    assert 4 not in s["runs"] and len(s["values"]) == 14 and s["alarm"]["run"] == 10


@pytest.mark.unit
def test_the_report_has_a_history_section_with_a_figure_of_the_step(tmp_path, capsys):
    paths = reports(tmp_path, series(step_at=10, factor=2.0))
    db = store(tmp_path / "results.db", paths)
    assert cli.main(["report", paths[-1], "-o", str(tmp_path / "report"), "--history", str(db)]) == 0
    html = (tmp_path / "report" / "index.html").read_text()
    section = html[html.index('<h2 id="history">'):]
    assert "History of 15 run(s)" in section and 'id="history-1"' in section and "WORSE" in section
    assert (tmp_path / "report" / "figures" / "history-1.png").stat().st_size > 0


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_command_loads_is_one_line(tmp_path, signum):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it), SIGTERM or SIGHUP while the
    command loads its modules (NumPy, ReFrame's support: most of a second; jitterbench/entry.py)."""
    proc = subprocess.Popen([str(Path(sys.executable).with_name("jitterbench")), "history", *reports(tmp_path, series())],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    until_the_command_handles_signals(proc)  # then it loads its modules, most of a second
    os.killpg(proc.pid, signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "jitterbench: interrupted\n" and out == ""
