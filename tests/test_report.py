"""jitterbench report and compare: reading runs (malformed input skipped and counted),
every figure from a small real run, the comparison statistics on known inputs, the
papers beside a measured machine, escaping of hostile names, and the page in a real
browser (headless Chromium)."""
from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import run_benchmark
from jitterbench import cli, compare, figures, report_figures, runs
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium")
# where the browser test leaves its screenshot
ARTIFACTS = Path(os.environ.get("JB_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))

HEADER = ("job_completion_time|result|display_name|environ|system|partition|nodes|tasks_per_node|placement|"
          "mpi_library|max_value|max_unit|max_ref|max_lower_thres|max_upper_thres|"
          "avg_value|avg_unit|avg_ref|avg_lower_thres|avg_upper_thres")


def perflog_line(system, environ, nodes, max_us, avg_us, placement="row", time="2026-11-23T10:00:00"):
    name = f"HaloCheck %nodes={nodes} %tasks_per_node=2 %placement={placement}"
    return (f"{time}|pass|{name}|{environ}|{system}|default|{nodes}|2|{placement}|Open MPI v4.1.4|"
            f"{max_us}|us|None|None|None|{avg_us}|us|None|None|None")


def write_perflog(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


# ---- reading -------------------------------------------------------------------------

@pytest.mark.unit
def test_a_perflog_reads_every_well_formed_line_and_counts_the_others(tmp_path):
    log = write_perflog(tmp_path / "HaloCheck.log", [
        perflog_line("sysA", "openmpi", 1, 10.0, 8.0),
        "2026-11-23T10:00:01|pass|HaloCheck %nodes=2|too|few|fields",
        perflog_line("sysA", "openmpi", 2, "fast", 8.0),          # a value that is not a number
        perflog_line("sysA", "openmpi", 2, 12.5, 9.0),
    ])
    col = runs.collect([str(log)], progress=False)
    assert col.skipped == {str(log): 2}
    assert [(c.params, c.value("max"), c.value("avg"), c.perf["max"].unit) for c in col.cases] == [
        ({"nodes": 1, "tasks_per_node": 2, "placement": "row"}, 10.0, 8.0, "us"),
        ({"nodes": 2, "tasks_per_node": 2, "placement": "row"}, 12.5, 9.0, "us")]
    assert {c.label for c in col.cases} == {"sysA"} and col.cases[0].meta["mpi_library"] == "Open MPI v4.1.4"


@pytest.mark.unit
def test_a_run_report_reads_its_cases_and_counts_a_broken_kept_document(tmp_path):
    outputdir = tmp_path / "output" / "HaloCheck_1"
    outputdir.mkdir(parents=True)
    (outputdir / "halo.json").write_text('{"benchmark": "halo", "results": [')  # cut short
    case = {"fixture": False, "result": "pass", "system": "s", "partition": "p", "environ": "openmpi",
            "display_name": "HaloCheck %nodes=2 %placement=row", "nodes": 2, "placement": "row",
            "perfvalues": {"s:p:max": [12.0, None, None, None, "us", "pass"]}, "outputdir": str(outputdir),
            "keep_files": ["halo.json"], "mpi_library": "Open MPI v4.1.4", "eager_var": ""}
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u1", "prefix_output": str(tmp_path / "output")},
                                  "runs": [{"testcases": [case, {**case, "fixture": True}]}]}))
    col = runs.collect([str(report)], progress=False)
    assert [(c.check, c.params, c.value("max"), c.meta["mpi_library"]) for c in col.cases] == [
        ("HaloCheck", {"nodes": 2, "placement": "row"}, 12.0, "Open MPI v4.1.4")]
    assert col.skipped == {str(outputdir / "halo.json"): 1} and col.cases[0].documents == []


@pytest.mark.unit
def test_labels_name_inputs_and_repeats_are_kept(tmp_path):
    a = write_perflog(tmp_path / "a" / "HaloCheck.log", [perflog_line("s", "openmpi", 1, v, 1.0) for v in (1, 2, 3)])
    b = write_perflog(tmp_path / "b" / "HaloCheck.log", [perflog_line("s", "openmpi", 1, 5, 1.0)])
    col = runs.collect([f"before={a}", f"after={b}"], progress=False)
    assert col.labels() == ["before", "after"]
    assert sorted(c.value("max") for c in col.cases if c.label == "before") == [1, 2, 3]


