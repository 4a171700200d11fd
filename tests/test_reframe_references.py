"""ReFrame judging a run by reference files (`$ref`) on `local`, for real: a malformed file, a mode
that needs references, and a machine that is not the one the references were made on."""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from jitterbench import cli, fingerprint, reframe_report, verdict_table
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


@pytest.mark.reframe
def test_a_node_past_its_bounds_is_named_first_and_nothing_of_its_case_is_judged(tmp_path):
    """Node first, for real: a file of this hardware whose compute probe's reference is far faster than
    any node (1 us) makes the case inconclusive, naming this node and the probe, its network figure left
    unjudged beside its reference though it is far past its bound (1 ns); with the probe's reference
    far slower (1 s) the node is within, and the network's figure is judged and fails as usual; a file
    of other hardware (another model) judges nothing and names the fact."""
    hardware = this_hardware()
    other = " ".join("model=99" if fact.startswith("model=") else fact for fact in hardware.split())
    for i, (theirs, probe) in enumerate(((hardware, 1.0), (hardware, 1e6), (other, 1.0))):
        run = tmp_path / str(i)
        entry = {"$index": ["$partition"], "local:default": {"max_sendrecv_4096": [1e-3, None, 0.01, "us"],
                                                              "node_probe_us": [probe, None, 0.05, "us"]}}
        refs = write_references(run, "node", entry, {"system": "local", "cpu": [fingerprint.this_host()],
                                                     "hardware": [theirs],
                                                     "launches": {"HaloCheck": ["2x1" if i == 0 else 1]}})
        # the node judged where the load is (judge_load: a node whose CPUs are its own); the first file
        # in two rounds: only the round that holds the case's figure judges it, the node first
        rounds = ["--repeat", "2"] if i == 0 else []
        proc, cases = reframe(run, "-P", "eager_limit=default", *rounds, references=refs, judge_load=True)
        if rounds:
            earlier = [c for c in cases if c["rounds_pooled"] == 1]
            assert len(earlier) == 1 and earlier[0]["result"] == "pass" and not earlier[0]["node_finding"]
            cases = [c for c in cases if c["rounds_pooled"] == 2]
        (case,) = cases
        assert case["hardware"] == hardware
        perf = {name.split(":")[-1]: pv for name, pv in case["perfvalues"].items()}
        if theirs == other:  # other hardware: nothing judged, the fact named
            model = next(f for f in hardware.split() if f.startswith("model="))[6:]
            assert case["result"] == "pass" and not case["node_finding"]
            assert case["references_from"] == (f"none of this machine: refs/local.yaml: hardware: model {model} "
                                               "here, the references' 99")
            continue
        assert case["references_from"] == str(refs / "local.yaml")
        if probe == 1.0:
            assert reframe_report.outcome(case) == reframe_report.INCONCLUSIVE, case["fail_reason"]
            finding = json.loads(case["node_finding"])
            assert list(finding["past"]) == ["node_probe_us"]
            assert finding["past"]["node_probe_us"]["node"] == socket.gethostname()
            assert f"node first: {socket.gethostname()} computes" in case["fail_reason"]
            assert perf["max_sendrecv_4096"][1:4] == [1e-3, None, None]  # beside its reference, unjudged
            assert cli_table(run) == 3
            first = verdict_table.table([str(run / "out" / "report.json")]).splitlines()[0]
            assert first.startswith(f"Node first: {socket.gethostname()} computes ")
        else:
            assert case["result"] == "fail" and not case["node_finding"]
            assert "max_sendrecv_4096" in case["fail_reason"] and "node first" not in case["fail_reason"]
            assert perf["node_probe_us"][1:4] == [1e6, None, 0.05]


def this_hardware():
    """This node's hardware as the benchmarks print it ('# hardware:')."""
    command, env = mpis.OPENMPI.launch(2, [str(mpis.OPENMPI.binary("halo")), "--calls", "1"])
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120).stdout
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("# hardware: "))


def cli_table(run):
    return cli.main(["table", str(run / "out" / "report.json")])
