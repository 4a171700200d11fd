"""One record per benchmark (jitterbench/benchmarks/): what reads it agrees with it, and a new
benchmark takes its src/ folder and its record, nothing else."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import folder, install_prefix
from jitterbench import benchmarks
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
TOY = Path(__file__).resolve().parent / "fixtures" / "toy"


@pytest.mark.unit
def test_the_readme_s_table_of_benchmarks_is_the_records():
    readme = (REPO / "README.md").read_text()
    assert benchmarks.readme_table() in readme, (
        "README.md's table of benchmarks differs from the records: paste the output of\n"
        "  python -c 'from jitterbench import benchmarks; print(benchmarks.readme_table())'")


@pytest.mark.unit
def test_every_c_folder_is_one_record_and_back():
    folders = {p.parent.name for p in (REPO / "src").glob("*/main.c")}
    assert {"halo", "noise"} <= folders
    assert folders == {d.benchmark for d in benchmarks.ALL if d.benchmark}
    for d in benchmarks.ALL:
        if d.benchmark:
            assert (REPO / "src" / d.benchmark / "CMakeLists.txt").exists(), d.benchmark
            assert (REPO / "reframe_checks" / f"{d.benchmark}.py").exists() == d.own_check, d.check


@pytest.mark.unit
def test_every_record_of_a_binary_declares_its_quantities_once_with_how_they_are_aggregated():
    for d in (d for d in benchmarks.ALL if d.benchmark):
        names = [q.name for q in d.quantities]
        assert names and len(names) == len(set(names)), d.check
        assert all(q.over and q.unit is not None for q in d.quantities), d.check
        assert d.performance(), f"{d.check} declares no performance variable"
        assert not set(d.result_fields) & {q.field for q in d.quantities}, d.check


@pytest.mark.unit
def test_the_report_s_manual_lists_every_figure_of_the_records_and_only_those():
    from jitterbench import report_figures
    table = re.findall(r"^\| `([\w-]+)`:", (REPO / "docs" / "reports.md").read_text(), re.M)
    assert table == [make.__name__.replace("_", "-") for make in report_figures.every()]


@pytest.mark.unit
def test_the_quick_mode_s_narrowing_is_the_records():
    sys.path.insert(0, str(REPO / "systems"))
    try:
        import config
    finally:
        sys.path.remove(str(REPO / "systems"))
    calls = benchmarks.calls_options(100)
    assert config.QUICK == calls + benchmarks.quick_options()
    assert ["-S", "HaloCheck.calls=100"] == [o for o in calls if o in ("-S", "HaloCheck.calls=100")][:2]
    assert ["-S", "HaloCheck.patterns=isend-recv"] == config.QUICK[len(calls):len(calls) + 2]


@pytest.mark.unit
def test_a_record_refuses_an_unknown_statistic_or_role():
    with pytest.raises(ValueError, match="not a per-call statistic: p42"):
        benchmarks.per_call("max", "p42")
    with pytest.raises(ValueError, match="quantity x: better is lower or higher"):
        benchmarks.Quantity("x", "x_us", "us", "over calls", better="faster")
    with pytest.raises(KeyError, match="HaloCheck declares no quantity cycle"):
        benchmarks.by_check("HaloCheck").performance("cycle")


def _copy_of_the_checkout(dest: Path) -> Path:
    """The checkout's files (tracked and new, none ignored) in dest, committed there, so that
    `git status` tells afterwards what adding a benchmark changed."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the checkout"]):
        subprocess.run([*git, *step], cwd=dest, check=True, capture_output=True)
    return dest


@pytest.mark.reframe
def test_a_benchmark_is_its_folder_and_its_record_built_listed_planned_run_tabled_and_reported(tmp_path):
    """The README's "How to add a benchmark", done in a copy of the checkout: jb-toy's folder and
    its record, no other file edited; ReFrame's quick mode runs the check its record makes."""
    m = mpis.OPENMPI
    if not m.available():
        pytest.skip("Open MPI is not installed")
    copy = _copy_of_the_checkout(tmp_path / "checkout")
    shutil.copytree(TOY, copy, dirs_exist_ok=True)
    env = dict(os.environ, **{k: v for k, v in m.env.items() if k != "PATH"}, PYTHONPATH=str(copy),
               JB_OUTPUT=str(tmp_path / "out"), JB_REFERENCE_DIR=str(folder(tmp_path / "refs")))
    run = lambda *cmd, **kw: subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True,  # noqa: E731
                                            timeout=600, **kw)

    build = copy / "build" / "openmpi"
    mpicc = shutil.which(m.mpicc, path=m.env.get("PATH", os.environ["PATH"]))
    for step in (["cmake", "-S", "src", "-B", str(build), f"-DMPI_C_COMPILER={mpicc}", "-DBUILD_TESTING=OFF"],
                 ["cmake", "--build", str(build), "-j", "2", "--target", "jb-toy"]):
        done = run(*step)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the checkout's binaries (ci/setup.sh built them), and jb-toy beside them
    prefix = install_prefix(tmp_path / "prefix")
    (prefix / m.name / "bin" / "jb-toy").symlink_to(build / "jb-toy")
    env["JB_PREFIX"] = str(prefix / "{environ}")

    reframe = [str(Path(sys.executable).with_name("reframe")), "-C", "systems/config.py"]
    listed = run(*reframe, "--mode", "quick", "-n", "ToyCheck", "-p", "openmpi", "-l")
    assert listed.returncode == 0 and "- ToyCheck %" in listed.stdout, listed.stdout[-3000:]
    planned = run(sys.executable, "-m", "jitterbench", "plan", "--system", "local", "--mode", "quick")
    assert planned.returncode == 0 and any(line.split()[:1] == ["ToyCheck"] for line in planned.stdout.splitlines()), \
        planned.stdout + planned.stderr
    ran = run(*reframe, "--mode", "quick", "-n", "ToyCheck", "-p", "openmpi", "-S", "judge_load=0", "-r")
    assert ran.returncode == 0, ran.stdout[-4000:]
    report = tmp_path / "out" / "report.json"
    (case,) = [c for r in json.loads(report.read_text())["runs"] for c in r["testcases"] if c["name"].startswith("ToyCheck")]
    assert {name.split(":")[-1] for name in case["perfvalues"]} == {"max_8", "avg_8"}  # the quick size, 2 variables

    tabled = run(sys.executable, "-m", "jitterbench", "table", str(report))
    assert tabled.returncode == 0 and any(line.startswith("ToyCheck") for line in tabled.stdout.splitlines()), \
        tabled.stdout + tabled.stderr
    reported = run(sys.executable, "-m", "jitterbench", "report", str(report), "-o", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    assert "ToyCheck" in (tmp_path / "report" / "index.html").read_text()

    changed = run("git", "status", "--porcelain", "--untracked-files=all").stdout.split("\n")
    assert sorted(line[3:] for line in changed if line) == sorted(
        str(p.relative_to(TOY)) for p in TOY.rglob("*") if p.is_file())
