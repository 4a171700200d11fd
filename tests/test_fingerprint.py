"""A reference file's fingerprint: which runs it judges (jitterbench/fingerprint.py), and
`jitterbench reference --check`."""
import json

import pytest
import yaml

from jitterbench import cli, fingerprint, references

pytestmark = pytest.mark.unit

FP = {"system": "local", "hosts": ["vm"], "cpu": ["AMD EPYC; 2 CPUs"], "nodes": [1],
      "mpi_library": {"openmpi": ["Open MPI v4.1.4"], "mpich": ["MPICH Version: 5.0.2"]},
      "transport": {"openmpi": ["vm: shm"]}}
HERE = {"cpu": "AMD EPYC; 2 CPUs", "mpi_library": "Open MPI v4.1.4", "transport": "vm: shm"}


@pytest.mark.parametrize("facts,environ,why", [
    (HERE, "openmpi", []),
    ({**HERE, "cpu": "Intel Xeon; 64 CPUs"}, "openmpi",
     ["cpu 'Intel Xeon; 64 CPUs' here, the references' 'AMD EPYC; 2 CPUs'"]),
    ({**HERE, "mpi_library": "Open MPI v5.0.5"}, "openmpi",
     ["mpi_library 'Open MPI v5.0.5' here, the references' 'Open MPI v4.1.4'"]),
    ({**HERE, "transport": "vm: tcp"}, "openmpi", ["transport 'vm: tcp' here, the references' 'vm: shm'"]),
    # an environment the file holds nothing of has no references to mismatch: only the CPU counts
    ({**HERE, "mpi_library": "Intel(R) MPI Library 2021.18"}, "intelmpi", []),
    ({**HERE, "mpi_library": "MPICH Version: 5.0.2", "transport": "vm: ofi"}, "mpich", []),  # no transport logged
    ({"cpu": "", "mpi_library": "", "transport": ""}, "openmpi", []),   # a check that says nothing (OSU)
])
def test_a_run_differs_from_a_fingerprint_only_in_what_both_name(facts, environ, why):
    assert fingerprint.differences(FP, facts, environ) == why


def test_a_file_without_a_fingerprint_judges_every_machine():
    assert fingerprint.differences(None, {**HERE, "cpu": "anything"}, "openmpi") == []


def test_the_fingerprint_of_cases_gathers_each_fact_per_environment():
    cases = [{"display_name": f"{check} %nodes={n}", "environ": e, "nodes": n, "cpu": "AMD EPYC; 2 CPUs",
              "mpi_library": f"{e} 1", "transport": t, **launches}
             for check, e, n, t, launches in (("HaloCheck", "openmpi", 1, "vm: shm", {"launches": 5}),
                                              ("HaloCheck", "openmpi", 2, "vm: tcp", {"launches": 5}),
                                              ("EagerCheck", "mpich", 1, "", {}))]
    assert fingerprint.of_cases("local", cases, ["vm"]) == {
        "system": "local", "hosts": ["vm"], "cpu": ["AMD EPYC; 2 CPUs"], "nodes": [1, 2],
        "mpi_library": {"mpich": ["mpich 1"], "openmpi": ["openmpi 1"]},
        "transport": {"openmpi": ["vm: shm", "vm: tcp"]},
        "launches": {"EagerCheck": [1], "HaloCheck": [5]}}  # a case that logged none made one


def test_a_run_of_other_launches_a_case_is_not_judged_by_the_references_and_is_told_why():
    """A median of 5 launches is steadier than one launch, and 5 launches in 5 rounds steadier than 5
    in a row: a bound made for the one is none for the other, either way; a measured file without
    launches was made of one launch a case."""
    fp = {"cpu": ["C"], "launches": {"HaloCheck": [5], "EagerCheck": [1], "JacobiCheck": ["5x1"]}}
    same = {"cpu": "C", "check": "HaloCheck", "launches": 5}
    assert fingerprint.differences(fp, same, "openmpi") == []
    assert fingerprint.differences(fp, {**same, "check": "EagerCheck", "launches": 1}, "openmpi") == []
    assert fingerprint.differences(fp, {**same, "check": "JacobiCheck", "launches": fingerprint.made_of(1, 5)},
                                   "openmpi") == []
    differ = fingerprint.differences(fp, {**same, "launches": 1}, "openmpi")
    assert differ == ["a figure here is the median of 1 launch in one job, the references' of 5 launches in one job "
                      "(another spread: make references as this run was made, or run as they were, with JB_ROUNDS "
                      "and JB_LAUNCHES)"]
    (differ,) = fingerprint.differences(fp, {**same, "check": "JacobiCheck", "launches": 5}, "openmpi")
    assert differ.startswith("a figure here is the median of 5 launches in one job, the references' of 1 launch in "
                             "each of 5 rounds")
    assert fingerprint.differences({"cpu": ["C"]}, same, "openmpi")[0].startswith(
        "a figure here is the median of 5 launches in one job, the references' of 1 launch in one job")
    assert fingerprint.differences({"cpu": ["C"]}, {**same, "launches": 1}, "openmpi") == []
    assert fingerprint.differences(None, same, "openmpi") == []  # a paper's file judges every run


