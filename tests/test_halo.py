"""jb-halo under real MPI launchers: patterns, placement, statistics, errors."""
from __future__ import annotations

import math
import os
import re
import socket

import pytest

from conftest import assert_rejected, openmpi_with, run_benchmark

pytestmark = pytest.mark.mpi

PATTERNS = ["two-phase", "irecv-isend", "isend-recv", "sendrecv"]


def assert_ordered(result):
    assert result["max_us"] >= result["avg_us"] >= result["min_us"] > 0


@pytest.mark.parametrize("np,args", [
    (4, ["--size", "8,100K"]),                                    # eager and rendezvous sizes
    (9, ["--px", "3", "--ns-size", "848", "--ew-size", "1016", "--non-periodic"]),  # the Jacobi halos
    (16, ["--px", "4", "--tasks-per-node", "4", "--placement", "bunched"]),
    (6, ["--px", "1"]),                                           # east and west are the task itself
])
def test_every_pattern_delivers_intact_payloads(halo, np, args):
    run = halo(np, "--validate", "--calls", "20", "--warmup", "2", *args)
    assert run.returncode == 0, run.stderr
    assert "every payload arrived intact" in run.stdout
    sizes = {(r["ns_size"], r["ew_size"]) for r in run.results()}
    assert [r["pattern"] for r in run.results()] == PATTERNS * len(sizes)
    for r in run.results():
        assert_ordered(r)


@pytest.mark.parametrize("np,placement,expected", [
    (64, "row", 32),      # the study: a node holds a row of 16, north and south are off-node
    (128, "bunched", 16),  # the study: a 4x4 block's perimeter
    (64, "bunched", 8),    # 16x4 grid: the block spans all rows, north/south wrap onto the node
])
def test_off_node_send_recvs_per_node_match_the_placement(tmp_path, np, placement, expected):
    # the count comes from the layout (src/halo/decomp.c) whatever the MPI: one MPI launches it
    # (MPICH took 45 s for 128 spinning ranks on two cores)
    run = run_benchmark(openmpi_with("halo"), np, ["--tasks-per-node", "16", "--placement", placement, "--pattern",
                                                   "c", "--calls", "3", "--warmup", "1"], json_path=tmp_path / "h.json")
    assert run.returncode == 0, run.stderr
    assert run.doc["config"]["off_node_per_node"] == expected
    assert run.doc["metadata"]["nodes"] == np // 16
    assert run.results()[0]["off_node_per_node"] == expected
    assert_ordered(run.results()[0])


def test_real_node_detection_on_one_machine(halo):
    run = halo(4, "--calls", "5", "--pattern", "b")
    assert run.returncode == 0, run.stderr
    meta = run.doc["metadata"]
    assert (meta["nodes"], meta["tasks_per_node"], meta["virtual_nodes"]) == (1, 4, False)
    assert len(meta["node_list"]) == 1
    assert run.doc["config"]["off_node_per_node"] == 0


def test_injected_noise_reaches_the_per_call_max(halo):
    """The study's argument: with p per task, a call's MAX holds the noise with 1 - (1 - p)^N."""
    calls, p, wait_us, tasks = 500, 0.1, 5000, 2
    run = halo(tasks, "--inject", f"{p}:{wait_us}", "--series", "--calls", str(calls), "--pattern", "c",
               "--seed", "7")
    assert run.returncode == 0, run.stderr
    result = run.results()[0]
    injected = [n > 0 for n in result["injected_tasks_per_call"]]
    slow = [m >= wait_us for m in result["series"]["max_us"]]
    # the calls that got noise on any task: binomial with 1 - (1 - p)^N
    expected = 1 - (1 - p) ** tasks
    sd = math.sqrt(expected * (1 - expected) / calls)
    assert abs(sum(injected) / calls - expected) < 4 * sd, (sum(injected) / calls, expected)
    # exact: the wait is inside the timed region, so every such call's MAX holds it
    assert all(s for s, i in zip(slow, injected) if i)
    # the share of calls whose MAX exceeds the wait: the injected ones, plus what the machine's
    # own noise adds (it can only add), so within the bounds from below
    assert sum(slow) / calls > expected - 4 * sd
    assert sum(result["injected_tasks_per_call"]) == result["injected_task_calls"]
    n = tasks * calls
    assert abs(result["injected_task_calls"] - p * n) < 4 * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("rank_order", [0, 1])