@pytest.mark.parametrize("content,message", [
    ("not a perflog\n", "not a ReFrame perflog (no header line)"),
    ("{ broken", "not JSON (line 1"),
])
@pytest.mark.unit
def test_an_unusable_input_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / ("input.log" if "perflog" in content else "input.json")
    path.write_text(content)
    assert cli.main(["report", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.unit
def test_a_missing_input_and_an_unknown_baseline_are_errors(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nowhere")]) == 2
    log = write_perflog(tmp_path / "HaloCheck.log", [perflog_line("s", "openmpi", 1, 1, 1)])
    other = write_perflog(tmp_path / "other" / "HaloCheck.log", [perflog_line("t", "openmpi", 1, 1, 1)])
    assert cli.main(["compare", str(log), str(other), "--baseline", "other", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "no such file or folder" in err[0] and "no label 'other' among s, t" in err[1]


# ---- statistics on known inputs --------------------------------------------------------

@pytest.mark.unit
def test_separated_samples_differ_significantly_with_the_exact_p_value():
    r = compare.compare([10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "us")
    assert (r.median, r.median_base, r.n, r.n_base) == (12, 22, 5, 5)
    assert r.ratio == pytest.approx(12 / 22)
    assert r.p == pytest.approx(2 / 252)         # the smallest p of 5 against 5, exact test
    assert r.ci[0] <= 12 / 22 <= r.ci[1] and r.ci[1] < 1
    compare.decide([r])
    assert r.kind == "faster" and r.verdict == "faster by 1.83x, detectable at this noise"  # lower times are better
    bandwidth = compare.decide([compare.compare([10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "MB/s")])[0]
    assert bandwidth.kind == "slower" and bandwidth.verdict.startswith("slower by 1.83x")
    # the record, not the unit, decides where it has a say: EagerCheck's limit in bytes is better higher
    eager = compare.decide([compare.compare([10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "B", "EagerCheck",
                                            "eager_limit_shm")])[0]
    assert eager.kind == "slower"


@pytest.mark.unit
def test_holm_over_the_variables_keeps_a_lone_smallest_p_from_deciding():
    # 5 against 5 gives at best p = 0.0079: with 7 variables compared Holm's first step needs 0.05 / 7
    rs = [compare.compare([10, 11, 12, 13, 14], [20, 21, 22, 23, 24], "us") for _ in range(7)]
    assert all(r.kind == "none" for r in compare.decide(rs))
    assert compare.decide(rs[:6])[0].kind == "faster"          # 0.0079 <= 0.05 / 6


@pytest.mark.unit
def test_overlapping_samples_give_the_largest_slowdown_the_repeats_leave_possible():
    a, b = [10, 12, 14, 16, 18], [11, 13, 15, 17, 19]
    r = compare.decide([compare.compare(a, b, "us")], [(a, b)])[0]
    assert r.p > 0.05 and r.kind == "none" and r.ci[0] < 1 < r.ci[1]
    # the one-sided 95 % rank bound: a shifted down by it is just significantly below b
    shift = r.detectable
    assert r.verdict == f"no difference detectable above {shift:.3g}x" and shift > 1
    assert stats.mannwhitneyu(np.log(a) - np.log(shift) - 1e-9, np.log(b), alternative="less").pvalue <= 0.05
    assert stats.mannwhitneyu(np.log(a) - np.log(shift) + 1e-6, np.log(b), alternative="less").pvalue > 0.05


@pytest.mark.unit
def test_too_few_repeats_are_said_not_guessed():
    assert compare.smallest_p(3, 3) == pytest.approx(0.1)
    r = compare.decide([compare.compare([1, 2, 3], [10, 11, 12], "us")])[0]
    assert r.verdict == "too few repeats (3 and 3) to tell" and r.kind == "too-few"
    one = compare.compare([1.0], [2.0], "us")
    assert (one.ratio, one.ci, one.p) == (0.5, None, None)


# ---- every figure from a small real run ------------------------------------------------

@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """The benchmarks themselves, run small under Open MPI, as JSON documents."""
    if not mpis.OPENMPI.available():
        pytest.skip("Open MPI is not installed")
    out = tmp_path_factory.mktemp("small-run")
    runs_ = {
        "halo": (4, ["--tasks-per-node", "2", "--series", "--trace-tasks", "0,3", "--pattern", "isend-recv"]),
        "pingpong": (2, ["--mode", "send", "--total", "8K,64K", "--messages", "1,2"]),
        "torus": (2, ["--pattern", "isend", "--ndims", "1", "--size", "16K", "--work", "0,64K"]),
        "jacobi": (2, ["--local", "40x30", "--trials", "3"]),
        "alltoall": (2, ["--method", "pairwise", "--size", "1K"]),
        "contention": (4, ["--dims", "4", "--size", "8"]),
        "noise": (2, ["--duration", "0.2"]),
        "pairs": (3, ["--tasks-per-node", "1", "--windows", "6", "--passes", "1", "--bandwidth-size", "4K"]),
        "congestion": (4, ["--tasks-per-node", "1", "--congestors", "alltoall", "--rounds", "2"]),
        "pingpong-window": (2, ["--one-way", "--messages", "64", "--size", "4K"]),  # osu_bw's definition
    }
    paths = []
    for name, (np, args) in runs_.items():
        bench = name.split("-")[0]
        path = out / f"{name}.json"
        calls = [] if bench == "noise" else ["--calls", "50"]  # jb-noise probes for --duration
        run = run_benchmark(mpis.OPENMPI, np, [*args, *calls], json_path=path, benchmark=bench)
        assert run.returncode == 0, run.stderr
        paths.append(str(path))
    return paths


@pytest.mark.mpi
def test_every_figure_is_drawn_from_a_small_real_run(small_run, tmp_path):
    assert cli.main(["report", *small_run, "-o", str(tmp_path / "report")]) == 0
    folder = tmp_path / "report" / "figures"
    for make in report_figures.every():
        name = make.__name__.replace("_", "-")
        png, svg = folder / f"{name}.png", folder / f"{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert ET.parse(svg).getroot().tag.endswith("svg"), name
    html = (tmp_path / "report" / "index.html").read_text()
    assert html.count('<img src="data:image/png;base64,') == len(report_figures.every())
    assert "OSU Micro-Benchmarks and perftest did not run here" in html


@pytest.mark.mpi
def test_the_figures_tables_hold_the_measured_numbers(small_run):
    col = runs.collect(small_run, progress=False)
    made = {f.name: f for f in report_figures.all_figures(col)}
    split = made["pingpong-split"]
    assert sorted((row[4], row[3]) for row in split.rows) == [(8192, 2), (65536, 2)]  # total, messages
    halo = json.loads(Path(small_run[0]).read_text())["results"][0]
    traces = made["halo-traces"].rows[0]
    assert traces[4:7] == (4, 50, "0,3") and traces[7] == figures.fmt(halo["max_us"])
    contention = {(row[2], row[4]) for row in made["contention"].rows}
    assert {("hops", 1), ("hops", 2), ("pairs", 1), ("pairs", 2), ("link", 1), ("link", 2)} <= contention
    # beside OSU, the same definitions only: one message's half cycle, and the window's speed
    window = json.loads(Path(small_run[-1]).read_text())["results"][0]
    drawn = {(row[2], row[3], row[4]): row[5] for row in made["osu"].rows}
    assert drawn[("jb-pingpong window", "MB/s", 4096)] == figures.fmt(window["speed_mb_s"])
    assert {(b, q) for b, q, _ in drawn} == {("jb-pingpong", "latency us"), ("jb-pingpong window", "MB/s")}


# ---- comparing machines, and the papers --------------------------------------------------

@pytest.mark.unit
def test_compare_sets_each_label_against_the_baseline(tmp_path):
    a = write_perflog(tmp_path / "a" / "HaloCheck.log",
                      [perflog_line("a", "openmpi", 1, v, 1.0) for v in (10, 11, 12, 13, 14)])
    b = write_perflog(tmp_path / "b" / "HaloCheck.log",
                      [perflog_line("b", "openmpi", 1, v, 1.0) for v in (20, 21, 22, 23, 24)])
    assert cli.main(["compare", str(a), str(b), "--baseline", "a", "-o", str(tmp_path / "out")]) == 0
    from jitterbench import report
    rows = report.comparisons(runs.collect([str(a), str(b)], progress=False), "a")
    maxrow = next(r for r in rows if r["var"] == "max")
    assert (maxrow["label"], maxrow["result"].ratio, maxrow["result"].kind) == ("b", 22 / 12, "slower")
    assert maxrow["result"].verdict == "slower by 1.83x, detectable at this noise"   # Holm over max and avg
    assert "Each label against a" in (tmp_path / "out" / "index.html").read_text()


@pytest.mark.mpi
def test_a_measured_machine_stands_beside_a_paper(small_run, tmp_path):
    sp2 = REPO / "reference_data" / "sp2.yaml"
    col = runs.collect([*small_run, str(sp2)], progress=False)
    from jitterbench import report
    measured, rows = report.beside_papers(col)
    stated = {r["stated"]["id"]: r for r in rows}
    assert any(r["stated"]["value"] == 40.991 for r in rows)  # Table 1, 2 processors
    # the 1 KiB pairwise exchange: the paper's mean, and ours from the run's samples
    exchange = [r for r in rows if r["stated"].get("metric") == "exchange_mean_us"]
    assert exchange and exchange[0]["stated"]["value"] == 173
    assert exchange[0]["measured"][measured[0]] > 0
    throughput = next(f for f in report_figures.all_figures(col) if f.name == "alltoall-throughput")
    assert ("sp2", "(paper)", "pairwise", 1048576, 2, "40.99", 1) in throughput.rows
    assert stated  # every stated entry is a row


@pytest.mark.unit
def test_hostile_names_are_escaped_in_the_page(tmp_path):
    hostile = '<script>alert("x")</script>$a$'
    log = write_perflog(tmp_path / "HaloCheck.log",
                        [perflog_line(hostile, "<b>env</b>", 1, 10.0, 8.0, placement="<img src=x onerror=y>")])
    other = write_perflog(tmp_path / "b" / "HaloCheck.log", [perflog_line("b", "openmpi", 1, 10.0, 8.0)])
    assert cli.main(["compare", str(log), str(other), "-o", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "index.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "<b>env</b>" not in html and "<img src=x" not in html


# ---- the page in a real browser ---------------------------------------------------------------

@pytest.mark.mpi
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (ci/test.sh installs Debian's chromium)")
def test_the_report_renders_in_chromium_with_every_figure_and_no_script_error(small_run, tmp_path):
    from playwright.sync_api import sync_playwright
    assert cli.main(["compare", *small_run, str(REPO / "reference_data" / "sp2.yaml"),
                     "-o", str(tmp_path / "report")]) == 0
    errors = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((tmp_path / "report" / "index.html").as_uri())
        images = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0])")
        # the tables sort when a header is clicked
        page.click("details summary")
        page.click("table.sortable th")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    print(f"screenshot: {ARTIFACTS / 'report.png'}")
    assert len(images) == len(report_figures.every()) and all(ok for _, ok in images), images
    assert errors == []
    assert (ARTIFACTS / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- the page's order: the verdict first -------------------------------------------------

@pytest.mark.unit
def test_the_page_opens_with_the_verdict_and_keeps_provenance_folded_and_the_environment_apart(tmp_path):
    case = {"fixture": False, "system": "s", "partition": "p", "environ": "openmpi", "nodes": 1, "placement": "row",
            "mpi_library": "Open MPI v4.1.4", "binding": "cores", "binding_asked": "cores"}
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u1"}, "runs": [{"testcases": [
        {**case, "display_name": "HaloCheck %nodes=1 %placement=row", "result": "fail",
         "perfvalues": {"s:p:max_sendrecv_4096": [30.0, 10.0, None, 0.5, "us", "fail"],
                        "s:p:avg_sendrecv_4096": [9.0, 8.0, None, 0.5, "us", "pass"]}},
        {**case, "display_name": "HaloCheck %nodes=1 %placement=bunched", "placement": "bunched", "result": "pass",
         "perfvalues": {"s:p:max_sendrecv_4096": [11.0, 10.0, None, 0.5, "us", "pass"]}}]}]}))
    assert cli.main(["report", str(report), "-o", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "index.html").read_text()
    order = [html.index(f'id="{name}"') for name in ("verdict", "figures", "provenance")]
    assert order == sorted(order)
    verdict = html[order[0]:order[1]]
    assert "1 of 1</strong>" in verdict and ">FAIL<" in verdict and "3x" in verdict and "1.5x" in verdict
    assert "Every asserted variable past its bound (1)" in verdict  # max of the row placement, not avg
    provenance = html[order[2]:]
    assert provenance.index("<details>") < provenance.index('id="inputs"')
    assert "cores, cores" in provenance and 'href="environment.html"' in provenance
    assert "protocol variables" not in html and (tmp_path / "out" / "environment.html").exists()
    # one node count: the halo figure draws bars (a pair per variant), not lines of one point
    svg = (tmp_path / "out" / "figures" / "halo-scaling.svg").read_text()
    assert svg.count('id="patch_') >= 2 + 4  # the figure and axes, then 2 variants x MAX and AVG bars


@pytest.mark.unit
def test_a_run_with_no_references_is_not_judged_on_the_page_never_shown_as_passed(tmp_path):
    """The main job's baseline run: ReFrame passed every case, nothing was asserted; the page says so."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u1"}, "runs": [{"testcases": [
        {"fixture": False, "system": "s", "partition": "p", "environ": "openmpi", "nodes": 1,
         "display_name": "HaloCheck %nodes=1", "result": "pass", "references_from": "none: no file for this system",
         "perfvalues": {"s:p:max_sendrecv_4096": [30.0, 0, None, None, "us", "pass"]}}]}]}))
    assert cli.main(["report", str(report), "-o", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "index.html").read_text()
    verdict = html[html.index('id="verdict"'):html.index('id="figures"')]
    assert '<p class=""><strong>0 of 1</strong>' in verdict and "<strong>1</strong> not judged or inconclusive" in verdict
    assert ">not judged<" in verdict and ">(no references of this machine)<" in verdict and ">pass<" not in verdict


@pytest.mark.unit
def test_a_node_finding_opens_the_page_before_the_verdict(tmp_path):
    """Node first: the page's first line under its title names the node and the figure that moved."""
    finding = {"past": {"node_probe_us": {"node": "nid007", "value": 2540.0, "reference": 2000.0, "ratio": 1.27,
                                          "bound": 1.16}}, "within": {}}
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u1"}, "runs": [{"testcases": [
        {"fixture": False, "system": "s", "partition": "p", "environ": "openmpi", "nodes": 1,
         "display_name": "HaloCheck %nodes=1", "result": "fail", "node_finding": json.dumps(finding),
         "fail_reason": "performance error: inconclusive: node first: nid007 computes 1.27x slower ...",
         "perfvalues": {"s:p:max_sendrecv_4096": [30.0, 10.0, None, None, "us", "pass"],
                        "s:p:node_probe_us": [2540.0, 2000.0, None, None, "us", "pass"]}}]}]}))
    assert cli.main(["report", str(report), "-o", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "index.html").read_text()
    first = html.index('id="node-first"')
    assert html.index("</h1>") < first < html.index('id="verdict"')
    assert "Node first: nid007 computes 1.27x slower than in the references&#39; runs (node_probe_us" in html[first:]


@pytest.mark.unit
def test_a_case_of_several_launches_is_judged_by_the_launches_each_holder_won():
    """Over launches (issue 41, item 5): each launch names the holder of most of its decided calls,
    and a holder is named where it did so in more launches than its chance allows (binomial, Holm
    over the job's 2 nodes and 2 tasks at the launches' 1 %): 1 in 2 where holders are alike, its
    share of a baseline's launches of the case where one is given."""
    def launch(task, node_calls=(8, 2), task_calls=8):
        return {"rate": 0.01, "decided_calls": 10, "node_calls": list(node_calls), "node_tasks": [1, 1],
                "tasks": [], "nodes": [], "commonest_task": {"task": task, "node": task, "calls": task_calls}}

    # 10 of 10 launches: 0.5^10 = 0.00098, below 0.01 / 4; 9 of 10: 11 / 1024 = 0.0107, above
    assert report_figures.over_launches([launch(0)] * 10) == ({"nodes": [(0, 10)], "tasks": [(0, 10)]}, 0.01)
    assert report_figures.over_launches([launch(0)] * 9 + [launch(1, (2, 8))]) == ({"nodes": [], "tasks": []}, 0.01)
    # a tie of the two tasks (5 of 10 calls each) and of the nodes is no launch's holder
    ties = [launch(0, (5, 5), 5)] * 3 + [launch(1, (2, 8))] * 7
    assert report_figures.launches_won(ties) == {"nodes": Counter({1: 7}), "tasks": Counter({1: 7}), "launches": 10}
    # against a baseline whose task (and node) 0 held 90 of 100 launches: q = 91 / 102, and 10 of 10 is
    # its habit (p = 0.32); task 1 held 10 of 100 (q = 11 / 102), so 6 of 10 (p = 1.6e-4) names it
    habit = {"nodes": Counter({0: 90, 1: 10}), "tasks": Counter({0: 90, 1: 10}), "launches": 100}
    assert report_figures.over_launches([launch(0)] * 10, habit)[0] == {"nodes": [], "tasks": []}
    named, _ = report_figures.over_launches([launch(1, (2, 8))] * 6 + [launch(0)] * 4, habit)
    assert named == {"nodes": [(1, 6)], "tasks": [(1, 6)]}
    # one node holds every maximum and is never named; one launch is judged by its own test
    alone = {**launch(0, (10,)), "node_tasks": [2]}
    assert report_figures.over_launches([alone] * 10)[0] == {"nodes": [], "tasks": [(0, 10)]}
    own = {**launch(1), "tasks": [{"task": 1}]}
    assert report_figures.over_launches([own]) == ({"nodes": [], "tasks": [(1, 1)]}, 0.01)


@pytest.mark.unit
def test_compared_with_a_baseline_a_slot_its_machine_always_makes_slowest_is_no_culprit(tmp_path):
    """Two runs of one case, 10 launches each, task 0 slowest in every launch: alone, each names task
    0 (10 of 10 against 1 in 2); compared, the second run's task 0 is judged against the baseline's
    share of launches (11 / 12: p = 0.42) and is not named, and the row says what it was judged against."""
    from conftest import halo_document
    slowest = {"decided_calls": 10, "rate": 0.01, "node_calls": [10], "node_tasks": [2], "nodes": [], "tasks": [],
               "commonest_task": {"task": 0, "node": 0, "calls": 9}}
    specs = []
    for name in ("base", "new"):
        outputdir = tmp_path / name / "output" / "HaloCheck_1"
        for i in range(1, 11):
            (outputdir / f"launch-{i}").mkdir(parents=True)
            (outputdir / f"launch-{i}" / "halo.json").write_text(json.dumps(halo_document(slowest=slowest)))
        case = {"fixture": False, "result": "pass", "system": "s", "partition": "p", "environ": "openmpi",
                "display_name": "HaloCheck %nodes=1 %placement=row", "nodes": 1, "placement": "row",
                "perfvalues": {}, "outputdir": str(outputdir), "keep_files": ["launch-[0-9]*"]}
        report = tmp_path / name / "report.json"
        report.write_text(json.dumps({"session_info": {"uuid": name}, "runs": [{"testcases": [case]}]}))
        specs.append(f"{name}={report}")
    col = runs.collect(specs, progress=False)
    alone = {row[1]: (row[8], row[10]) for row in report_figures.culprits(col).rows}
    assert alone == {label: ("holders alike", "0 (in 10 of 10 launches)") for label in ("base", "new")}
    compared = {row[1]: (row[8], row[10]) for row in report_figures.culprits(col, "base").rows}
    assert compared == {"base": ("holders alike", "0 (in 10 of 10 launches)"), "new": ("base (10 launches)", "none")}


@pytest.mark.unit
def test_the_culprits_figure_names_what_the_results_named(tmp_path):
    from conftest import halo_document
    named = {"decided_calls": 90, "rate": 0.01, "node_calls": [10, 80], "node_tasks": [1, 1], "tasks_named": 1,
             "nodes": [{"node": 1, "calls": 80, "share": 80 / 90, "fair_share": 0.5, "p": 1e-13}],
             "tasks": [{"task": 1, "node": 1, "calls": 80, "share": 80 / 90, "fair_share": 0.5, "p": 1e-13}]}
    clean = {**named, "node_calls": [45, 45], "nodes": [], "tasks": [], "tasks_named": 0}
    path = tmp_path / "halo.json"
    path.write_text(json.dumps(halo_document(latest=named, slowest=clean)))
    drawn = report_figures.culprits(runs.collect([str(path)], progress=False))
    label = drawn.rows[0][1]
    assert drawn.rows == [("halo", label, "Open MPI v4.1.4", "isend-recv row 848", key, 1, "90/10", "0.01",
                           "the launch's calls", nodes, tasks)
                          for key, nodes, tasks in (("slowest", "none", "none"),
                                                    ("latest", "1 (89 %, fair 50 %)", "1 (89 %, fair 50 %)"))]
    bars = [p.get_height() for p in drawn.figure.axes[0].patches]
    assert bars == pytest.approx([10 / 90, 80 / 90])  # the named result is drawn first
    empty = tmp_path / "old.json"
    empty.write_text(json.dumps(halo_document()))
    assert "no benchmark documents" in report_figures.culprits(runs.collect([str(empty)], progress=False)).note
    # an entry it cannot read (no nodes, or counts that are no whole numbers) is passed over, never a traceback
    for broken in ({**named, "node_calls": [], "node_tasks": []}, {**named, "node_calls": ["x", 1]},
                   {**named, "node_tasks": [1]}, {**named, "commonest_task": [1]}, {**named, "rate": None}):
        empty.write_text(json.dumps(halo_document(latest=broken, slowest=broken)))
        assert "no benchmark documents" in report_figures.culprits(runs.collect([str(empty)], progress=False)).note
