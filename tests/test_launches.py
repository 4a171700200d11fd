"""A case is several launches (jitterbench/harness/launches.sh, launches.LaunchedCheck.launches): the loop,
the median over launches and every launch's value kept, the disturbed-launch rule (the benchmark's,
src/core/load.c), a disturbed launch launched again, and a case disturbed through every try
inconclusive: a third verdict, never a pass."""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_benchmark
from jitterbench import cli, runs
from jitterbench import mpi as mpis
from support.reframe_runs import perflog_rows, reframe

REPO = Path(__file__).resolve().parents[1]
LOOP = REPO / "jitterbench" / "harness" / "launches.sh"
LAUNCHES = {"JB_LAUNCHES": "3"}

pytestmark = pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")


def cpu_hogs(count, seconds):
    """count busy Python processes at the lowest priority (they still count as runnable, which is what
    the disturbed-launch rule reads), each ending by itself after `seconds`; returned once each is
    busy: a Python still starting waits on its files, not runnable (a fresh-clone CI run's benchmark
    beside four hogs half a second old read none of them)."""
    busy = (f"import os, time\nos.nice(19)\nend = time.time() + {seconds}\nprint('busy', flush=True)\n"
            "while time.time() < end:\n    pass\n")
    hogs = [subprocess.Popen([sys.executable, "-c", busy], stdout=subprocess.PIPE, text=True) for _ in range(count)]
    for hog in hogs:
        hog.stdout.readline()  # '' if it died: no wait
    return hogs


def stop(hogs):
    for hog in hogs:
        hog.kill()
        hog.wait()
        hog.stdout.close()


@pytest.mark.unit
def test_the_disturbed_run_rule_reads_the_load_line_exactly():
    """The rule is the benchmark's (src/core/load.c); the reader takes its verdict, `_disturbed`."""
    from jitterbench.harness.load import disturbance, disturbed, load_samples
    line = ("before_node=n1 before_load1=3.50 before_runnable=5 before_tasks_total=200 before_steal_pct=0.25 "
            "before_cpus=2 before_job_tasks=2 before_job_cpus=2 before_disturbed=1 after_node=n1 after_load1=3.10 "
            "after_runnable=4 after_tasks_total=200 after_steal_pct=-1.00 after_cpus=2 after_job_tasks=2 "
            "after_job_cpus=2 after_disturbed=0")
    samples = load_samples(line)
    assert samples["before"] == {"node": "n1", "load1": 3.5, "runnable": 5, "tasks_total": 200, "steal_pct": 0.25,
                                 "cpus": 2, "job_tasks": 2, "job_cpus": 2, "disturbed": 1}
    assert disturbed(samples["before"]) and not disturbed(samples["after"])
    assert not disturbed({k: v for k, v in samples["before"].items() if k != "disturbed"})  # no verdict: no evidence
    assert disturbance("before", samples["before"]).startswith("disturbed run: on n1 before the run, 5 runnable")


@pytest.mark.unit
def test_a_launch_whose_cpus_were_far_apart_is_set_aside_by_the_case_s_nearest():
    """A launch's round trip is the larger of its two samples' (-1: no node held two tasks, unknown);
    a launch is kept when it is at most FAR_APART times the case's nearest, unknown ones always."""
    from jitterbench.harness.load import FAR_APART, load_samples, near, pair_ns
    assert pair_ns(load_samples("before_pair_ns=61.5 after_pair_ns=330.2 after_probe_us=1700")) == 330.2
    assert pair_ns(load_samples("before_pair_ns=-1.0 after_pair_ns=-1.0")) is None
    assert pair_ns(load_samples("before_probe_us=1700.0")) is None  # a benchmark that did not say
    nearest = 60.0
    pairs = [nearest, 75.0, None, FAR_APART * nearest, FAR_APART * nearest + 0.1, 330.0]
    assert near(pairs) == [True, True, True, True, False, False]
    assert near([None, None]) == [True, True] and near([]) == []


@pytest.mark.mpi
def test_the_benchmark_s_disturbed_verdict_is_the_rule_on_the_figures_it_prints():
    """jb-halo beside more busy processes than CPUs, and alone: in every sample it prints, its
    verdict is exactly runnable - job_tasks > max(cpus - job_tasks, 0) (with runnable read), and the
    hogs make it 1."""
    from jitterbench.harness.load import load_samples
    verdicts = []
    for count in (0, (os.cpu_count() or 1) + 2):
        hogs = cpu_hogs(count, 60)
        try:
            time.sleep(0.5 if count else 0)
            out = run_benchmark(mpis.OPENMPI, 2, ["--calls", "20", "--size", "1K"]).stdout
        finally:
            stop(hogs)
        for sample in load_samples(re.search(r"^# load: (.*)$", out, re.M)[1]).values():
            free = max(sample["cpus"] - sample["job_tasks"], 0)
            rule = sample["runnable"] >= 0 and sample["runnable"] - sample["job_tasks"] > free
            assert sample["disturbed"] == int(rule), sample
            assert sample["probe_us"] > 0  # the job's speed beside its load (src/core/load.c)
            verdicts.append((count, sample["disturbed"]))
    assert any(count and verdict for count, verdict in verdicts), verdicts


