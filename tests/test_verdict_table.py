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


def test_a_check_with_nothing_bounded_is_not_judged_says_why_and_still_shows_max_and_avg(tmp_path, capsys):
    """ReFrame passes a case none of whose variables it asserted; the table says "not judged", never pass."""
    noisy = [halo_case("openmpi", "pass", 11.0, 9.0, upper=None)]   # one run, two sizes
    noisy[0]["perfvalues"].update(halo_case("openmpi", "pass", 50.0, 40.0, size=40960, upper=None)["perfvalues"])
    foreign = [{**halo_case("mpich", "pass", 12.0, 8.0, upper=None),
                "references_from": "none of this machine: refs/local.yaml: cpu 'X' here, the references' 'Y'"}]
    no_file = [{**halo_case("openmpi-ucx", "pass", 12.0, 8.0, upper=None),
                "references_from": "none: no file for this system"}]
    maxima_only = [{**halo_case("intelmpi", "pass", 12.0, 8.0, upper=None),
                    "not_asserted": "max_isend-recv_4096,avg_isend-recv_4096,jitter_isend-recv_4096"}]
    rows = {line.split()[1]: line for line in table(capsys, str(write(tmp_path, noisy + foreign + no_file + maxima_only)))[1:]}
    # the file's references left unbounded (not_assertable): MAX and AVG of the first swept value
    assert rows["openmpi"].split()[2:] == ["not", "judged", "1/1", "(not", "assertable", "here)", "4096", "-", "-",
                                           "11.0", "9.0"]
    assert "not judged  1/1     (no references of this machine)" in rows["mpich"]
    assert rows["mpich"].split()[-2:] == ["12.0", "8.0"]
    assert "not judged  1/1     (no references of this machine)" in rows["openmpi-ucx"]  # no file at all
    assert "not judged  1/1     (none asserted)" in rows["intelmpi"]   # what the rules never assert (not_asserted)
    assert " pass " not in "".join(rows.values())


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


def peer_case(environ, result, nodes, slowest, launches=10, tasks_per_node=1, num_tasks=None, placement="row"):
    """A two-node HaloCheck on the virtual cluster: no node figure referenced (its nodes share their
    CPUs), each launch's load sample naming the node of its slowest probe window (slowest: one node,
    or a list of one per launch), that window 2x the fastest task's; the median probe names another."""
    case = halo_case(environ, result, 11.0 if result == "pass" else 30.0, 8.0, placement=placement)
    names = slowest if isinstance(slowest, list) else [slowest] * launches
    case.update(system="vcluster", partition="vc", node_list=",".join(nodes), num_tasks_per_node=str(tasks_per_node),
                num_tasks=str(num_tasks or tasks_per_node * len(nodes)),
                load_before="; ".join(f"node={nodes[0]} runnable=2 disturbed=0 probe_us=2100.0 probe_node={nodes[0]} "
                                      f"window_us=20000.0 window_node={name} window_min_us=10000.0 pair_ns=-1.0 "
                                      f"pair_node={nodes[0]}" for name in names))
    return case


def test_a_node_slowest_among_its_peers_launch_after_launch_is_named_first(tmp_path, capsys):
    """Node first without references (jitterbench.peers): node2 the slowest in all 30 of the
    launches it ran in, where chance alone gives 15 (p = 0.5^30, under 0.01 over 3 nodes): the table's
    first line names it, every case on it is inconclusive, passed or failed, and a case on node1 and
    node3 alone is judged (FAIL).  A case whose nodes hold unequal task counts is left out of the
    count, as is one whose node figures are referenced."""
    cases = [peer_case("openmpi", "pass", ["node1", "node2"], "node2"),
             peer_case("mpich", "fail", ["node2", "node3"], "node2"),
             peer_case("intelmpi", "pass", ["node1", "node2"], "node2"),
             peer_case("openmpi", "fail", ["node1", "node3"], ["node1", "node3"] * 5, placement="column"),
             peer_case("mpich", "pass", ["node1", "node3"], "node1", tasks_per_node=2, num_tasks=3, placement="bunched")]
    referenced = peer_case("intelmpi", "pass", ["node1", "node3"], "node3", placement="column")
    referenced["perfvalues"]["vcluster:vc:node_probe_us"] = [2000.0, 2000.0, None, 0.2, "us", "pass"]
    cases.append(referenced)
    path = write(tmp_path, cases)
    assert cli.main(["table", str(path)]) == 0  # the FAIL on node1 and node3 stands
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "Node first: node2 was the slowest node in 30 of the 30 launches it ran in (chance alone: 15.0; p 9e-10 < "
        "0.0033, the rate 0.01 over the nodes), its probe's window 2.00x the fastest task's (median): the node moved, not the "
        "network; 3 case(s) on it not judged (inconclusive). Find what changed on the node (its firmware, power or "
        "clock settings, what else runs there)")
    rows = {(line.split()[0], line.split()[1]): line.split() for line in lines[2:]}
    # intelmpi: its case on node2 not judged, its referenced one passed; mpich: its failure on node2 not
    # judged, its bunched case passed; openmpi: its pass on node2 not judged, its failure elsewhere a FAIL
    assert [rows[("HaloCheck", e)][2:4] for e in ("intelmpi", "mpich", "openmpi")] == [
        ["inconclusive", "1/2"], ["inconclusive", "1/2"], ["FAIL", "0/2"]]


@pytest.mark.parametrize("hits,named", [(26, False), (30, True)])
def test_the_peer_rule_names_a_node_where_chance_leaves_it_under_the_rate(hits, named):
    """The sign test on known counts: two nodes, 40 launches each; the named node's upper tail is
    the binomial's (every launch's chance 1/2): 26 of 40 is p 0.040, above 0.01 over 2 nodes; 30 is
    p 0.0011, under it."""
    from scipy.stats import binom

    from jitterbench import peers
    launches = [(["a", "b"], "a" if i < hits else "b", 1.5) for i in range(40)]
    found = peers.slow_nodes(launches)
    assert ("a" in found) is named and "b" not in found
    p = binom.sf(hits - 1, 40, 0.5)
    assert bool(p < 0.005) is named
    if named:
        assert found["a"] == {"slowest": hits, "launches": 40, "chance": 20.0, "p": pytest.approx(p), "rate": 0.01,
                              "alpha": 0.005, "lag": 1.5}
