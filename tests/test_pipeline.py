"""The GitLab acceptance pipeline (.gitlab-ci.yml, ci/gitlab-ci.yml), run for real by
gitlab-ci-local with the shell executor on this machine, for the `local` system.

The pipeline runs in a snapshot of this working tree (its tracked and untracked files,
as a runner's checkout), as a merge request's pipeline: the quick mode.  Like a runner
that keeps them between jobs (GIT_CLEAN_FLAGS), the snapshot shares this checkout's
Python environment and MPIs; the build stage builds and installs its own binaries.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conftest import BENCHMARKS, folder
from jitterbench import mpi as mpis
from jitterbench import reframe_report, settings

REPO = Path(__file__).resolve().parents[1]
GITLAB_CI_LOCAL = REPO / ".deps" / "gitlab-ci-local" / "node_modules" / ".bin" / "gitlab-ci-local"
QUICK_CHECKS = {"HaloCheck", "PingPongCheck", "TorusCheck", "AlltoallCheck", "EagerCheck"}

pytestmark = [
    pytest.mark.pipeline,
    pytest.mark.skipif(not GITLAB_CI_LOCAL.exists(), reason=f"gitlab-ci-local is not installed ({GITLAB_CI_LOCAL}; "
                                                            "ci/test.sh installs it with npm)"),
    pytest.mark.skipif(not mpis.built(), reason="no MPI is installed: run ci/setup.sh first"),
]


def snapshot(dest: Path) -> Path:
    """This working tree's tracked and untracked (not ignored) files in a new git
    repository at dest, with this checkout's .venv and .deps linked in."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listing):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    git = dict(os.environ, GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@localhost",
               GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@localhost")
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *cmd], cwd=dest, env=git, check=True)
    for kept in (".venv", ".deps"):
        (dest / kept).symlink_to(REPO / kept)
    return dest


def run_pipeline(project: Path, *args, timeout=1200):
    """gitlab-ci-local in project; its exit status and output.  The pipeline sees none of this
    process's jitterbench variables: what a job needs, the pipeline sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JB_", "RFM_"))}
    return subprocess.run([str(GITLAB_CI_LOCAL), "--no-color", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=timeout)


def job_results(stdout):
    """{job: PASS or FAIL} from gitlab-ci-local's closing lines."""
    results = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in ("PASS", "FAIL"):
            results[words[1]] = words[0]
    return results


def artifacts(project: Path, job: str) -> Path:
    """Where gitlab-ci-local keeps a job's artifacts (it encodes the ':' of the name)."""
    stage, system = job.split(":") if ":" in job else (job, "")
    matches = [p for p in (project / ".gitlab-ci-local" / "artifacts").glob(f"{stage}*{system}") if p.is_dir()]
    assert len(matches) == 1, (job, matches)
    return matches[0]