def test_what_a_figure_is_the_median_of_is_recorded_and_checked():
    assert [fingerprint.made_of(5), fingerprint.made_of(1, 5), fingerprint.made_of(2, 3)] == [5, "5x1", "3x2"]
    assert fingerprint.launches_of({"launches": 1, "rounds": 5}) == "5x1"
    assert fingerprint.launches_of({"launches": 3}) == 3 and fingerprint.launches_of({}) == 1
    assert [fingerprint.made_problem(m) for m in (1, "5x1", "100x2")] == [None, None, None]
    for bad in (0, True, "5", "x1", "0x1", "5x", "5x1 ", 2.0, None, "1e3x1"):
        assert fingerprint.made_problem(bad) == f"{bad!r} is neither a launch count nor rounds x launches"


def test_this_host_reads_as_the_benchmarks_print_it():
    assert fingerprint.this_host().endswith(" CPUs") and "; " in fingerprint.this_host()


def reference_file(tmp_path, fp, name="local.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"provenance": {"system": "local", "source": "test", "date": "2026-11-25",
                                                   "method": "test"}, "fingerprint": fp}, sort_keys=False))
    return path


def run_report(tmp_path, cpu):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"session_info": {"uuid": "u"}, "runs": [{"testcases": [{
        "display_name": "HaloCheck %nodes=1", "nodes": 1, "system": "local", "partition": "default",
        "environ": "openmpi", "result": "pass", **HERE, "cpu": cpu,
        "perfvalues": {"local:default:max": [1.0, 0, None, None, "us", "pass"]}}]}]}))
    return path


