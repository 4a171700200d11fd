"""ReFrame judging a run by reference files (`$ref`) on `local`, for real: a malformed file, a mode
that needs references, and a machine that is not the one the references were made on."""
from __future__ import annotations

import pytest

from jitterbench import mpi as mpis
from support.reframe_runs import reframe, write_references

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


@pytest.mark.reframe
def test_a_malformed_reference_file_is_a_clear_error(tmp_path):
    write_references(tmp_path, "malformed", {"$index": ["$partition"],
                                             "local:default": {"max_sendrecv_4096": "fast"}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default")
    assert proc.returncode != 0
    assert [c["result"] for c in cases] == ["fail"]
    assert ("local.yaml: HaloCheck > local:default > max_sendrecv_4096: expected [value, lower, upper, unit]"
            in cases[0]["fail_reason"])


@pytest.mark.reframe
def test_acceptance_mode_fails_without_a_reference_file(tmp_path):
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" for c in cases)
    assert all("no reference file for system 'local'" in c["fail_reason"] for c in cases)


@pytest.mark.reframe
def test_acceptance_mode_fails_on_a_variant_without_a_reference(tmp_path):
    write_references(tmp_path, "incomplete", {  # bunched has one; the row case run here has none
        "$index": ["$partition", "placement"],
        "local:default": {"bunched": {"max_sendrecv_4096": [10.0, -0.99, 100.0, "us"]}}})
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", mode="acceptance")
    assert proc.returncode != 0
    assert cases and all(c["result"] == "fail" and "reference" in c["fail_reason"] for c in cases)


@pytest.mark.reframe
def test_a_check_takes_only_the_references_of_the_machine_it_ran_on(tmp_path):
    """A file whose fingerprint names another CPU asserts nothing (the verdict table says why) and
    fails the acceptance mode naming the difference; with this host's CPU it asserts."""
    from jitterbench import fingerprint, verdict_table
    entry = {"$index": ["$partition"], "local:default": {"max_sendrecv_4096": [1e-3, None, 0.01, "us"]}}
    for i, (cpu, mode) in enumerate((("Other CPU; 64 CPUs", None), ("Other CPU; 64 CPUs", "acceptance"),
                                     (fingerprint.this_host(), None))):
        run = tmp_path / str(i)
        refs = write_references(run, "fingerprint", entry, {"system": "local", "cpu": [cpu]})
        proc, cases = reframe(run, "-P", "eager_limit=default", mode=mode, references=refs)
        (case,) = [c for c in cases if c["environ"] == "openmpi"]  # the acceptance mode adds openmpi-ucx
        if cpu != fingerprint.this_host() and mode is None:   # passes, nothing asserted, saying why
            assert proc.returncode == 0, proc.stdout[-3000:]
            assert case["references_from"].startswith("none of this machine: refs/local.yaml: cpu '")
            assert "the references' 'Other CPU; 64 CPUs'" in case["references_from"]
            table = verdict_table.table([str(run / "out" / "report.json")])
            assert "(no references of this machine)" in table
        elif mode == "acceptance":
            assert case["result"] == "fail" and "no references of this machine" in case["fail_reason"]
        else:  # this machine's file: its bound 1 ns x 1.01 fails the run, naming the variable
            assert case["result"] == "fail" and case["references_from"] == str(refs / "local.yaml")
            assert "max_sendrecv_4096" in case["fail_reason"]
