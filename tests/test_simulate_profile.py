"""`jitterbench simulate profile` (paper 004's network profiles): the model on cases worked out
by hand, the command's bad input, and its known answer on the emulated torus at two link rates."""
from __future__ import annotations

import json

import pytest

from jitterbench import cli
from jitterbench.simulate import profile as prof
from jitterbench.simulate import SimulationInputError

pytestmark = pytest.mark.unit

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


def test_the_median_call_is_read_where_asked(tmp_path):
    """--statistic p50_us: the fit and the step from the median over calls of the per-call MAX,
    here 10 and 30 us where the means (one slow call in each) are 20 and 50."""
    plain = torus_doc(tmp_path / "plain.json", ("isend", 0, "none", 0, 20.0), ("isend", 1000, "none", 0, 50.0))
    doc = json.loads((tmp_path / "plain.json").read_text())
    for r, p50 in zip(doc["results"], (10.0, 30.0)):
        r["p50_us"] = p50
    (tmp_path / "plain.json").write_text(json.dumps(doc))
    for statistic, latency, bandwidth in (("max_us", 10, 2000 / 30), ("p50_us", 5, 100)):
        fit = prof.from_torus(prof.torus_results([plain], statistic))["fit"]
        assert (fit["latency_us"], fit["bandwidth_mb_s"]) == (pytest.approx(latency), pytest.approx(bandwidth))
    out = tmp_path / "out.json"
    assert cli.main(["simulate", "profile", plain, "--compute-us", "100", "--size", "1000", "--statistic", "p50_us",
                     "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["source"]["statistic"] == "p50_us" and got["fit"]["latency_us"] == pytest.approx(5)


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
     "no result without work of pattern isend at size 8"),
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
     "results[0].max_us is missing"),
    (lambda d: torus_doc(d / "a.json", ("isend", 8, "none", 0, 10.0), ("isend", 16, "none", 0, 12.0)),
     ["--statistic", "p50_us", "--compute-us", "1", "--size", "8"], "results[0].p50_us is missing"),
])
def test_bad_documents_end_with_one_line_and_exit_2(tmp_path, capsys, make, extra, message):
    path = make(tmp_path)
    assert cli.main(["simulate", "profile", path, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