def test_a_wait_injected_on_one_task_names_it_and_its_node_the_latest(halo, rank_order):
    """Issue 30's known answer: a wait injected on task 1 (of two, each its own virtual node) makes
    it the late sender the other waits for: named with its node as the one that waited before communicating, in
    about the injected share of calls.  (Whose call took longest cannot tell them apart: the
    waiter's time exceeds the late task's by a message's latency, less than the clocks resolve.)
    With the roles rotated (--rank-order 1) world rank 1 plays task 0, and is still the one named:
    a task and its node are named by their slot."""
    # p = 0.6: the waits decide 180 calls or so, a share the test names even were every other
    # decided call the other task's (one CI run's MPICH gave task 0 most of them)
    calls, p, wait_us = 300, 0.6, 2000
    run = halo(2, "--tasks-per-node", "1", "--inject", f"{p}:{wait_us}", "--inject-tasks", "1", "--calls",
               str(calls), "--pattern", "isend-recv", "--seed", "5", "--rank-order", str(rank_order))
    assert run.returncode == 0, run.stderr
    assert run.doc["config"]["inject_tasks"] == [1] and run.doc["config"]["rank_order"] == rank_order
    assert run.doc["config"].get("task_0_world_rank", 0) == rank_order
    result = run.results()[0]
    waits = result["injected_task_calls"]  # on task 1 only: p x calls, within 4 sd
    assert abs(waits - p * calls) < 4 * math.sqrt(calls * p * (1 - p))
    latest, slowest = result["latest"], result["slowest"]
    for found in (latest, slowest):  # exact: counts of the decided calls, per node, over both nodes
        assert found["node_tasks"] == [1, 1] and sum(found["node_calls"]) == found["decided_calls"] <= calls
        assert found["rate"] == 0.01
    assert [e["task"] for e in latest["tasks"]] == [1] and [e["node"] for e in latest["nodes"]] == [1]
    # a wait of 2 ms decides each call it is in: the task's share of all calls is the injected share
    # (a few more where the machine itself held task 0 back less than its waits)
    held = latest["tasks"][0]["calls"]
    assert waits - 3 <= held <= latest["decided_calls"]
    assert latest["tasks"][0]["share_of_all_calls"] == pytest.approx(held / calls)
    assert re.search(r"^# latest: in \d+ of 300 calls .*: nodes: node 1 .* tasks: task 1 ", run.stdout, re.M)


