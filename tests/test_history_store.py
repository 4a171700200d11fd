"""Every run kept: ReFrame's results database as jitterbench's store, for real.  Two runs write
it at once and both sessions are there; a run killed mid-way leaves the earlier sessions
readable; `jitterbench history` and ReFrame's own --performance-compare read the sessions.
Results sent out: with JB_RESULTS_URL every performance record reaches an HTTP receiver."""
from __future__ import annotations

import http.server
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import folder, install_prefix
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
JITTERBENCH = Path(sys.executable).with_name("jitterbench")
# one small variant (support/reframe_runs.py's SUBSET), a few calls: the store, not the speed, is tested here
SUBSET = ["-c", "reframe_checks/halo.py", "-n", "HaloCheck", "-P", "tasks_per_node=2", "-P", "placement=row",
          "-S", "patterns=sendrecv", "-S", "msg_sizes=4096", "-p", "openmpi", "-S", "calls=20", "-S", "judge_load=0"]

pytestmark = [pytest.mark.reframe, pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")]


def start(tmp_path, name, store, *args):
    """A ReFrame run of SUBSET in a process group of its own, its output under tmp_path/name."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / name), JB_REFERENCE_DIR=str(folder(tmp_path / "no-references")),
               JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"), RFM_SQLITE_DB_FILE=str(store))
    extras = subprocess.run([str(JITTERBENCH), "history", "--session-extras", "quick"], capture_output=True,
                            text=True, check=True).stdout.strip()
    return subprocess.Popen([str(REFRAME), "-C", "systems/config.py", *SUBSET, "--session-extras", extras, *args,
                             "-r"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two runs started together, writing one store."""
    tmp_path = tmp_path_factory.mktemp("store")
    install_prefix(tmp_path / "prefix")
    store = tmp_path / "shared" / "results.db"
    runs = [start(tmp_path, name, store) for name in ("a", "b")]
    outputs = [p.communicate(timeout=600)[0] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], "\n".join(o[-2000:] for o in outputs)
    return tmp_path, store


def sessions(store):
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return db.execute("SELECT uuid FROM sessions ORDER BY session_start_unix").fetchall()


def history(store, *args):
    proc = subprocess.run([str(JITTERBENCH), "history", "--store", str(store), "--json", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_two_runs_at_once_both_land_in_the_store_tagged(store):
    _, db = store
    assert len(sessions(db)) == 2
    doc = history(db)
    assert len(doc["runs"]) == 2
    for run in doc["runs"]:
        assert run["jb_mode"] == "quick" and run["jb_mpis"] and run["jb_cpu"] and run["jb_commit"]
    halo = [s for s in doc["series"] if s["case"].startswith("HaloCheck")]
    assert {s["variable"] for s in halo} >= {"max_sendrecv_4096", "avg_sendrecv_4096"}
    assert all(s["runs"] == [1, 2] for s in halo)


def test_a_run_killed_mid_way_leaves_the_earlier_sessions_readable(store):
    tmp_path, db = store
    run = start(tmp_path, "killed", db)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "killed").rglob("rfm_job.sh")) and time.monotonic() < deadline:
        time.sleep(0.2)  # until its benchmark job is written: mid-way through the run
    os.killpg(run.pid, signal.SIGKILL)
    run.wait(timeout=60)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len(sessions(db)) == 2 and len(history(db)["runs"]) == 2


def test_reframe_s_own_comparison_reads_two_jitterbench_sessions(store):
    """docs/reframe.md's command: the second run against the first, per test and variable."""
    tmp_path, db = store
    (first,), (second,) = sessions(db)
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", f"--performance-compare={first}/{second}/median:/"],
                          cwd=REPO, env=dict(os.environ, RFM_SQLITE_DB_FILE=str(db), JB_OUTPUT=str(tmp_path / "cmp")),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [line for line in proc.stdout.splitlines() if "HaloCheck" in line]
    assert any("max_sendrecv_4096" in line for line in lines), proc.stdout[-2000:]


class Receiver(http.server.BaseHTTPRequestHandler):
    """A loopback HTTP endpoint, as an Elastic index's _doc would be: keeps every JSON body posted."""
    records: list = []

    def do_POST(self):  # noqa: N802  (http.server's name)
        self.records.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(201)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_every_performance_record_of_a_quick_run_reaches_the_results_url(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(folder(tmp_path / "no-references")),
                   JB_PREFIX=str(install_prefix(tmp_path / "prefix") / "{environ}"),
                   JB_RESULTS_URL=f"http://127.0.0.1:{server.server_port}/jitterbench/_doc",
                   JB_RESULTS_EXTRAS="site=test,cluster=loopback")
        proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--mode", "quick", "-n", "HaloCheck",
                               "-S", "judge_load=0", "-r"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=600)
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stdout[-3000:]
    rows = [line.split("|") for log in (tmp_path / "out" / "perflogs").rglob("HaloCheck.log")
            for line in log.read_text().splitlines()[1:]]
    records = [r for r in Receiver.records if r.get("check_name", "").startswith("HaloCheck")]
    assert len(records) == len(rows) > 0
    for r in records:
        assert r["site"] == "test" and r["cluster"] == "loopback" and r["facility"] == "jitterbench"
        assert {"check_nodes", "check_placement", "check_eager_limit", "check_environ", "check_mpi_library"} <= set(r)
        # ReFrame's own check_perf_value aside: one field set per variable, its name with - as _
        values = [k[:-len("_value")] for k in r if k.startswith("check_perf_") and k.endswith("_value")
                  and k != "check_perf_value"]
        assert values and all(r[f"{v}_unit"] for v in values)
        assert any(v.startswith("check_perf_max_") and r[f"{v}_unit"] == "us" for v in values)


@pytest.mark.parametrize("setting, says", [
    ({"JB_RESULTS_URL": "http://127.0.0.1:9/x", "JB_RESULTS_EXTRAS": "site"},
     "JB_RESULTS_EXTRAS='site': must be key=value pairs"),
    ({"JB_REFERENCE_DIR": "{file}"}, "JB_REFERENCE_DIR='{file}': must be a folder, not a file"),
    ({"JB_OUTPUT": "{file}"}, "JB_OUTPUT='{file}': must be a folder, not a file"),
    # ReFrame would run it: its configuration's paths go through osext.expandvars
    ({"JB_OUTPUT": "/tmp/$(touch X)"}, "JB_OUTPUT='/tmp/$(touch X)': must be a path of letters"),
])
def test_a_bad_setting_is_one_line_and_no_run(tmp_path, setting, says):
    file = tmp_path / "a-file"
    file.write_text("")
    env = {**os.environ, "JB_OUTPUT": str(tmp_path / "out"), **{k: v.format(file=file) for k, v in setting.items()}}
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "-l"], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode != 0 and not (REPO / "X").exists()
    assert says.format(file=file) in proc.stdout + proc.stderr