def junit_cases(path: Path):
    """(test case name, failure message or None) of a JUnit report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        cases.append((case.get("name"), None if failure is None else f"{failure.get('message')}: {failure.text}"))
    return cases


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return snapshot(tmp_path_factory.mktemp("pipeline") / "project")


@pytest.fixture(scope="module")
def merge_request_pipeline(project, tmp_path_factory):
    """build:local, acceptance:local and report, as a merge request's pipeline: the
    process, and a copy of each job's artifacts (a later run in project replaces them).
    Without references: on this 2-core machine a time is noise (a busy second core
    triples a halo's MAX), and a test asserts no speed."""
    no_references = tmp_path_factory.mktemp("no-references")
    proc = run_pipeline(project, "--variable", "CI_PIPELINE_SOURCE=merge_request_event",
                        "--variable", f"JB_REFERENCE_DIR={no_references}",
                        "build:local", "acceptance:local", "report")
    kept = tmp_path_factory.mktemp("artifacts")
    return proc, {job: shutil.copytree(artifacts(project, job), kept / job.replace(":", "-"), symlinks=True)
                  for job in ("build:local", "acceptance:local", "report")}


def test_the_build_and_acceptance_jobs_for_local_pass(merge_request_pipeline):
    proc, _ = merge_request_pipeline
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert job_results(proc.stdout) == {"build:local": "PASS", "acceptance:local": "PASS", "report": "PASS"}
    # the acceptance job states its plan before it runs: its cases and their estimated machine time
    assert "jitterbench plan: system local, mode quick" in proc.stdout
    assert re.search(r"^.*total +\d+ +1 ", proc.stdout, re.M), proc.stdout[-4000:]


def test_the_build_stage_installs_every_benchmark_for_every_mpi(merge_request_pipeline):
    _, kept = merge_request_pipeline
    installed = kept["build:local"] / "install"
    for m in mpis.built():
        assert sorted(p.name for p in (installed / m.name / "bin").iterdir()) == [f"jb-{b}" for b in BENCHMARKS]
    assert [result for _, result in junit_cases(kept["build:local"] / "output" / "local" / "build" / "junit.xml")] == [
        None] * len(mpis.built())


def test_acceptance_keeps_junit_with_the_quick_suite_for_every_mpi(merge_request_pipeline):
    _, kept = merge_request_pipeline
    out = kept["acceptance:local"] / "output" / "local"
    cases = junit_cases(out / "junit.xml")
    # a case whose launch something else disturbed through every try is inconclusive (it names the
    # load; a machine busy beside the test, not a fault of the pipeline); no other failure
    assert [(name, failure) for name, failure in cases
            if failure is not None and "inconclusive: " not in failure] == []
    ran = {(name.split()[0], name.split("@")[-1].split("+")[-1]) for name, _ in cases if "@" in name}
    # merge requests run the quick mode: every quick check, under every MPI
    assert {check for check, _ in ran} >= QUICK_CHECKS
    for m in mpis.built():
        assert {check for check, environ in ran if environ == m.name} >= QUICK_CHECKS
    report = json.loads((out / "report.json").read_text())
    assert "--mode quick" in report["session_info"]["cmdline"]


def test_acceptance_keeps_perflogs_the_report_and_the_results_database(merge_request_pipeline):
    _, kept = merge_request_pipeline
    out = kept["acceptance:local"] / "output" / "local"
    for check in QUICK_CHECKS:
        lines = (out / "perflogs" / "local" / "default" / f"{check}.log").read_text().splitlines()
        header = lines[0].split("|")
        rows = [dict(zip(header, line.split("|"))) for line in lines[1:]]
        rows = [r for r in rows if r["result"] == "pass"]  # not an inconclusive case (junit test above)
        assert {r["environ"] for r in rows} == {m.name for m in mpis.built()}, check
        # every row says how its ranks were bound and on which CPUs they ran (issue 18)
        assert all(r["binding"] in {"cores", "shared", "partial", "none"} for r in rows), check
        assert all(re.fullmatch(r"n0:\S+( n0:\S+)*", r["cpu_sets"]) for r in rows), check
    assert (out / "results.db").stat().st_size > 0


def test_acceptance_runs_the_binaries_of_the_build_stage(merge_request_pipeline, project):
    _, kept = merge_request_pipeline
    documents = list((kept["acceptance:local"] / "output" / "local" / "output").rglob("halo.json"))
    # row and bunched placement, each of the pipeline's default rounds and launches (its jobs see no JB_ROUNDS or
    # JB_LAUNCHES of the test's): a document a launch, in each round's own output folder
    assert len(documents) == 2 * len(mpis.built()) * settings.ROUNDS * settings.LAUNCHES
    for halo in documents:
        assert re.fullmatch(r"launch-\d+", halo.parent.name), halo
        environ = halo.parents[2].name
        command = json.loads(halo.read_text())["metadata"]["command_line"]
        assert command[0] == str(project / "install" / environ / "bin" / "jb-halo")


def test_the_report_job_summarises_the_run(merge_request_pipeline):
    _, kept = merge_request_pipeline
    summary = (kept["report"] / "output" / "summary.txt").read_text()
    assert "== local" in summary
    for m in mpis.built():
        assert re.search(rf"^HaloCheck +{m.name} ", summary, re.M)


def test_the_report_job_writes_the_html_report_of_the_run(merge_request_pipeline):
    _, kept = merge_request_pipeline
    page = kept["report"] / "output" / "report"
    html = (page / "index.html").read_text()
    # the quick suite has data for these; each is embedded and written as PNG and SVG
    for name in ("halo-scaling", "halo-traces", "distributions", "pingpong-speed", "torus-dims", "overlap",
                 "jacobi", "alltoall-throughput", "alltoall-idle", "osu"):
        assert (page / "figures" / f"{name}.png").stat().st_size > 0 and (page / "figures" / f"{name}.svg").exists()
        assert f'<section id="{name}">' in html
    for m in mpis.built():
        assert m.name in html


def test_compare_puts_local_vcluster_and_a_paper_side_by_side(merge_request_pipeline, tmp_path):
    from jitterbench import cli, report, runs
    _, kept = merge_request_pipeline
    inputs = [str(kept["acceptance:local"] / "output" / "local"), str(REPO / "reference_data" / "vcluster.yaml"),
              str(REPO / "reference_data" / "sp2.yaml")]
    assert cli.main(["compare", *inputs, "--baseline", "local", "-o", str(tmp_path / "compare")]) == 0
    col = runs.collect(inputs, progress=False)
    assert col.labels() == ["local", "vcluster", "sp2"]
    rows = report.comparisons(col, "local")
    # vcluster's references for one node stand beside the local run, variant by variant
    halo = [r for r in rows if r["check"] == "HaloCheck" and r["label"] == "vcluster" and r["var"] == "max"]
    assert {r["environ"] for r in halo} == {m.name for m in mpis.built()}
    html = (tmp_path / "compare" / "index.html").read_text()
    assert "Each label against local" in html and "Beside the papers" in html and "40.99" in html


def test_a_failed_reference_turns_the_acceptance_job_red_naming_the_check(merge_request_pipeline, project,
                                                                          tmp_path):
    # 0.001 us for one halo exchange, +10 %: no machine is that fast
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "local.yaml").write_text(yaml.safe_dump({
        "provenance": {"system": "local", "source": "test", "date": "2026-11-23", "method": "deliberately wrong"},
        "HaloCheck": {"$index": ["$partition", "placement"],
                      "local:default": {"row": {"max_isend-recv_4096": [0.001, None, 0.1, "us"]}}},
    }, sort_keys=False))
    proc = run_pipeline(project, "--variable", f"JB_REFERENCE_DIR={refs}", "--variable",
                        "JB_RFM_OPTIONS=-n HaloCheck -P placement=row -S patterns=isend-recv -S msg_sizes=4096",
                        "acceptance:local")
    assert proc.returncode != 0
    assert job_results(proc.stdout) == {"acceptance:local": "FAIL"}
    cases = junit_cases(artifacts(project, "acceptance:local") / "output" / "local" / "junit.xml")
    checks = [(name, failure) for name, failure in cases if not name.startswith("JitterbenchBuild ")]
    # one case per MPI in the pipeline's rounds: the earlier rounds logged and judged by none, the last
    # judged, each case failed once in the first attempt's JUnit (the second's beside it, output/again)
    assert len(checks) == len(mpis.built()) * settings.ROUNDS
    failed = [(name, failure) for name, failure in checks if failure is not None]
    assert len({name for name, _ in failed}) == len(failed) == len(mpis.built())
    for name, failure in failed:
        assert name.startswith("HaloCheck ") and "placement=row" in name
        assert "failed to meet reference" in failure and "max_isend-recv_4096=" in failure
    report = json.loads((artifacts(project, "acceptance:local") / "output" / "local" / "report.json").read_text())
    assert {(c["result"], c["fail_phase"]) for c in reframe_report.last_attempts(report)} == {("fail", "performance")}
    # judged again under each MPI, alone, and failed again: the second attempts are the report's later runs
    assert len(report["runs"]) == 1 + len(mpis.built())
    assert "HaloCheck under openmpi failed, then failed again" in proc.stdout