@pytest.mark.mpi
def test_the_loop_launches_a_disturbed_launch_again_and_keeps_the_try_apart(tmp_path):
    """launches.sh with the real launcher and benchmark: hogs run until the loop has set the first
    try aside as disturbed, then stop; the launch is launched again, the job's output holds one block
    per launch (the line naming the disturbed try and its load, then the kept try's output), and the
    disturbed try's folder is no launch-<i>/ (the check keeps only those)."""
    cmd, env = mpis.OPENMPI.launch(2, [str(mpis.OPENMPI.binary("halo")), "--pattern", "sendrecv", "--calls", "20", "--size", "1K", "--validate",
                                       "--json", "halo.json"])
    hogs = cpu_hogs((os.cpu_count() or 1) + 2, 120)
    try:
        time.sleep(0.5)
        loop = subprocess.Popen(["sh", str(LOOP), "2", "3", "5", *cmd], cwd=tmp_path, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        end = time.time() + 110
        while not (tmp_path / "disturbed-1-try-1").exists() and loop.poll() is None and time.time() < end:
            time.sleep(0.05)
    finally:
        stop(hogs)
    out, err = loop.communicate(timeout=120)
    assert loop.returncode == 0, err[-2000:]
    assert "_disturbed=1" in (tmp_path / "disturbed-1-try-1" / "stdout").read_text()
    said = re.findall(r"^# launch: (\d) of 2, try (\d) of 3( disturbed: launched again; # load: .*)?$", out, re.M)
    assert said[0][:2] == ("1", "1") and "_disturbed=1" in said[0][2]
    kept = [(i, t) for i, t, disturbed in said if not disturbed]
    assert [i for i, _ in kept] == ["1", "2"] and int(kept[0][1]) >= 2
    assert out.count("JB_RESULT ") == 2 and out.count("# validate: every payload arrived intact") == 2
    assert sorted(p.name for p in tmp_path.glob("launch-*")) == ["launch-1", "launch-2"]
    for i, launch in enumerate(("launch-1", "launch-2")):
        doc = json.loads((tmp_path / launch / "halo.json").read_text())
        # launch I shuffles the ranks' roles by order FIRST + I - 1, whatever try was kept
        assert doc["results"] and doc["config"]["rank_order"] == 5 + i


@pytest.mark.mpi
def test_a_launch_that_fails_ends_the_loop_with_its_status(tmp_path):
    cmd, env = mpis.OPENMPI.launch(2, [str(mpis.OPENMPI.binary("halo")), "--size", "-1"])
    loop = subprocess.run(["sh", str(LOOP), "3", "3", "-", *cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert loop.returncode != 0 and "jb-halo: error: --size" in loop.stderr  # FIRST '-': no option added
    # the failure and its first error line last on both streams: ReFrame shows a job's output's tail
    for stream in (loop.stdout, loop.stderr):
        assert re.match(r"# launch: 1 of 3 failed with exit status \d+; its first error line: jb-halo: error: --size",
                        stream.splitlines()[-1]), stream[-2000:]
    assert not (tmp_path / "launch-2").exists()


@pytest.mark.reframe
def test_each_variable_is_the_median_of_its_launches_and_every_launch_is_kept(tmp_path):
    """One HaloCheck case at 3 launches: three launch lines, three folders kept with their documents,
    launch_values holding three values per variable, whose median is the logged value, and every
    launch's load logged; with the disturbed-launch rule off (judge_load=0), one try a launch; with
    rotate_roles, the launches' rank orders 1, 2, 3."""
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", "-S", "rotate_roles=1", env=LAUNCHES)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (case,) = cases
    assert case["launches"] == 3 and case["launch_tries"] == 1 and not case["judge_load"]
    values = json.loads(case["launch_values"])
    assert set(values) == {name.split(":")[-1] for name in case["perfvalues"]}
    for name, pv in case["perfvalues"].items():
        launches = values[name.split(":")[-1]]
        assert len(launches) == 3 and pv[0] == pytest.approx(statistics.median(launches))
    # each launch's round trip logged; with the rule off (judge_load=0) none set aside
    assert len(json.loads(case["launch_pair_ns"])) == 3 and case["launches_set_aside"] == 0
    outputdir = Path(case["outputdir"])
    assert sorted(p.name for p in outputdir.glob("launch-*")) == ["launch-1", "launch-2", "launch-3"]
    job_out = (outputdir / "rfm_job.out").read_text()
    assert re.findall(r"^# launch: (\d) of 3, try 1 of 1$", job_out, re.M) == ["1", "2", "3"]
    assert [json.loads(next((outputdir / f"launch-{i}").glob("*.json")).read_text())["config"]["rank_order"]
            for i in (1, 2, 3)] == [1, 2, 3]
    (row,) = perflog_rows(tmp_path)
    assert row["launches"] == "3" and len(row["load_before"].split("; ")) == 3
    # the report reads one document per launch
    read, _ = runs.read_report(str(tmp_path / "out" / "report.json"), None, Counter())
    assert read and all(len(c.documents) == 3 for c in read)


@pytest.mark.reframe
def test_a_failed_launch_fails_its_case_naming_the_launch_and_its_first_error_line(tmp_path):
    """The reason is launches.sh's line, not what the launch did not print (a site's job whose
    stderr the MPI's account fills shows ReFrame only its tail)."""
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", "-S", "timeout=-5", env=LAUNCHES)
    assert proc.returncode != 0
    (case,) = cases
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity"), case["fail_reason"]
    assert re.match(r"sanity error: launch: 1 of 3 failed with exit status \d+; "
                    r"its first error line: jb-halo: error: --timeout", case["fail_reason"]), case["fail_reason"]


@pytest.mark.reframe
def test_a_case_disturbed_through_every_try_is_inconclusive_never_a_pass(tmp_path, capsys):
    """Beside more busy processes than the machine has CPUs for the whole run, every try of the first
    launch is disturbed: the case fails as inconclusive naming the launch, the node and its load (what
    it names breaks the rule it states), the tries are kept apart, and `jitterbench table` says
    inconclusive and exits 3."""
    hogs = cpu_hogs((os.cpu_count() or 1) + 2, 300)
    try:
        time.sleep(0.5)
        proc, cases = reframe(tmp_path, "-P", "eager_limit=default", judge_load=True, env=LAUNCHES)
    finally:
        stop(hogs)
    assert proc.returncode != 0
    (case,) = cases
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity"), case["fail_reason"]
    host = os.uname().nodename
    said = re.search(rf"inconclusive: launch (\d) of 3, disturbed in all 3 tries: disturbed run: on "
                     rf"{re.escape(host)} (before|after) the run, (\d+) runnable tasks \(1-min load [\d.]+, steal "
                     rf"-?[\d.]+ %\) for (\d+) CPUs and 2 tasks of this job", case["fail_reason"])
    assert said, case["fail_reason"]
    assert int(said[3]) - 2 > max(int(said[4]) - 2, 0) and int(said[4]) == os.cpu_count()
    stage = Path(case["stagedir"])
    assert {p.name for p in stage.glob("disturbed-*")} >= {f"disturbed-{said[1]}-try-1", f"disturbed-{said[1]}-try-2"}
    assert cli.main(["table", str(tmp_path / "out" / "report.json")]) == 3
    out = capsys.readouterr().out
    assert re.search(r"^HaloCheck\s+openmpi\s+inconclusive\s+0/1", out, re.M), out
    assert "1 case(s) inconclusive" in out and "run them again on a quiet machine" in out


@pytest.mark.reframe
def test_without_hogs_the_same_check_passes_the_rule_its_load_logged(tmp_path):
    """The same check with nothing of ours beside it passes the rule, every launch's load in the
    perflog.  On a machine that other users keep busy through every try it cannot: the test then
    skips, naming the load that disturbed it (it never passes on a disturbed run)."""
    quiet, cases = reframe(tmp_path, "-P", "eager_limit=default", judge_load=True, env=LAUNCHES)
    if quiet.returncode != 0 and cases and "inconclusive:" in (cases[-1]["fail_reason"] or ""):
        pytest.skip(f"the machine stayed busy through every try: {cases[-1]['fail_reason'][:300]}")
    assert quiet.returncode == 0, quiet.stdout[-3000:]
    host = os.uname().nodename
    (row,) = perflog_rows(tmp_path)
    for when in ("before", "after"):
        samples = row[f"load_{when}"].split("; ")
        assert len(samples) == 3
        for sample in samples:
            fields = dict(kv.split("=", 1) for kv in sample.split())
            assert fields["node"] == host and int(fields["job_tasks"]) == 2 and int(fields["cpus"]) == os.cpu_count()
            assert fields["disturbed"] == "0"  # a logged pass keeps the rule
    assert row["judge_load"] == "true"

