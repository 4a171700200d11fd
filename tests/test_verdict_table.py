"""`jitterbench table`: the verdict first, one line per check and MPI in 120 columns, on a run
report whose values are known."""
from __future__ import annotations

import json

import pytest

from jitterbench import cli

pytestmark = pytest.mark.unit


def halo_case(environ, result, max_us, avg_us, pattern="isend-recv", size=4096, upper=0.5, placement="row"):
    ref = {"max": 10.0, "avg": 8.0}
    var = lambda q: f"{q}_{pattern}_{size}"  # noqa: E731
    return {"display_name": f"HaloCheck %nodes=1 %tasks_per_node=2 %placement={placement} %eager_limit=default",
            "nodes": 1, "tasks_per_node": 2, "placement": placement, "eager_limit": "default", "system": "local",
            "partition": "default", "environ": environ, "result": result, "fixture": False,
            "perfvalues": {f"local:default:{var('max')}": [max_us, ref["max"], None, upper, "us", result],
                           f"local:default:{var('avg')}": [avg_us, ref["avg"], None, upper, "us", result],
                           f"local:default:{var('jitter')}": [max_us / avg_us, 1.2, None, None, "MAX/AVG", result]}}


def pingpong_case(environ, cycle, speed):
    return {"display_name": "PingPongCheck %nodes=1 %tasks_per_node=2 %sweep=sizes", "nodes": 1, "tasks_per_node": 2,
            "sweep": "sizes", "system": "local", "partition": "default", "environ": environ, "result": "pass",
            "perfvalues": {"local:default:cycle_send_8_n1": [cycle, 2.0, None, 1.0, "us", "pass"],
                           "local:default:speed_send_8_n1": [speed, 16.0, -0.5, None, "MB/s", "pass"]}}


def write(tmp_path, cases):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"session_info": {"version": "4.10.4", "time_start_unix": 1795323075},
                                "runs": [{"testcases": cases}]}))
    return path


def table(capsys, *argv):
    assert cli.main(["table", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_one_line_per_check_and_mpi_names_the_worst_variable_its_ratio_and_detectable_slowdown(tmp_path, capsys):
    path = write(tmp_path, [halo_case("openmpi", "pass", 11.0, 9.0), halo_case("mpich", "fail", 30.0, 8.0),
                            halo_case("mpich", "pass", 12.0, 8.0, pattern="sendrecv", placement="bunched"),
                            pingpong_case("openmpi", 2.2, 4.0)])
    lines = table(capsys, str(path))
    assert max(map(len, lines)) <= 120
    rows = {(line.split()[0], line.split()[1]): line.split() for line in lines[1:]}
    assert len(lines) == 1 + 3 and lines[0].split()[:5] == ["check", "MPI", "verdict", "passed", "worst"]
    # openmpi: max 11/10 = 1.10x against a bound of 1.5x, avg 9/8 = 1.125x: avg is nearer its bound
    assert rows[("HaloCheck", "openmpi")][2:6] == ["pass", "1/1", "avg", "-"]
    assert rows[("HaloCheck", "openmpi")][6:] == ["1.12x", "1.50x", "11.0", "9.0"]
    # mpich: one of two cases failed, max at 3x its reference; where: what tells the two cases apart
    mpich = rows[("HaloCheck", "mpich")]
    assert mpich[2:6] == ["FAIL", "1/2", "max", "placement=row"] and mpich[7:9] == ["3.00x", "1.50x"]
    assert mpich[6].startswith("pattern=isend")  # cut with '~' where the line would pass 120
    assert mpich[-2:] == ["30.0", "8.0"]
    # a bandwidth is worse below: 16/4 = 4x slower, past its bound of 2x; ping-pong's MAX is its cycle
    assert rows[("PingPongCheck", "openmpi")][4:] == ["speed", "-", "4.00x", "2.00x", "2.2", "-"]


def test_a_check_with_nothing_bounded_says_why_and_still_shows_max_and_avg(tmp_path, capsys):
    noisy = [halo_case("openmpi", "pass", 11.0, 9.0, upper=None)]   # one run, two sizes
    noisy[0]["perfvalues"].update(halo_case("openmpi", "pass", 50.0, 40.0, size=40960, upper=None)["perfvalues"])
    foreign = [{**halo_case("mpich", "pass", 12.0, 8.0, upper=None),
                "references_from": "none of this machine: refs/local.yaml: cpu 'X' here, the references' 'Y'"}]
    maxima_only = [{**halo_case("intelmpi", "pass", 12.0, 8.0, upper=None),
                    "not_asserted": "max_isend-recv_4096,avg_isend-recv_4096,jitter_isend-recv_4096"}]
    rows = {line.split()[1]: line for line in table(capsys, str(write(tmp_path, noisy + foreign + maxima_only)))[1:]}
    # the file's references left unbounded (not_assertable): MAX and AVG of the first swept value
    assert rows["openmpi"].split()[4:] == ["(not", "assertable", "here)", "4096", "-", "-", "11.0", "9.0"]
    assert "(no references of this machine)" in rows["mpich"] and rows["mpich"].split()[-2:] == ["12.0", "8.0"]
    assert "(none asserted)" in rows["intelmpi"]   # what the rules never assert (not_asserted)


def test_the_at_column_is_cut_to_keep_the_table_within_120_columns(tmp_path, capsys):
    path = write(tmp_path, [halo_case("openmpi", "pass", 11.0, 9.0, pattern="p" + "x" * 150),
                            halo_case("openmpi", "pass", 11.0, 9.0, placement="bunched")])
    lines = table(capsys, str(path))
    assert max(map(len, lines)) == 120 and "~" in lines[1]


def test_all_gives_a_line_per_case_and_swept_value_with_max_and_avg(tmp_path, capsys):
    path = write(tmp_path, [halo_case("openmpi", "pass", 11.0, 9.0), pingpong_case("openmpi", 2.2, 4.0)])
    lines = table(capsys, "--all", str(path))
    assert len(lines) == 3
    halo = lines[1].split()
    assert halo[:2] == ["HaloCheck", "openmpi"] and "pattern=isend-recv" in halo and "msg_size=4096" in halo
    assert halo[-6:] == ["11.0", "9.0", "jitter=1.222", "10", "(inf/+50%)", "pass"]


def test_a_retried_case_is_judged_by_its_last_attempt(tmp_path, capsys):
    failed, passed = halo_case("mpich", "fail", 30.0, 8.0), halo_case("mpich", "pass", 11.0, 8.0)
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"session_info": {"version": "4.10.4", "time_start_unix": 1795323075},
                                "runs": [{"testcases": [failed]}, {"testcases": [passed]}]}))  # --max-retries=1
    (row,) = [line.split() for line in table(capsys, str(path))[1:]]
    assert row[:4] == ["HaloCheck", "mpich", "pass", "1/1"] and row[-2:] == ["11.0", "8.0"]


