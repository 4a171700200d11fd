"""The ReFrame runs the checks' tests make on `local`: one small HaloCheck variant (SUBSET) run with the
binaries ci/setup.sh built, its perflog rows, a reference file of one entry, and ReFrame's listing."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from conftest import folder, install_prefix

REPO = Path(__file__).resolve().parents[2]
REFRAME = Path(sys.executable).with_name("reframe")
# one small variant: row placement, two tasks, sendrecv at 4 KiB in its run; default and 2 KiB eager limits
SUBSET = ["-c", "reframe_checks/halo.py", "-n", "HaloCheck", "-P", "tasks_per_node=2", "-P", "placement=row",
          "-S", "patterns=sendrecv", "-S", "msg_sizes=4096", "-p", "openmpi"]
# the variables of that run: one per quantity of its one pattern and size
SUBSET_VARIABLES = {f"{q}_sendrecv_4096" for q in ("max", "avg", "p99", "t_max", "jitter")}


# the disturbed-run rule is off where a test checks something else, on a machine others may be using
NOT_JUDGING_LOAD = ["-S", "judge_load=0"]


def reframe(tmp_path, *args, references=None, mode=None, judge_load=False, env=None):
    # the binaries built by ci/setup.sh: a CMake build per environment would take a minute
    # (the fixture's own build runs in the vcluster tests)
    args = (*args, *([] if judge_load else NOT_JUDGING_LOAD))
    prefix = install_prefix(tmp_path / "prefix")
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(references or folder(tmp_path / "refs")),
               JB_PREFIX=str(prefix / "{environ}"), **(env or {}))
    cmd = [str(REFRAME), "-C", "systems/config.py", *(["--mode", mode] if mode else []), *SUBSET, *args, "-r"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    report = tmp_path / "out" / "report.json"
    cases = []
    if report.exists():
        cases = [c for run in json.loads(report.read_text())["runs"] for c in run["testcases"]
                 if not c.get("fixture")]
    return proc, cases


def write_references(tmp_path, method, halo_entry, fingerprint=None):
    """A local.yaml with one HaloCheck entry (and the fingerprint given); returns its folder."""
    refs = tmp_path / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    (refs / "local.yaml").write_text(yaml.safe_dump({
        "provenance": {"system": "local", "source": "test", "date": "2026-11-22", "method": method},
        **({"fingerprint": fingerprint} if fingerprint else {}),
        "HaloCheck": halo_entry,
    }, sort_keys=False))
    return refs


def perflog_rows(tmp_path):
    """The rows of the HaloCheck perflog, each read by the header above it: ReFrame writes a header
    again where the fields change (a round without performance variables, then the round with them)."""
    path = tmp_path / "out" / "perflogs" / "local" / "default" / "HaloCheck.log"
    rows, header = [], None
    for line in path.read_text().splitlines():
        fields = line.split("|")
        if fields[:2] == ["job_completion_time", "result"]:
            header = fields
            continue
        assert header and len(fields) == len(header), "a perflog row does not fit its header"
        rows.append(dict(zip(header, fields)))
    return rows


def listing(*args):
    """The test cases ReFrame lists (--list=C), nothing run: (display name, partition+environ)."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", *args, "--list=C"], cwd=REPO,
                              env=dict(os.environ, JB_OUTPUT=out), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    # a file ReFrame cannot load is only warned of, and its checks vanish from every run
    assert "skipping test file" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = re.findall(r"^- (\S+(?: %\S+)*) /\w+ @(\S+)$", proc.stdout, re.M)
    return [(name, where) for name, where in cases]


def params(name):
    return dict(re.findall(r"%(\w+)=(\S+)", name))