def test_the_history_job_of_a_second_pipeline_sees_the_first_s_runs(merge_request_pipeline, project, tmp_path):
    """Two pipelines, each acceptance:local (one small case) then history:local, with the site's
    store on a path of its own (JB_RESULTS_DB): the second's history holds both runs."""
    store = tmp_path / "shared" / "results.db"
    # the store, not the speed, is tested: the disturbed-run rule off (support/reframe_runs.py, NOT_JUDGING_LOAD)
    narrow = "-n HaloCheck -P placement=row -S patterns=isend-recv -S msg_sizes=4096 -S calls=20 -S judge_load=0"
    for pipeline in (1, 2):
        proc = run_pipeline(project, "--variable", f"JB_RESULTS_DB={store}", "--variable", f"JB_RFM_OPTIONS={narrow}",
                            "--variable", f"JB_REFERENCE_DIR={folder(tmp_path / 'no-references')}",
                            "acceptance:local", "history:local")
        assert job_results(proc.stdout) == {"acceptance:local": "PASS", "history:local": "PASS"}, proc.stdout[-3000:]
        assert f"results store: {store}, kept across pipelines by JB_RESULTS_DB" in proc.stdout
    doc = json.loads((artifacts(project, "history:local") / "output" / "local" / "history.json").read_text())
    assert len(doc["runs"]) == 2 and {r["jb_mode"] for r in doc["runs"]} == {"quick"}
    halo = [s for s in doc["series"] if s["variable"] == "max_isend-recv_4096"]
    assert len(halo) == len(mpis.built()) and all(s["runs"] == [1, 2] for s in halo)