def test_a_node_finding_comes_first_and_its_cases_are_inconclusive(tmp_path, capsys):
    """Node first: a case whose node figures were past their bounds (the check's node_finding) is
    inconclusive, and the table's first line names the node and each figure, the median of its
    ratios over the cases that found it; the verdict is exit 3, never a FAIL or a pass."""
    def finding(ratio):
        return json.dumps({"past": {"node_probe_us": {"node": "vm", "value": 1742 * ratio, "reference": 1742.0,
                                                      "ratio": ratio, "bound": 1.05}},
                           "within": {"node_pair_ns": {"node": "vm", "value": 80.0, "reference": 71.0,
                                                       "ratio": 80 / 71, "bound": 1.6}}})
    cases = []
    for environ, ratio in (("openmpi", 1.25), ("mpich", 1.27), ("intelmpi", 1.30)):
        case = halo_case(environ, "fail", 30.0, 20.0, upper=None)
        case["node_finding"] = finding(ratio)
        case["fail_reason"] = "performance error: inconclusive: node first: vm computes ..."
        cases.append(case)
    cases.append(pingpong_case("openmpi", 2.2, 16.0))
    path = write(tmp_path, cases)
    assert cli.main(["table", str(path)]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "Node first: vm computes 1.27x slower than in the references' runs (node_probe_us, the median over 3 case(s); "
        "bound 1.05x): the node moved, not the network; 3 case(s) on it not judged (inconclusive). Find what changed "
        "on the node (its firmware, power or clock settings, what else runs there), or make references for it as it "
        "is now (docs/references.md)")
    rows = {(line.split()[0], line.split()[1]): line.split() for line in lines[2:]}
    assert [rows[("HaloCheck", e)][2:8] for e in ("openmpi", "mpich", "intelmpi")] == [
        ["inconclusive", "0/1", "(node", "first:", "not", "judged)"]] * 3
    assert rows[("PingPongCheck", "openmpi")][2] == "pass"
    assert not any("disturbed" in line for line in lines)  # the node's cases are not said to be disturbed


def test_a_failure_on_a_node_another_case_found_moved_is_inconclusive_not_the_networks(tmp_path, capsys):
    """Node first over the run: one case found node vm past its node bounds; another case on vm
    failed its network figures with its node figures within its own, wider, bounds (a probe that
    moves with its own runs): it is inconclusive, the node's line counts it, and nothing FAILs.
    A failure on a node no case found moved (n2) is judged: FAIL."""
    found = halo_case("openmpi", "fail", 30.0, 20.0, upper=None)
    found.update(node_list="vm", fail_reason="performance error: inconclusive: node first: vm computes ...",
                 node_finding=json.dumps({"past": {"node_probe_us": {"node": "vm", "value": 2400.0, "reference": 1742.0,
                                                                     "ratio": 2400 / 1742, "bound": 1.16}},
                                          "within": {}}))
    held_back = halo_case("intelmpi", "fail", 45.0, 20.0, placement="bunched")
    held_back.update(node_list="vm", fail_reason="performance error: max_isend-recv_4096 past its bound",
                     node_finding=json.dumps({"past": {}, "within": {"node_probe_us": {
                         "node": "vm", "value": 2260.0, "reference": 1742.0, "ratio": 1.30, "bound": 1.30}}}))
    path = write(tmp_path, [found, held_back])
    assert cli.main(["table", str(path)]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Node first: vm computes 1.38x slower") and "2 case(s) on it not judged" in lines[0]
    rows = {(line.split()[0], line.split()[1]): line.split() for line in lines[2:]}
    assert rows[("HaloCheck", "intelmpi")][2] == "inconclusive"
    assert not any("disturbed" in line or "FAIL" in line for line in lines)

    elsewhere = dict(held_back, node_list="n2,n3")
    path = write(tmp_path, [found, elsewhere])
    assert cli.main(["table", str(path)]) == 0  # a FAIL: the job's status is ReFrame's
    rows = {(line.split()[0], line.split()[1]): line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows[("HaloCheck", "intelmpi")][2] == "FAIL"
