"""benchmarks/fidelity.py at one round: every row's ratio finite and positive, and each row ran
the definitions it states (iterations, warm-up, buffer policy, window, messages per task).
OSU and IMB come from the site (JB_OSU_PREFIX, JB_IMB_PREFIX); where they are absent the test
skips and says which is missing."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import folder
from jitterbench import mpi as mpis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import fidelity  # noqa: E402


def anchored():
    """The MPIs whose every anchor is installed, and what is missing for the others."""
    found, missing = [], []
    for m in mpis.available():
        lacking = sorted({fidelity.anchor_path(m, kind)[1] for kind in fidelity.ANCHORS} - {None})
        (missing if lacking else found).append(m.name if not lacking else f"{m.name}: no {', '.join(lacking)}")
    return found, missing


@pytest.mark.unit
def test_the_median_interval_is_the_order_statistics_binomial_coverage_asks():
    # n = 21: P(B <= 5) = 0.0133 and P(B <= 6) = 0.0392 for B ~ Binomial(21, 1/2): x_(6) to x_(16)
    assert fidelity.median_interval(range(1, 22)) == (6, 16)
    assert fidelity.median_interval([5, 1, 4, 2, 3, 6]) == (1, 6)  # n = 6: P(B = 0) = 0.016, 96.9 %
    assert all(math.isnan(v) for v in fidelity.median_interval([1, 2, 3, 4, 5]))  # P(B = 0) = 0.031 > 0.025


@pytest.mark.process
@pytest.mark.parametrize("args, message", [
    (["--mpi", "bogus"], "fidelity: --mpi: no MPI bogus (one of openmpi, mpich, intelmpi)"),
    (["--only", "speed"], "fidelity: no kind speed"),
    (["--rounds", "0"], "fidelity: --rounds must be at least 1"),
    (["--json", "mine.json"], "fidelity: mine.json: exists and is not a file jitterbench wrote; name another, "
                              "or --force to replace it"),
])
def test_bad_input_is_one_line_before_any_round_and_no_file_is_lost(tmp_path, args, message):
    (tmp_path / "mine.json").write_text("the user's\n")
    env = dict(os.environ, JB_OSU_PREFIX=str(folder(tmp_path / "none") / "{environ}"))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fidelity.py"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (1, message + "\n")
    assert (tmp_path / "mine.json").read_text() == "the user's\n"


@pytest.mark.unit
def test_the_anchors_and_jitterbench_are_found_in_the_spack_views(tmp_path, monkeypatch):
    """With JB_SPACK_VIEWS, each MPI's programs from its view, as the checks take them (spack.yaml
    builds OSU, IMB and jitterbench there); a prefix variable still overrides its own program."""
    views, m = tmp_path / "views", mpis.OPENMPI
    programs = [views / "openmpi" / "libexec" / "osu-micro-benchmarks" / "mpi" / "pt2pt" / "osu_latency",
                views / "openmpi" / "bin" / "IMB-MPI1", views / "openmpi" / "bin" / "jb-halo"]
    for path in programs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    for variable in ("JB_OSU_PREFIX", "JB_IMB_PREFIX", "JB_PREFIX"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("JB_SPACK_VIEWS", raising=False)
    assert fidelity.anchor_path(m, "halo") == (None, "JB_IMB_PREFIX or JB_SPACK_VIEWS (unset)")
    assert fidelity.jitterbench_path(m, "halo") == str(m.binary("halo"))
    monkeypatch.setenv("JB_SPACK_VIEWS", str(views))
    assert fidelity.anchor_path(m, "latency") == (str(programs[0]), None)
    assert fidelity.anchor_path(m, "halo") == (str(programs[1]), None)
    assert fidelity.jitterbench_path(m, "halo") == str(programs[2])
    # a program the view lacks is named with where it was looked for; an MPI without a view too
    assert fidelity.anchor_path(m, "bandwidth") == (None, f"osu_bw under {programs[0].parent}")
    assert fidelity.anchor_path(mpis.MPICH, "halo") == (None, f"IMB-MPI1 under {views / 'mpich' / 'bin'}")
    monkeypatch.setenv("JB_IMB_PREFIX", str(folder(tmp_path / "imb") / "{environ}"))
    assert fidelity.anchor_path(m, "halo") == (None, f"IMB-MPI1 under {tmp_path / 'imb' / 'openmpi'}")


@pytest.mark.mpi
def test_fidelity_rows_match_their_anchors(tmp_path):
    found, missing = anchored()
    if not found:
        pytest.skip("OSU Micro-Benchmarks or IMB not installed for any MPI (" + "; ".join(missing) + ")")
    for name in found:
        for benchmark in ("pingpong", "alltoall", "halo"):
            assert mpis.by_name(name).binary(benchmark).exists(), "run ci/setup.sh first"
    out = tmp_path / "fidelity.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fidelity.py"), "--rounds", "1",
                           "--mpi", ",".join(found), "--json", str(out)],
                          capture_output=True, text=True, timeout=3600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert sorted(report["mpis"]) == sorted(found)
    for name, entries in report["mpis"].items():
        rows = {(e["kind"], e["size"], e["ranks"], e.get("matched", {}).get("buffers")) for e in entries}
        assert rows == set(fidelity.rows()), name
        for e in entries:
            assert all(math.isfinite(r) and r > 0 for r in e["ratios"]), (name, e["row"], e["ratios"])
            matched, (ran,) = e["matched"], e["ran"]
            assert ran["iterations"] == matched["iterations"] and ran["warmup"] == matched["warmup"], e["row"]
            assert f"{matched['iterations']}" in e["anchor_command"].split(), e["anchor_command"]
            if e["kind"] == "bandwidth":
                assert ran["buffers"] == matched["buffers"] and ran["messages"] == matched["messages"] == 64
                assert f"-b {matched['buffers']}" in e["anchor_command"]
            if e["kind"] == "halo":  # IMB Exchange: two messages a task, the repetitions asked
                assert ran["messages_per_task"] == matched["messages_per_task"] == 2
                assert ran["anchor_iterations"] == matched["iterations"]
            assert ran["oversubscribed"] == (e["ranks"] > report["cores"]), e["row"]
