"""`jitterbench simulate profile` (paper 004's network profiles): the model on cases worked out
by hand, the command's bad input, and its known answer on the emulated torus at two link rates."""
from __future__ import annotations

import json

import pytest

from jitterbench import cli
from jitterbench import profile as prof
from jitterbench.simulate import SimulationInputError

# --- the model, by hand ---------------------------------------------------------------------------


def test_step_times_and_normalized_times_by_hand():
    step = prof.Step(compute_us=100, messages=2, size=1000, overlap_us=50)
    # 1 us, 1 MB/s: comm = 2 (1 + 1000 / 1) = 2002 us
    assert prof.comm_us(step, 1, 1) == 2002
    assert prof.step_us(step, 1, 1, overlap=False) == 2102
    assert prof.step_us(step, 1, 1, overlap=True) == 2052  # 100 + (2002 - 50)
    assert prof.normalized(step, 1, 1, overlap=False) == pytest.approx(21.02, abs=1e-12)
    assert prof.normalized(step, 1, 1, overlap=True) == pytest.approx(20.52, abs=1e-12)
    # 8 us, 5 GB/s: comm = 2 (8 + 0.2) = 16.4 us, all of it hidden behind 50 us of work
    assert prof.normalized(step, 8, 5000, overlap=False) == pytest.approx(1.164, abs=1e-12)
    assert prof.normalized(step, 8, 5000, overlap=True) == 1.0


def test_overlap_hides_the_messages_up_to_the_independent_work_and_no_further():
    step = prof.Step(compute_us=10, messages=1, size=90, overlap_us=10)
    assert prof.comm_us(step, 1, 10) == 10  # 1 + 90 / 10: exactly the work
    assert prof.step_us(step, 1, 10, overlap=True) == 10
    assert prof.step_us(step, 2, 10, overlap=True) == 11  # one microsecond more than can hide
    assert prof.step_us(step, 1, 10, overlap=False) == 20
    none = prof.Step(compute_us=10, messages=1, size=90)  # no independent work: overlap changes nothing
    assert prof.step_us(none, 2, 10, overlap=True) == prof.step_us(none, 2, 10, overlap=False) == 21


def test_the_slides_sweep3d_column_without_overlap_is_linear_in_latency_from_one():
    """Sweep3D's normalized times without overlap (1.20, 1.39, 1.79, 2.59 at 1-8 us) are
    1 + 0.2 L/us to within 0.01: twenty 0-byte messages per 100 us of computation."""
    step = prof.Step(compute_us=100, messages=20, size=0)
    stated = {1: 1.20, 2: 1.39, 4: 1.79, 8: 2.59}
    for lat, value in stated.items():
        assert prof.normalized(step, lat, 945, overlap=False) == pytest.approx(1 + 0.2 * lat, abs=1e-12)
        assert abs(prof.normalized(step, lat, 945, overlap=False) - value) <= 0.0100001


def test_the_grid_is_every_bandwidth_by_every_latency():
    step = prof.Step(compute_us=100, messages=2, size=1000, overlap_us=50)
    rows = prof.grid(step, [1, 8], [1, 5000])
    assert [(r["bandwidth_mb_s"], r["latency_us"]) for r in rows] == [(1, 1), (1, 8), (5000, 1), (5000, 8)]
    assert rows[0]["step_us"] == 2102 and rows[0]["step_overlap_us"] == 2052
    assert rows[3]["normalized"] == pytest.approx(1.164) and rows[3]["normalized_overlap"] == 1.0
    assert prof.LATENCIES_US == (1, 2, 4, 8)
    assert prof.BANDWIDTHS_MB_S[0] == 1 and prof.BANDWIDTHS_MB_S[-1] == 5000


def test_the_fit_recovers_a_profile_exactly():
    # 2 messages of L = 5 us, B = 100 MB/s: 10, 30, 50 us at 0, 1000, 2000 bytes
    fit = prof.fit_profile([0, 1000, 2000], [10, 30, 50], messages=2)
    assert fit["latency_us"] == pytest.approx(5) and fit["bandwidth_mb_s"] == pytest.approx(100)
    assert fit["residuals_us"] == pytest.approx([0, 0, 0], abs=1e-9)
    with pytest.raises(SimulationInputError, match="two sizes or more"):
        prof.fit_profile([1000, 1000], [10, 11], messages=2)
    with pytest.raises(SimulationInputError, match="do not grow with the size"):
        prof.fit_profile([0, 1000], [30, 10], messages=2)


