"""`jitterbench simulate halo --interrupt-trace`: a halo prediction from a noise trace.

Exactly on a trace worked out by hand, and against a measured run: an interrupter of known
period and length pinned to one CPU, its detours recorded there by jb-noise --trace, then jb-halo
on that CPU; the share of calls a detour slows, predicted from the trace and the lengths of the
calls, against the share measured. A share, not microseconds: it does not depend on how fast
the machine is, only on the detours' rate and the calls' length.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import openmpi_with, run_pinned
from jitterbench import cli
from jitterbench import simulate as sim
from test_noise import INTERRUPTER


def halo_document(path, series, ranks=1):
    """A jb-halo --series document with this per-call MAX series (what simulate halo reads)."""
    mean = float(np.mean(series))
    path.write_text(json.dumps({
        "benchmark": "halo", "config": {}, "metadata": {"ranks": ranks},
        "results": [{"pattern": "isend-recv", "calls": len(series), "max_us": mean, "avg_us": mean,
                     "histogram": {"bins": [[0.5 * min(series), 2.0 * max(series), len(series)]]},
                     "series": {"max_us": list(series), "avg_us": list(series), "min_us": list(series)}}]}))
    return path


def predict(tmp_path, halo_json, trace, tasks):
    out = tmp_path / "prediction.json"
    assert cli.main(["simulate", "halo", str(halo_json), "--tasks", ",".join(map(str, tasks)),
                     "--interrupt-trace", str(trace), "--json", str(out)]) == 0
    return {p["tasks"]: p for p in json.loads(out.read_text())["predictions"]}


@pytest.mark.unit
def test_a_trace_worked_out_by_hand(tmp_path, capsys):
    # One detour of 50 us every 1000 us: a task runs 950 us of each 1000, and a call of 10 us that
    # starts at a random instant of those meets the detour with probability p = 10/950. Some task
    # of N does with 1 - (1 - p)^N, and the MAX is 10 us plus 50 us times that.
    trace = tmp_path / "trace.txt"
    trace.write_text("# jb-noise: rank 0's detours (start_us length_us)\n# length_us 1000\n100 50\n")
    pred = predict(tmp_path, halo_document(tmp_path / "h.json", [10.0] * 400), trace, [1, 4, 100])
    for N in (1, 4, 100):
        hit = 1 - (1 - 10 / 950) ** N
        assert pred[N]["detour_fraction"] == pytest.approx(hit, abs=1e-12)
        assert pred[N]["max_trace_us"] == pytest.approx(10 + 50 * hit, abs=1e-9)
        assert pred[N]["max_trace_se_us"] == pytest.approx(0, abs=1e-9)  # every call alike
        assert pred[N]["max_us"] == pytest.approx(10.0)  # the prediction without the trace is unchanged
    # Calls of 10 and 30 us, half each, one task: 0.5 (10 + 30) / 950 of them meet the detour.
    # Two tasks: the call lasts the longer of two (30 us with probability 3/4), and each of its two
    # windows may meet the detour: 1/4 (1 - (1 - 10/950)^2) + 3/4 (1 - (1 - 30/950)^2).
    pred = predict(tmp_path, halo_document(tmp_path / "h2.json", [10.0, 30.0] * 200), trace, [1, 2])
    assert pred[1]["detour_fraction"] == pytest.approx(20 / 950, abs=1e-12)
    assert pred[1]["max_trace_us"] == pytest.approx(20 + 50 * 20 / 950, abs=1e-9)
    two = 0.25 * (1 - (1 - 10 / 950) ** 2) + 0.75 * (1 - (1 - 30 / 950) ** 2)
    assert pred[2]["detour_fraction"] == pytest.approx(two, abs=1e-12)
    assert pred[2]["max_trace_us"] == pytest.approx(0.25 * 10 + 0.75 * 30 + 50 * two, abs=1e-9)
    assert 0 < pred[1]["detour_fraction_se"] < 0.003  # a bootstrap over 400 calls: about 0.01 / sqrt(400)
    capsys.readouterr()


@pytest.mark.unit
def test_a_bad_trace_is_one_line(tmp_path, capsys):
    trace = tmp_path / "trace.txt"
    trace.write_text("# length_us 1000\n100 50\nlater 3\n")
    assert cli.main(["simulate", "halo", str(halo_document(tmp_path / "h.json", [10.0] * 5)),
                     "--interrupt-trace", str(trace)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "trace.txt: line 3" in err[0]


# ---- against a measured run ---------------------------------------------------------------

# The interrupter wakes every PERIOD_S and keeps the CPU for BUSY_S: a detour far longer than a
# call (CALL_SIZE halos: about 0.14 ms here) and than CUT_US, so a call it lands in is plain to
# see. jb-noise records detours above CUT_US; jb-halo's calls above CUT_US are the ones slowed.
PERIOD_S, BUSY_S, CUT_US = 0.006, 0.002, 700.0
CALL_SIZE, CALLS, PROBE_S = "1M", 20000, 3


@pytest.fixture
def openmpi():
    return openmpi_with("halo", "noise")


def pinned(m, cpu, argv):
    """Runs argv as one rank on this CPU only, at nice 19 so that the interrupter preempts it on
    waking, as an interrupt does (test_noise says why)."""
    run = run_pinned(m, 1, cpu, argv, nice=19)
    assert run.returncode == 0, run.stderr


@pytest.mark.mpi
def test_the_share_of_calls_a_traced_interrupter_slows_is_predicted(openmpi, tmp_path):
    cpu = sorted(os.sched_getaffinity(0))[-1]
    halo = [openmpi.binary("halo"), "--pattern", "c", "--size", CALL_SIZE, "--calls", CALLS, "--series"]
    pinned(openmpi, cpu, [*halo, "--json", tmp_path / "quiet.json"])
    quiet = np.array(json.loads((tmp_path / "quiet.json").read_text())["results"][0]["series"]["max_us"])
    # The known answer holds on a CPU nobody else uses: with other work there, the scheduler
    # shares the CPU three ways and the detours no longer add up. That shows in the quiet run.
    expected_hits = quiet.size * np.median(quiet) * 1e-6 / PERIOD_S
    if (quiet > CUT_US).sum() > 0.1 * expected_hits:
        pytest.skip(f"CPU {cpu} is busy with other work: {(quiet > CUT_US).sum()} of {quiet.size} calls took over "
                    f"{CUT_US:g} us without the interrupter (the interrupter should slow about {expected_hits:.0f})")
    interrupter = subprocess.Popen([sys.executable, "-c", INTERRUPTER, str(PERIOD_S), str(BUSY_S), "60", str(cpu)])
    try:
        time.sleep(0.3)  # the interrupter is pinned and ticking
        pinned(openmpi, cpu, [openmpi.binary("noise"), "--duration", PROBE_S, "--threshold", CUT_US,
                              "--trace", tmp_path / "trace.txt"])
        pinned(openmpi, cpu, [*halo, "--json", tmp_path / "noisy.json"])
    finally:
        interrupter.kill()
        interrupter.wait()
    noisy = np.array(json.loads((tmp_path / "noisy.json").read_text())["results"][0]["series"]["max_us"])
    # The trace holds every detour over CUT_US: on a CPU of its own, the interrupter's, one per
    # period, BUSY_S long. Other work there shows as more detours, or longer ones (it runs in the
    # interrupter's wake), and in the run as calls slowed by more than BUSY_S.
    trace = sim.load_interrupt_trace(tmp_path / "trace.txt")
    rate, lost = trace.times.size / (trace.length * 1e-6), trace.cum[-1] / trace.length
    slowed_by = np.median(noisy[noisy > CUT_US]) * 1e-6 if (noisy > CUT_US).any() else 0.0
    if abs(rate * PERIOD_S - 1) > 0.1 or abs(lost * PERIOD_S / BUSY_S - 1) > 0.25 or abs(slowed_by / BUSY_S - 1) > 0.25:
        pytest.skip(f"CPU {cpu} had other work while the interrupter ran: {rate:.0f} detours/s over {CUT_US:g} us "
                    f"taking {lost:.0%} of it, slowed calls by {slowed_by * 1e3:.1f} ms (the interrupter: "
                    f"{1 / PERIOD_S:.0f}/s, {BUSY_S / PERIOD_S:.0%}, {BUSY_S * 1e3:g} ms)")
    # The windows: the run's own calls that met no detour. The quiet run's would do as well, but
    # on a shared machine a call's length drifts by 10 % and more from one run to the next, and
    # the calls right after a detour, on cold caches, are 80 % longer: both are in these.
    halo_document(tmp_path / "base.json", noisy[noisy <= CUT_US].tolist())
    pred = predict(tmp_path, tmp_path / "base.json", tmp_path / "trace.txt", [1])[1]
    measured = (noisy > CUT_US).mean()
    # Stated uncertainties: binomial over the measured calls, the prediction's bootstrap over the
    # calls it reads, and the trace's own count of detours (Poisson, an upper bound for a periodic one).
    se = math.sqrt(measured * (1 - measured) / noisy.size + pred["detour_fraction_se"] ** 2
                   + pred["detour_fraction"] ** 2 / trace.times.size)
    detail = (f"measured {measured:.4f} of {noisy.size} calls over {CUT_US:g} us, predicted "
              f"{pred['detour_fraction']:.4f} +- {se:.4f} from {trace.times.size} detours in {PROBE_S} s; MAX measured "
              f"{noisy.mean():.1f} us, predicted {pred['max_trace_us']:.1f} us")
    print(detail)
    assert abs(measured - pred["detour_fraction"]) < 4 * se, detail
