"""The ReFrame workflow on `local`, for real: perflogs, eager limit, references."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import install_prefix
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
# one small variant: row placement, sendrecv, 4 KiB, two tasks; default and 2 KiB eager limits
SUBSET = ["-c", "reframe_checks/halo.py", "-n", "HaloCheck", "-P", "nodes=1", "-P", "tasks_per_node=2",
          "-P", "distribution=block", "-P", "msg_size=4096", "-P", "pattern=sendrecv", "-P", "placement=row", "-p", "openmpi"]

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


def reframe(tmp_path, *args, references=None, mode=None):
    # the binaries built by ci/setup.sh: a CMake build per environment would take a minute
    # (the fixture's own build runs in the vcluster tests)
    prefix = install_prefix(tmp_path / "prefix")
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(references or tmp_path / "refs"),
               JB_PREFIX=str(prefix / "{environ}"))
    cmd = [str(REFRAME), "-C", "systems/config.py", *(["--mode", mode] if mode else []), *SUBSET, *args, "-r"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    report = tmp_path / "out" / "report.json"
    cases = []
    if report.exists():
        cases = [c for run in json.loads(report.read_text())["runs"] for c in run["testcases"]
                 if not c.get("fixture")]
    return proc, cases


def write_references(tmp_path, method, halo_entry):
    """A local.yaml with one HaloCheck entry; returns its folder."""
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "local.yaml").write_text(yaml.safe_dump({
        "provenance": {"system": "local", "source": "test", "date": "2026-11-22", "method": method},
        "HaloCheck": halo_entry,
    }, sort_keys=False))
    return refs


def perflog_rows(tmp_path):
    path = tmp_path / "out" / "perflogs" / "local" / "default" / "HaloCheck.log"
    lines = path.read_text().splitlines()
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"))) for line in lines[1:]]
    assert all(len(line.split("|")) == len(header) for line in lines), "a perflog row does not fit its header"
    return rows


def test_perflog_records_parameters_eager_variable_mpi_and_nodes(tmp_path):
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default,2048")
    assert proc.returncode == 0, proc.stdout[-3000:]
    rows = perflog_rows(tmp_path)
    assert sorted(r["eager_limit"] for r in rows) == ["2048", "default"]
    for row in rows:
        assert (row["nodes"], row["tasks_per_node"], row["placement"], row["pattern"], row["msg_size"]) == (
            "1", "2", "row", "sendrecv", "4096")
        assert row["mpi_library"].startswith("Open MPI v")
        assert row["job_nodelist"] == os.uname().nodename
        assert float(row["max_value"]) >= float(row["avg_value"]) > 0
        assert row["max_unit"] == "us"
        expected_var = "" if row["eager_limit"] == "default" else "OMPI_MCA_btl_vader_eager_limit"
        assert row["eager_var"] == expected_var

    # the variable reached the benchmark: its own JSON records the environment it ran with
    outputs = {}
    for path in (tmp_path / "out" / "output").rglob("halo.json"):
        doc = json.loads(path.read_text())
        outputs[doc["metadata"]["environment"].get("OMPI_MCA_btl_vader_eager_limit")] = doc
    assert set(outputs) == {None, "2048"}


def test_a_malformed_reference_file_is_a_clear_error(tmp_path):
    write_references(tmp_path, "malformed", {"$index": ["$partition"], "local:default": {"max": "fast"}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default")
    assert proc.returncode != 0
    assert [c["result"] for c in cases] == ["fail"]
    assert "local.yaml: HaloCheck > local:default > max: expected [value, lower, upper, unit]" in cases[0]["fail_reason"]


def test_acceptance_mode_fails_without_a_reference_file(tmp_path):
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" for c in cases)
    assert all("no reference file for system 'local'" in c["fail_reason"] for c in cases)


def test_acceptance_mode_fails_on_a_variant_without_a_reference(tmp_path):
    write_references(tmp_path, "incomplete", {
        "$index": ["$partition", "pattern"], "local:default": {"two-phase": {"max": [10.0, -0.99, 100.0, "us"]}}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" and "reference" in c["fail_reason"] for c in cases)


def test_committed_local_references_are_valid_and_cover_the_quick_suite():
    from jitterbench import references
    doc = references.load(REPO / "reference_data" / "local.yaml")
    assert doc["provenance"]["system"] == "local" and "jitterbench reference" in doc["provenance"]["method"]
    halo = doc["HaloCheck"]
    assert halo["$index"] == ["$partition", "$environ", "nodes", "tasks_per_node", "eager_limit", "placement",
                              "pattern", "msg_size"]
    for environ in ("openmpi", "mpich", "intelmpi"):
        eager = "default"  # the quick suite's only eager limit outside EagerCheck
        leaf = halo["local:default"][environ][1][2][eager]["row"]["isend-recv"][4096]
        assert set(leaf) == {"max", "avg", "jitter"}
        assert set(doc["PingPongCheck"]["local:default"][environ][1][2][eager]["send"][1][4096]) == {"cycle", "speed"}
        for work in (0, 262144):
            assert {"max", "avg", "bandwidth"} <= set(
                doc["TorusCheck"]["local:default"][environ][1][2][eager]["isend"][1][16384][work])
        assert "eager_limit_shm" in doc["EagerCheck"]["local:default"][environ][1][2][eager]


def test_committed_vcluster_references_are_valid_and_cover_the_quick_suite():
    from jitterbench import references
    doc = references.load(REPO / "reference_data" / "vcluster.yaml")
    assert doc["provenance"]["system"] == "vcluster" and "jitterbench reference" in doc["provenance"]["method"]
    halo = doc["HaloCheck"]["vcluster:vc"]
    for environ in ("openmpi", "mpich", "intelmpi"):
        for nodes in (1, 2, 3):
            for placement in ("row", "bunched"):
                assert {"max", "avg", "jitter"} <= set(
                    halo[environ][nodes][2]["block"]["default"][placement]["isend-recv"][4096])
            pingpong = doc["PingPongCheck"]["vcluster:vc"][environ][nodes][2]
            for distribution in ("block", "cyclic") if nodes > 1 else ("block",):
                assert {"cycle", "speed"} <= set(pingpong[distribution]["default"]["send"][1][4096])
