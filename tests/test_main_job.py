"""ci/main.sh where no reference file is of this machine: it says so in one line, records a
baseline of five quick runs as output/references/<system>.yaml with this machine's fingerprint,
and the next run asserts against it (docs/references.md).  EagerCheck at the default limits keeps it short."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import install_prefix
from jitterbench import fingerprint

pytestmark = pytest.mark.pipeline
REPO = Path(__file__).resolve().parents[1]


def main_job(out, refs, prefix):
    # this checkout's binaries, as a site's prefix: six builds of three MPIs took 130 s of CI's 40 minutes
    env = dict(os.environ, JB_OUTPUT=str(out), JB_REFERENCE_DIR=str(refs), JB_PREFIX=str(prefix / "{environ}"))
    # the default limits only: six runs of the job's path, not of the probe's sweep; the load and the
    # node not judged (a test of the path on a machine others may be using: judge_load=0), as the other
    # ReFrame runs of the tests (tests/support/reframe_runs.py)
    return subprocess.run(["bash", "ci/main.sh", "-n", "EagerCheck", "-P", "eager_limit=default", "-S", "judge_load=0"],
                          cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1200)


def test_the_main_job_records_a_baseline_where_no_references_match_and_the_next_run_asserts_it(tmp_path):
    refs, out, prefix = tmp_path / "refs", tmp_path / "out", install_prefix(tmp_path / "prefix")
    refs.mkdir()
    (refs / "local.yaml").write_text(yaml.safe_dump({
        "provenance": {"system": "local", "source": "test", "date": "2026-11-25", "method": "another machine's"},
        "fingerprint": {"system": "local", "cpu": ["Other CPU; 64 CPUs"]}}, sort_keys=False))
    first = main_job(out, refs, prefix)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    # one line: the fact that differs, and the baseline recorded
    said = [line for line in first.stdout.splitlines() if line.startswith("== No references of this machine")]
    assert len(said) == 1 and "Nothing was judged; recording a baseline of 5 quick runs" in said[0], first.stdout[-3000:]
    assert f"cpu '{fingerprint.this_host()}' here, the references' 'Other CPU; 64 CPUs'" in said[0]
    assert (out / "machine.txt").read_text().count("\n") == 1
    own = yaml.safe_load((out / "references" / "local.yaml").read_text())
    assert own["provenance"]["repeats"] == 5 and own["fingerprint"]["cpu"] == [fingerprint.this_host()]
    assert len(list(out.glob("baseline-*/run-*.json"))) == 5

    second = main_job(out, refs, prefix)
    assert second.returncode == 0, second.stdout[-3000:]
    assert "No references of this machine" not in second.stdout
    cases = [c for run in json.loads((out / "report.json").read_text())["runs"] for c in run["testcases"]
             if not c.get("fixture") and c.get("perfvalues")]
    assert cases and all(c["references_from"] == str(out / "references" / "local.yaml") for c in cases)
    # the eager limits are the same bytes every run: bounded, and the table judges them
    assert any(pv[2] is not None or pv[3] is not None for c in cases for pv in c["perfvalues"].values())
    assert "eager_limit_shm" in second.stdout
    # every run kept: the baseline's five and this one, tagged, in the report's History section
    html = (out / "report" / "index.html").read_text()
    assert "History of 6 run(s)" in html[html.index('<h2 id="history">'):]
