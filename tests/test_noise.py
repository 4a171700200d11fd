"""jb-noise, the selfish-detour probe: known answers from an interrupter of known period and
length pinned to the probe's core, the trace format the simulators read, per-node summaries."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import given_once, openmpi_with, run_benchmark, run_pinned
from jitterbench.simulate import load_interrupt_trace

pytestmark = pytest.mark.mpi

# The interrupter: every PERIOD it wakes and keeps the core busy for BUSY.  Pinned to the
# probe's core, the probe loses the core for about BUSY once per PERIOD.
INTERRUPTER = """
import os, sys, time
period, busy, total = map(float, sys.argv[1:4])
os.sched_setaffinity(0, {int(sys.argv[4])})
start = time.perf_counter()
k = 1
while time.perf_counter() - start < total:
    time.sleep(max(0.0, start + k * period - time.perf_counter()))
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        pass
    k += 1
"""
PERIOD_S, BUSY_S = 0.010, 0.002


@pytest.fixture
def openmpi():
    return openmpi_with("noise")


def test_an_interrupter_of_known_period_and_length_is_found(openmpi, tmp_path):
    cpu = sorted(os.sched_getaffinity(0))[-1]
    interrupter = subprocess.Popen([sys.executable, "-c", INTERRUPTER, str(PERIOD_S), str(BUSY_S), "8", str(cpu)])
    try:
        time.sleep(0.3)  # the interrupter is pinned and ticking
        trace, doc = tmp_path / "trace.txt", tmp_path / "n.json"
        # one rank on the interrupter's core; a threshold well below the interrupter's 2 ms and
        # above the kernel's own ticks.  The probe runs at nice 19 so that the interrupter preempts
        # it on waking, as an interrupt does: at equal priority Linux's EEVDF scheduler (6.6+)
        # delays every other wake-up by a slice, and the interrupter's period, not the probe, is
        # then what is wrong (7.3/12.7 ms alternating).
        run = run_pinned(openmpi, 1, cpu, [openmpi.binary("noise"), "--duration", "3", "--threshold", "200",
                                           "--trace", trace, "--json", doc], nice=19, timeout=60)
    finally:
        interrupter.kill()
        interrupter.wait()
    assert run.returncode == 0, run.stderr
    result = json.loads(doc.read_text())
    node = result["results"][0]
    assert result["metadata"]["placement"]["rank_node_cpus"][0][1] == str(cpu)
    # the interrupter's period and length, within a tenth and a quarter; other noise of the
    # machine adds detours of its own, which the median and the regularity see through
    assert node["period_us"] == pytest.approx(PERIOD_S * 1e6, rel=0.1), node
    assert node["regularity"] > 0.5, node
    assert node["length_p50_us"] == pytest.approx(BUSY_S * 1e6, rel=0.25), node
    assert node["rate_per_s"] == pytest.approx(1 / PERIOD_S, rel=0.25), node
    # the trace is one the simulators replay, with every detour kept
    replay = load_interrupt_trace(trace)
    assert len(replay.times) == node["detours"]
    assert replay.length == pytest.approx(3e6)


def test_every_node_is_summarised_once(openmpi, tmp_path):
    run = run_benchmark(openmpi, 4, ["--duration", "0.2", "--tasks-per-node", "2"], json_path=tmp_path / "n.json",
                        benchmark="noise")
    assert run.returncode == 0, run.stderr
    nodes = run.results()
    assert [n["node"] for n in nodes] == [0, 1]
    assert all(n["tasks"] == 2 for n in nodes)
    assert all(isinstance(n["detours"], int) and n["detours"] >= 0 for n in nodes)
    assert 0 <= min(n["noise_fraction"] for n in nodes) <= max(n["noise_fraction"] for n in nodes) <= 1
    # a histogram's percentiles (bin middles) never pass the longest detour measured
    assert all(n["length_p50_us"] <= n["length_p99_us"] <= n["length_max_us"] for n in nodes if n["detours"]), nodes


@pytest.mark.parametrize("args, message", [
    (["--duration", "inf"], "--duration: 'inf' is not a finite number"),
    (["--duration", "0"], "--duration: 0 is out of range"),
    (["--max-detours", "0"], "--max-detours: 0 is out of range"),
    (["--trace", "/proc/version"], "--trace: cannot write '/proc/version'"),
])
def test_bad_options_are_one_line(openmpi, tmp_path, args, message):
    run = run_benchmark(openmpi, 1, given_once(["--duration", "0.05"], args), benchmark="noise", timeout=60)
    assert run.returncode == 2
    assert run.error_lines("noise") == [l for l in run.stderr.splitlines() if l.startswith("jb-noise")]
    assert len(run.error_lines("noise")) == 1 and message in run.error_lines("noise")[0], run.stderr