def test_check_tells_whether_a_run_or_this_host_matches_a_file(tmp_path, capsys):
    mine = reference_file(tmp_path, {**FP, "cpu": [fingerprint.this_host()]})
    other = reference_file(tmp_path, FP | {"cpu": ["Other CPU; 64 CPUs"]}, "other.yaml")
    assert cli.main(["reference", "--check", str(mine)]) == 0
    # a file made before the hardware and the node figures were recorded says what it lacks, in the line
    assert capsys.readouterr().out == (
        f"{mine}: this host (cpu '{fingerprint.this_host()}') matches; the file lacks the hardware (matched by the "
        "CPU's model name alone) and node figures (the node is not judged before the network): remake it with "
        "`jitterbench reference` (docs/references.md)\n")
    assert cli.main(["reference", "--check", str(other)]) == 1
    assert f"{other}: not of this host (cpu '{fingerprint.this_host()}'): cpu '" in capsys.readouterr().out
    # a run's machine: every fact of its cases; one file matching is enough
    report = run_report(tmp_path, "Other CPU; 64 CPUs")
    assert cli.main(["reference", "--check", str(mine), str(other), str(report)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{mine}: not of the run's machine: cpu 'Other CPU; 64 CPUs' here")
    assert out[1].startswith(f"{other}: the run's machine matches; the file lacks the hardware")


@pytest.mark.parametrize("fp,message", [
    ("AMD", "fingerprint: expected a mapping with the system's name"),
    ({"system": "local", "cpu": "AMD EPYC"}, "fingerprint: cpu, hardware and hosts must be lists of strings"),
    ({"system": "local", "nodes": ["1"]}, "fingerprint: nodes must be a list of node counts"),
    ({"system": "local", "mpi_library": ["Open MPI"]},
     "fingerprint: mpi_library must map each environment to a list of strings"),
    *(({"system": "local", "launches": launches},
       "fingerprint: launches must map each check to a list of launch counts or rounds x launches, as 5 or 5x1")
      for launches in ("5x1", {"HaloCheck": "5x1"}, {"HaloCheck": ["5 x 1"]}, {"HaloCheck": [0]})),
])
def test_a_malformed_fingerprint_is_one_line_naming_it(tmp_path, capsys, fp, message):
    path = reference_file(tmp_path, fp)
    with pytest.raises(references.ReferenceFileError, match=message):
        references.load(path)
    assert cli.main(["reference", "--check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


# The hardware as the benchmarks print it ('# hardware:', src/core/hardware.c), here and in two other hosts
# that a hypervisor shows alike as 'AMD EPYC; 2 CPUs'
MILAN = "vendor=AuthenticAMD family=25 model=1 stepping=1 l1d=32K l1i=32K l2=512K l3=32768K cpus=2 hypervisor=KVM"
GENOA = "vendor=AuthenticAMD family=25 model=17 stepping=1 l1d=32K l1i=32K l2=1024K l3=32768K cpus=2 hypervisor=KVM"
ROME = "vendor=AuthenticAMD family=23 model=49 stepping=0 l1d=32K l1i=32K l2=512K l3=16384K cpus=2 hypervisor=KVM"


def test_the_hardware_is_matched_fact_by_fact_and_each_differing_fact_named():
    fp = {**FP, "hardware": [MILAN]}
    assert fingerprint.differences(fp, {**HERE, "hardware": MILAN}, "openmpi") == []
    # the same facts in another order are the same hardware
    assert fingerprint.differences(fp, {**HERE, "hardware": " ".join(reversed(MILAN.split()))}, "openmpi") == []
    assert fingerprint.differences(fp, {**HERE, "hardware": GENOA}, "openmpi") == [
        "hardware: model 17 here, the references' 1, l2 1024K here, the references' 512K"]
    # against several, the nearest is named; a fact one side lacks is named too
    assert fingerprint.differences({**FP, "hardware": [ROME, GENOA]}, {**HERE, "hardware": MILAN}, "openmpi") == [
        "hardware: model 1 here, the references' 17, l2 512K here, the references' 1024K"]
    assert fingerprint.differences(fp, {**HERE, "hardware": MILAN.replace(" hypervisor=KVM", "")}, "openmpi") == [
        "hardware: hypervisor (none) here, the references' KVM"]
    # a file made before the hardware was recorded, or a benchmark that does not say it: the model name decides
    assert fingerprint.differences(FP, {**HERE, "hardware": GENOA}, "openmpi") == []
    assert fingerprint.differences(fp, HERE, "openmpi") == []


def test_a_file_says_what_it_lacks():
    bounded = {"HaloCheck": {"$index": ["$partition"], "local:default": {"node_probe_us": [2000.0, None, 0.05, "us"]}}}
    assert fingerprint.lacks(None) == []  # a paper's file: no machine to lack anything of
    assert fingerprint.lacks({**FP, "hardware": [MILAN]}, {"fingerprint": {}, **bounded}) == []
    assert fingerprint.lacks(FP, {"fingerprint": FP}) == [
        "the hardware (matched by the CPU's model name alone)", "node figures (the node is not judged before the network)"]
    assert fingerprint.lacks({**FP, "hardware": [MILAN]}) == []


def test_the_node_rule_on_known_inputs():
    """A case's node figures against their references: past where the ratio is above the bound, by
    exactly the factor; within where it is not; a figure without a bound or reference is neither."""
    refs = {"node_probe_us": (1742.0, None, 0.05, "us"), "node_pair_ns": (71.0, None, 0.6, "ns")}
    hosts = {"node_probe_us": "vm", "node_pair_ns": "vm"}
    slower = fingerprint.node_finding({"node_probe_us": 1742.0 * 1.27, "node_pair_ns": 71.0 * 1.9}, refs, hosts)
    assert set(slower["past"]) == {"node_probe_us", "node_pair_ns"} and slower["within"] == {}
    assert slower["past"]["node_probe_us"]["ratio"] == pytest.approx(1.27)
    assert slower["past"]["node_pair_ns"]["bound"] == pytest.approx(1.6)
    assert fingerprint.node_said(slower) == (
        "node first: vm computes 1.27x slower than in the references' runs (node_probe_us 2212 us against 1742, "
        "bound 1.05x); vm holds its CPUs 1.90x farther apart than in the references' runs (node_pair_ns 134.9 ns "
        "against 71, bound 1.6x): the node moved, not the network; nothing of this case was judged")
    inside = fingerprint.node_finding({"node_probe_us": 1742.0 * 1.0499, "node_pair_ns": 71.0 * 1.6}, refs, hosts)
    assert inside["past"] == {} and set(inside["within"]) == {"node_probe_us", "node_pair_ns"}
    one = fingerprint.node_finding({"node_probe_us": 1742.0 * 1.06, "node_pair_ns": 71.0}, refs, hosts)
    assert list(one["past"]) == ["node_probe_us"] and list(one["within"]) == ["node_pair_ns"]
    assert fingerprint.node_said(one).endswith(
        "nothing of this case was judged (within their bounds: vm holds its CPUs 1.00x farther apart than in the "
        "references' runs (node_pair_ns 71 ns against 71, bound 1.6x))")
    # no bound (too noisy to assert), no reference: not judged either way
    unbounded = {"node_probe_us": (1742.0, None, None, "us"), "node_pair_ns": (0, None, 0.5, "ns")}
    assert fingerprint.node_finding({"node_probe_us": 9999.0, "node_pair_ns": 500.0}, unbounded, hosts) == {
        "past": {}, "within": {}}