def test_the_rank_order_rotates_the_roles_over_the_same_placement(halo):
    """--rank-order N (launch N of a case): on two virtual nodes of three ranks, orders 1 to 6 put
    task 0 on each of the six slots once (the node rotated by N, the rank within it by N // 2); every order
    keeps the placement (each world rank on its node, in MPI_COMM_WORLD's order), the grid's
    off-node neighbours, intact payloads and the traced world ranks."""
    slots = []
    for order in range(7):
        run = halo(6, "--tasks-per-node", "3", "--calls", "5", "--pattern", "isend-recv", "--validate",
                   "--trace-tasks", "0,5", "--rank-order", str(order))
        assert run.returncode == 0, run.stderr
        config, placement = run.doc["config"], run.doc["metadata"]["placement"]
        # traced by world rank, from wherever the order put them
        assert {k: len(v) for k, v in run.results()[0]["traces"].items()} == {"0": 5, "5": 5}
        assert config["rank_order"] == order and config["off_node_per_node"] == 2
        assert [node for node, _ in placement["rank_node_cpus"]] == [0, 0, 0, 1, 1, 1]
        if order:
            slots.append(config["task_0_world_rank"])
            node, rank = (-order) % 2, (-(order // 2)) % 3  # the nodes by N, a node's ranks by N // nodes
            assert re.search(rf"^# rank_order: {order} \(the roles rotated\): task 0 is world rank {3 * node + rank}, "
                             rf"on node {node} of the list$", run.stdout, re.M), run.stdout
        else:
            assert "task_0_world_rank" not in config and "# rank_order" not in run.stdout
    assert slots == [3, 2, 5, 1, 4, 0]


def test_json_document_shape(halo):
    calls = 30
    run = halo(4, "--calls", str(calls), "--series", "--trace-tasks", "0,3", "--size", "1K,2K",
               "--pattern", "a,d")
    assert run.returncode == 0, run.stderr
    doc = run.doc
    assert set(doc) >= {"benchmark", "config", "metadata", "results"} and doc["benchmark"] == "halo"
    meta = doc["metadata"]
    for key in ("mpi_library", "ranks", "nodes", "tasks_per_node", "node_list", "environment",
                "command_line", "benchmark_version", "timer", "finished_utc"):
        assert key in meta, key
    assert meta["ranks"] == 4 and meta["timer"]["resolution_s"] > 0
    assert [(r["pattern"], r["ns_size"]) for r in doc["results"]] == [
        ("two-phase", 1024), ("sendrecv", 1024), ("two-phase", 2048), ("sendrecv", 2048)]
    for r in doc["results"]:
        for key in ("max_us", "avg_us", "min_us", "p50_us", "p90_us", "p99_us", "p999_us", "jitter"):
            assert isinstance(r[key], float) and math.isfinite(r[key]), key
        assert r["p50_us"] <= r["p99_us"] <= r["worst_us"]
        assert r["jitter"] == pytest.approx(r["max_us"] / r["avg_us"], rel=1e-6)
        assert r["histogram"]["total"] == 4 * calls
        assert sum(b[2] for b in r["histogram"]["bins"]) == 4 * calls
        series = r["series"]
        assert len(series["max_us"]) == len(series["avg_us"]) == calls
        assert r["max_us"] == pytest.approx(sum(series["max_us"]) / calls, rel=1e-4)
        assert all(m >= a for m, a in zip(series["max_us"], series["avg_us"]))
        assert set(r["traces"]) == {"0", "3"} and len(r["traces"]["3"]) == calls
        # a traced task's call never exceeds that call's maximum over tasks
        assert all(t <= m * (1 + 1e-5) for t, m in zip(r["traces"]["3"], series["max_us"]))


def test_summary_lines_carry_the_json_values(halo):
    run = halo(2, "--calls", "10")
    lines = [l.split() for l in run.stdout.splitlines() if l.startswith("JB_RESULT ")]
    assert len(lines) == len(run.results()) == 4
    for fields, r in zip(lines, run.results()):
        kv = dict(f.split("=", 1) for f in fields[1:])
        assert kv["benchmark"] == "halo" and kv["pattern"] == r["pattern"]
        assert float(kv["max_us"]) == pytest.approx(r["max_us"], rel=1e-5)
        assert float(kv["avg_us"]) == pytest.approx(r["avg_us"], rel=1e-5)


BAD_OPTIONS = [
    (["--pattern", "e"], "unknown name 'e'"),
    (["--size", "4X"], "'4X' is not a size"),
    (["--calls", "0"], "--calls: 0 is out of range"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--calls"], "needs a value"),
    (["--px", "5"], "do not decompose into 5 east-west"),
    (["--placement", "diagonal"], "unknown name 'diagonal'"),
    (["--placement", "bunched", "--block", "3x5"], "3x5 block"),
    (["--block", "2x2"], "--block goes with --placement bunched"),
    (["--tasks-per-node", "8"], "does not divide"),
    (["--inject", "2:5"], "probability"),
    (["--trace-tasks", "99"], "--trace-tasks: 99 is out of range"),
    (["stray"], "unexpected argument 'stray'"),
    (["--rounds", "0"], "--rounds: 0 is out of range"),
    (["--rounds", "99999999999999999999"], "--rounds"),
    (["--order", "random"], "--order: 'random' is not shuffled or given"),
    (["--rank-order", "-1"], "--rank-order: -1 is out of range"),
    (["--target-width", "0"], "--target-width: 0 is out of range"),
    (["--target-width", "nan"], "--target-width"),
]


@pytest.mark.parametrize("np", [1, 3, 4])
@pytest.mark.parametrize("args,message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_input_gives_one_clear_line_and_no_results(mpi, tmp_path, np, args, message):
    assert_rejected(mpi, np, args, message, "halo", tmp_path)


def test_unwritable_json_path_fails_before_the_run(mpi, tmp_path):
    run = run_benchmark(mpi, 2, ["--calls", "5"], json_path=tmp_path / "missing" / "x.json", timeout=60)
    assert run.returncode != 0
    assert len(run.error_lines()) == 1 and "cannot write" in run.error_lines()[0]
    assert "JB_RESULT" not in run.stdout


def test_help_prints_usage_once(mpi):
    run = run_benchmark(mpi, 2, ["--help"], timeout=60)
    assert run.returncode == 0
    assert run.stdout.count("usage: mpirun -np N jb-halo") == 1
    assert "--placement" in run.stdout and "--inject" in run.stdout
    # each option's default stands in its own entry: the option's line and the indented
    # lines under it ($JB_TIMEOUT once stood under --window)
    entries = {entry.split()[0]: entry for entry in re.split(r"\n(?=  -)", run.stdout) if entry.startswith("  -")}
    assert "[$JB_TIMEOUT, else 0]" in entries["--timeout"], entries["--timeout"]
    assert "[1000]" in entries["--window"] and "JB_TIMEOUT" not in entries["--window"], entries["--window"]
    assert "[barrier]" in entries["--sync"]


def test_the_variants_take_turns_in_shuffled_rounds_drawn_from_the_seed(halo):
    """Hoefler and Belli's randomised order: each round runs every variant's share of the calls
    in an order drawn from --seed; every variant gets exactly --calls timed calls; the results
    are listed as with --order given, which keeps the nested loops in one round."""
    args = ("--size", "8,1K", "--calls", "23", "--warmup", "1", "--rounds", "5")
    first, same, other = (halo(2, *args, "--seed", seed) for seed in ("7", "7", "8"))
    order = first.doc["config"]["order"]
    assert (order["method"], order["seed"], order["rounds"], order["variants"]) == ("shuffled", 7, 5, 8)
    assert len(order["orders"]) == 5 and all(sorted(turns) == list(range(8)) for turns in order["orders"])
    assert same.doc["config"]["order"]["orders"] == order["orders"] != other.doc["config"]["order"]["orders"]
    assert first.doc["config"]["order_timed_calls"] == [23] * 8
    assert [r["calls"] for r in first.results()] == [23] * 8
    given = halo(2, *args, "--order", "given")
    assert given.doc["config"]["order"]["orders"] == [list(range(8))]
    assert given.doc["config"]["order_timed_calls"] == [23] * 8
    listed = [(r["ns_size"], r["pattern"]) for r in given.results()]
    assert listed == [(r["ns_size"], r["pattern"]) for r in first.results()] == [
        (size, p) for size in (8, 1024) for p in PATTERNS]


def test_the_load_beside_the_run_is_recorded_before_and_after(halo):
    run = halo(2, "--calls", "5", "--pattern", "a")
    assert run.returncode == 0, run.stderr
    load = run.doc["metadata"]["load"]
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("# load: ")]
    for when in ("before", "after"):
        sample = load[when]
        assert set(sample) == {"node", "host", "load1", "runnable", "tasks_total", "steal_pct", "cpus", "job_tasks",
                               "job_cpus", "disturbed", "probe_us", "probe_node", "window_us", "window_node",
                               "window_min_us", "pair_ns", "pair_node"}
        # the node that held the slowest probe and the farthest pair (MAXLOC), named in the line too
        host = socket.gethostname()
        assert sample["probe_node"] == sample["window_node"] == sample["pair_node"] == host
        assert f"{when}_probe_node={sample['probe_node']} " in line and f"{when}_pair_node={sample['pair_node']}" in line
        # the job's speed: the slowest task's probe, in the line to its printed tenth; how far apart
        # its CPUs are: a round trip between the node's two tasks
        for field in ("probe_us", "window_us", "window_min_us", "pair_ns"):
            printed = float(re.search(rf" {when}_{field}=(\S+)", line)[1])
            assert sample[field] > 0 and printed == pytest.approx(sample[field], abs=0.06)
        # the window holds the 5 timings whose median probe_us is: at least 3 of them at least as long;
        # the fastest task's window is at most the slowest's
        assert sample["window_us"] >= 3 * sample["probe_us"] and sample["window_min_us"] <= sample["window_us"]
        assert (sample["node"], sample["job_tasks"], sample["cpus"]) == (0, 2, os.cpu_count())
        assert sample["runnable"] >= 0 and sample["tasks_total"] >= sample["runnable"] and sample["load1"] >= 0
        assert f"{when}_runnable={sample['runnable']} " in line and f"{when}_node={sample['host']} " in line
        # the rule's verdict, the same in the line and the document (tests/test_launches.py: the rule itself)
        assert f"{when}_disturbed={int(sample['disturbed'])} " in line
    # the node's hardware as the OS tells it, in the line and the document: the fingerprint's facts
    (hardware,) = [line[len("# hardware: "):] for line in run.stdout.splitlines() if line.startswith("# hardware: ")]
    assert hardware == run.doc["metadata"]["hardware"]
    facts = dict(word.split("=", 1) for word in hardware.split())
    assert facts["cpus"] == str(os.cpu_count()) and facts["hypervisor"]
    # a node of one task has no two CPUs to measure between
    alone = halo(1, "--calls", "5", "--pattern", "a")
    assert alone.returncode == 0, alone.stderr
    assert [alone.doc["metadata"]["load"][when]["pair_ns"] for when in ("before", "after")] == [-1, -1]


def test_more_ranks_than_cpus_given_is_recorded_and_warned(halo):
    """Issue 32: 4 ranks on 2 cores time-slice, and the result must say so."""
    np = 2 * (os.cpu_count() or 1)
    run = halo(np, "--calls", "3", "--pattern", "a", env={"OMPI_MCA_hwloc_base_binding_policy": "none"})
    assert run.returncode == 0, run.stderr
    placement = run.doc["metadata"]["placement"]
    assert placement["nodes_oversubscribed"] == 1
    assert placement["oversubscribed"]["ranks"] == np and placement["oversubscribed"]["cpus"] <= os.cpu_count()
    warnings = [line for line in run.stdout.splitlines() if line.startswith("# warning: oversubscribed: ")]
    assert len(warnings) == 1 and f"runs {np} ranks on the" in warnings[0]
    # the round trip between two tasks that share a CPU, within its time budget: measured, no hang
    assert all(run.doc["metadata"]["load"][when]["pair_ns"] > 0 for when in ("before", "after"))
    quiet = halo(2, "--calls", "3", "--pattern", "a")
    assert quiet.doc["metadata"]["placement"]["nodes_oversubscribed"] == 0
    assert "# warning: oversubscribed" not in quiet.stdout


def test_a_stopping_rule_ends_each_variant_at_a_round_once_its_median_is_narrow_enough(halo):
    """--target-width W: a variant takes turns until the distribution-free 95 % interval of the
    median of its per-call MAX is within W of it (relative half-width), --calls the cap; its
    result holds the calls made and the width reached."""
    calls, rounds, target = 600, 6, 0.05
    run = halo(2, "--size", "8,1K", "--calls", str(calls), "--rounds", str(rounds), "--target-width", str(target))
    assert run.returncode == 0, run.stderr
    share_ends = {calls * r // rounds for r in range(1, rounds + 1)}
    assert run.doc["config"]["target_width"] == target
    for result, timed in zip(run.results(), run.doc["config"]["order_timed_calls"]):
        assert result["calls"] == timed and timed in share_ends
        assert result["median_halfwidth"] <= target or timed == calls  # stopped because reached, or capped
    plain = halo(2, "--size", "8", "--calls", "20", "--pattern", "a")
    assert "median_halfwidth" not in plain.results()[0]  # no rule, no field