@pytest.mark.parametrize("step, message", [
    (prof.Step(0, 2, 1000), "compute_us is 0"),
    (prof.Step(10, 2, 1000, 11), "overlap_us 11 exceeds compute_us 10"),
    (prof.Step(10, -1, 1000), "messages is -1"),
    (prof.Step(10, 2, float("nan")), "size is nan"),
])
def test_a_step_the_model_cannot_use_is_named(step, message):
    with pytest.raises(SimulationInputError, match=message):
        step.check()


# --- jb-torus documents ---------------------------------------------------------------------------

def torus_doc(path, *results, ndims=1):
    """A jb-torus document with these (pattern, size, work, work_bytes, max_us) results."""
    doc = {"benchmark": "torus", "config": {}, "metadata": {"ranks": 6},
           "results": [{"pattern": p, "ndims": ndims, "size": s, "work": w, "work_bytes": wb, "calls": 10,
                        "max_us": t} for p, s, w, wb, t in results]}
    path.write_text(json.dumps(doc))
    return str(path)


def test_the_step_and_the_network_are_read_off_two_torus_runs(tmp_path):
    # ring (m = 2) with L = 5 us, B = 100 MB/s; 100 us of work after the wait: 130 us; before: 100 us
    plain = torus_doc(tmp_path / "plain.json", ("isend", 0, "none", 0, 10.0), ("isend", 1000, "none", 0, 30.0))
    work = torus_doc(tmp_path / "work.json", ("isend", 1000, "after", 4096, 130.0),
                     ("isend", 1000, "before", 4096, 100.0))
    got = prof.from_torus(prof.torus_results([plain, work]))
    assert (got["pattern"], got["messages"], got["size"], got["work_bytes"]) == ("isend", 2, 1000, 4096)
    assert got["compute_us"] == pytest.approx(100)
    assert got["fit"]["latency_us"] == pytest.approx(5) and got["fit"]["bandwidth_mb_s"] == pytest.approx(100)
    assert got["measured"] == {"none_us": 30.0, "after_us": 130.0, "before_us": 100.0}
    out = tmp_path / "out.json"
    assert cli.main(["simulate", "profile", plain, work, "--latencies-us", "5", "--bandwidths-mb-s", "100,50",
                     "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["step"] == {"compute_us": pytest.approx(100), "messages": 2, "size": 1000,
                           "overlap_us": pytest.approx(100)}
    assert doc["check"] == {"after_us": pytest.approx(130), "before_us": pytest.approx(100)}
    # at half the bandwidth: comm = 2 (5 + 20) = 50 us, still hidden behind 100 us of work
    assert [(r["step_us"], r["step_overlap_us"]) for r in doc["profiles"]] == [
        (pytest.approx(130), pytest.approx(100)), (pytest.approx(150), pytest.approx(100))]


def test_the_command_prints_the_table_and_draws_the_figure(tmp_path, capsys):
    svg = tmp_path / "profile.svg"
    assert cli.main(["simulate", "profile", "--compute-us", "100", "--messages", "2", "--size", "1000",
                     "--overlap-us", "50", "--figure", str(svg)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-13].split() == ["MB/s", "1", "us", "1", "us", "ov", "2", "us", "2", "us", "ov", "4", "us", "4",
                                  "us", "ov", "8", "us", "8", "us", "ov"]
    assert lines[-12].split() == ["1", "21.020", "20.520", "21.040", "20.540", "21.080", "20.580", "21.160",
                                  "20.660"]
    assert lines[-1].split()[:3] == ["5000", "1.024", "1.000"]
    assert svg.read_text().lstrip().startswith("<?xml") and "</svg>" in svg.read_text()


@pytest.mark.parametrize("args, message", [
    ([], "give jb-torus documents, or --compute-us, --messages, --size"),
    (["--compute-us", "10", "--messages", "2"], "give jb-torus documents, or --size"),
    (["--compute-us", "0", "--messages", "2", "--size", "8"], "compute_us is 0"),
    (["--compute-us", "10", "--messages", "2", "--size", "8", "--overlap-us", "20"], "exceeds compute_us"),
    (["--compute-us", "10", "--messages", "2", "--size", "8", "--work", "64"], "--pattern and --work choose"),
    (["--compute-us", "10", "--messages", "2", "--size", "8", "--figure", "f.png"], "the figure is SVG"),
    (["--compute-us", "-1", "--messages", "2", "--size", "8"], "'-1' is not a finite number >= 0"),
    (["--compute-us", "10", "--messages", "2", "--size", "8", "--bandwidths-mb-s", "1,0"],
     "'1,0' is not a comma-separated list of finite numbers > 0"),
    (["--compute-us", "10", "--messages", "2", "--size", "8", "--latencies-us", "nan"], "'nan' is not"),
    (["--compute-us", "10", "--messages", "2", "--size", "x"], "'x' is not a whole number"),
])
def test_bad_options_end_with_one_line_and_exit_2(args, message, capsys):
    try:
        code = cli.main(["simulate", "profile", *args])
    except SystemExit as e:  # argparse's refusal: its usage, then one error line
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1


def write(folder, text):
    (folder / "a.json").write_text(text)
    return str(folder / "a.json")


@pytest.mark.parametrize("make, extra, message", [
    (lambda d: torus_doc(d / "a.json", ("isend", 0, "none", 0, 10.0), ("isend", 8, "none", 0, 12.0)), [],
     "the documents hold no run with --work: give --compute-us"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "after", 64, 12.0), ("isend", 8, "before", 64, 11.0)), [],
     "no result without work of pattern isend at a size run with work"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "none", 0, 10.0), ("phases", 8, "none", 0, 12.0)), [],
     "the documents hold patterns isend, phases: choose one with --pattern"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "none", 0, 10.0), ("isend", 8, "after", 64, 9.0),
                         ("isend", 8, "before", 64, 9.0)), [], "is not above the time without"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "none", 0, 10.0)), ["--pattern", "ibsend"],
     "no result of pattern ibsend"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "none", 0, 10.0), ("isend", 8, "none", 0, 11.0)), [],
     "two results without work at size 8"),
    (lambda d: write(d, '{"benchmark": "halo", "config": {}, "metadata": {}, "results": []}'), [], "a 'halo' document, not jb-torus's"),
    (lambda d: write(d, "{"), [], "a.json"),
    (lambda d: str(d / "missing.json"), [], "missing.json: cannot read"),
    (lambda d: write(d, '{"benchmark": "torus", "config": {}, "metadata": {}, "results": [{"pattern": "isend", '
                          '"ndims": 1, "size": 8, "work": "none", "work_bytes": 0, "calls": 1}]}'), [],
     "results[0]: field max_us is missing"),
])
def test_bad_documents_end_with_one_line_and_exit_2(tmp_path, capsys, make, extra, message):
    path = make(tmp_path)
    assert cli.main(["simulate", "profile", path, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_computation_is_read_at_the_smallest_size_run_with_and_without_work(tmp_path):
    # at size 0 the work adds 100 us; at 1000 bytes the network's state adds 5 more: size 0 counts
    plain = torus_doc(tmp_path / "plain.json", ("isend", 0, "none", 0, 10.0), ("isend", 1000, "none", 0, 30.0))
    work = torus_doc(tmp_path / "work.json", ("isend", 0, "after", 64, 110.0), ("isend", 0, "before", 64, 100.0),
                     ("isend", 1000, "after", 64, 135.0), ("isend", 1000, "before", 64, 101.0))
    got = prof.from_torus(prof.torus_results([plain, work]))
    assert got["size"] == 1000 and got["compute_us"] == 100
    assert got["compute_from"] == {"size": 0, "after_us": 110.0, "none_us": 10.0}
    assert got["measured"] == {"after_us": 135.0, "before_us": 101.0, "none_us": 30.0}


# --- the known answer on the emulated torus ---------------------------------------------------------
#
# A ring of two nodes (one rate-limited link, so a task's two messages cross it one after
# the other, as the model adds them), at two link rates.  From repeats at the first rate the
# command fits the network's latency and bandwidth and reads the step; the bandwidth scaled
# by the ratio of the rates predicts the second rate's times per call, which are measured.
# Two nodes, not six: the host has two CPUs, and with six ranks on them the work takes the
# CPU the shaped links need, so that nothing overlaps (measured: work before the wait took
# longer than after it).  Times are medians over calls of the per-call MAX (p50_us).

RATES_MBIT = (50, 100)
NODES = 2
SIZE = 32768  # eager in Open MPI's TCP BTL (64 KiB), so the kernel moves it while the task works
WORK = "48M"  # about 8 ms of vector add: above the messages' time at 100 Mbit/s, below it at 50
REPEATS = 3


def _torus_env():
    import importlib.util

    from clusters import REPO
    spec = importlib.util.spec_from_file_location("torus_system", REPO / "systems" / "torus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # socket buffers above a message's size: a write in MPI_Isend hands all of it to the kernel
    return dict(module.OVER_TORUS["openmpi"], OMPI_MCA_btl_tcp_sndbuf="1048576", OMPI_MCA_btl_tcp_rcvbuf="1048576")


def _runs_at(rate, tmp_path_factory, folder):
    """REPEATS pairs of jb-torus documents (without work at four sizes, with work at 0 and SIZE)
    on the ring at rate Mbit/s, the cluster up only meanwhile."""
    import subprocess

    import clusters
    from jitterbench import mpi as mpis
    gen = clusters.cluster(tmp_path_factory, str(NODES), "--torus", str(NODES), "--link-rate", f"{rate}mbit")
    env = dict(next(gen), **_torus_env())
    runs = []
    try:
        for i in range(REPEATS):
            pair = []
            for name, args in (("plain", ["--size", "0,16K,32K,48K"]), ("work", ["--size", f"0,{SIZE}", "--work", WORK])):
                out = folder / f"{rate}-{name}{i}.json"
                cmd = ["srun", "--kill-on-bad-exit=1", "-N", str(NODES), "-n", str(NODES),
                       str(mpis.OPENMPI.binary("torus")), "--pattern", "isend", "--calls", "60", "--json", str(out),
                       *args]
                for _ in range(2):  # Open MPI 4.1.4 now and then fails at start-up on one node: one retry
                    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
                    if proc.returncode == 0:
                        break
                assert proc.returncode == 0, proc.stderr[-2000:]
                pair.append(str(out))
            runs.append(pair)
    finally:
        next(gen, None)  # down, whatever happened
    return runs


def _profile(tmp_path, *args):
    out = tmp_path / f"profile{len(list(tmp_path.glob('profile*')))}.json"
    assert cli.main(["simulate", "profile", *args, "--statistic", "p50_us", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_known_answer_a_second_link_rate_is_predicted_from_a_run_at_the_first(tmp_path, tmp_path_factory):
    import clusters
    reason = clusters.why_not()
    if reason:
        pytest.skip(reason)
    r1, r2 = RATES_MBIT
    first, second = (_runs_at(rate, tmp_path_factory, tmp_path) for rate in (r1, r2))
    predicted, measured = {"none": [], "after": [], "before": []}, {"none": [], "after": [], "before": []}
    residual = 0.0
    for plain, work in first:
        fit = _profile(tmp_path, plain, work)["fit"]
        residual = max(residual, *map(abs, fit["residuals_us"]))
        at = _profile(tmp_path, plain, work, "--latencies-us", str(fit["latency_us"]),
                      "--bandwidths-mb-s", str(fit["bandwidth_mb_s"] * r2 / r1))["profiles"][0]
        predicted["none"].append(at["comm_us"])
        predicted["after"].append(at["step_us"])
        predicted["before"].append(at["step_overlap_us"])
    for plain, work in second:
        got = _profile(tmp_path, plain, work)
        for key in measured:
            measured[key].append(got["measured"][f"{key}_us"])
    summary = {k: {"predicted": sorted(predicted[k]), "measured": sorted(measured[k])} for k in measured}
    summary["largest_fit_residual_us"] = residual
    print(json.dumps(summary))
    # The uncertainty, no distribution assumed: a prediction's is its range over the repeats at
    # the first rate, widened by twice the largest residual of the fits there (the model's line
    # misses the times it was fitted to by up to that either way, the size-0 latency most: for
    # large messages the latency hides); a measurement's is its range over the repeats.
    # They agree when the two intervals meet.
    # Without overlap the link idles while the task works, and the emulated link's token bucket
    # (tc tbf, burst 8kb in vcluster.sh) lets the next call's first 8 KiB pass unshaped: up to
    # 8192 B / rate faster than any latency-bandwidth profile, one-sided.
    burst_us = 8192 * 8 / r2
    for key, below in (("none", 0.0), ("after", burst_us)):
        p, m = summary[key]["predicted"], summary[key]["measured"]
        assert p[0] - 2 * residual - below <= m[-1] and m[0] <= p[-1] + 2 * residual, (key, summary)
    # With overlap the model is a best case (zero overhead, every message moving while the
    # task works), and here the measured times are above it: with the work before the wait,
    # the calls still take longer than the work (the messages' time is below it at the second
    # rate), though less than with the work after the wait.
    p, m = summary["before"]["predicted"], summary["before"]["measured"]
    assert p[0] - 2 * residual <= m[-1], summary
    assert m[-1] < summary["after"]["measured"][0], summary
