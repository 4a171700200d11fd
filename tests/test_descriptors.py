"""The benchmarks' descriptors (jitterbench/benchmarks/): one for every check of a jb-*
binary and every C folder, and back; each turns its JSON document into the cases its
check names; summarize prints every benchmark's results; and the modules that iterate
over the descriptors name no benchmark themselves."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import given_once, run_benchmark
from jitterbench import benchmarks, cli, figures, report_figures, results, runs
from jitterbench import mpi as mpis
from jitterbench import findings

REPO = Path(__file__).resolve().parents[1]


def check_classes():
    """{class name: its `benchmark = "..."` (None where it has none as text)} of every
    class under reframe_checks/, read as text: ReFrame is not imported."""
    classes = {}
    for path in sorted((REPO / "reframe_checks").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                literal = [s.value.value for s in node.body if isinstance(s, ast.Assign)
                           and [getattr(t, "id", None) for t in s.targets] == ["benchmark"]
                           and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)]
                classes[node.name] = literal[0] if literal else None
    return classes


@pytest.mark.unit
def test_every_check_of_a_jb_binary_has_a_descriptor_and_back():
    classes = check_classes()
    # those that run jb-<benchmark>, but the papers mode's findings: one descriptor holds them all
    ours = {name: bench for name, bench in classes.items() if bench and name not in findings.FINDINGS}
    assert {"HaloCheck": "halo", "EagerCheck": "eager"}.items() <= ours.items()  # the parsing works
    for name, bench in ours.items():
        described = benchmarks.by_check(name)
        assert described is not None, f"{name} runs jb-{bench} but has no descriptor in jitterbench/benchmarks/"
        assert described.benchmark == bench, name
    assert set(findings.FINDINGS) <= set(classes)
    for d in benchmarks.ALL:
        assert d.check in classes, f"the descriptor of {d.check} names no class under reframe_checks/"
        assert classes[d.check] == d.benchmark or (d.benchmark is None and classes[d.check] is None), d.check


@pytest.mark.unit
def test_every_c_benchmark_has_a_descriptor_and_back():
    folders = {p.parent.name for p in (REPO / "src").glob("*/main.c")}
    assert {"halo", "noise"} <= folders
    assert folders == {d.benchmark for d in benchmarks.ALL if d.benchmark}


@pytest.mark.unit
def test_names_and_figures_are_each_one_descriptors():
    assert len({d.check for d in benchmarks.ALL}) == len(benchmarks.ALL)
    names = [make.__name__ for make in report_figures.every()]
    assert len(set(names)) == len(names)
    assert benchmarks.by_benchmark("torus").check == "TorusCheck" and benchmarks.by_check("OsuCheck").benchmark is None


def result_values(case):
    return {var: (p.value, p.unit) for var, p in case.perf.items()}


META = {"nodes": 2, "tasks_per_node": 2, "mpi_library": "Open MPI v4.1.4, package: Debian"}
SHAPE = {"nodes": 2, "tasks_per_node": 2}
# benchmark: (results of a small synthetic document, the (check, parameters, values) it becomes)
DOCUMENTS = {
    "halo": ([{"placement": "row", "pattern": "sendrecv", "ns_size": 4096, "ew_size": 4096, "max_us": 30.0,
               "avg_us": 20.0, "jitter": 1.5, "p99_us": 40.0, "t_max_us": 25.0, "p50_us": 28.0}],
             [("HaloCheck", {"placement": "row", "pattern": "sendrecv", "msg_size": 4096},
               {"max": (30.0, "us"), "avg": (20.0, "us"), "jitter": (1.5, "MAX/AVG"), "p99": (40.0, "us"),
                "t_max": (25.0, "us")})]),
    "pingpong": ([{"mode": "isend", "messages": 2, "size": 8, "max_us": 4.0, "speed_mb_s": 8.0}],
                 [("PingPongCheck", {"mode": "isend", "messages": 2, "msg_size": 8},
                   {"cycle": (4.0, "us"), "speed": (8.0, "MB/s")})]),
    # the work after MPI_Waitall is the MAX beside that with the work before, not a case
    "torus": ([{"pattern": "isend", "ndims": 2, "size": 1024, "work_bytes": 4096, "work": "before", "max_us": 10.0,
                "avg_us": 9.0, "p99_us": 14.0, "t_max_us": 9.5, "bandwidth_mb_s": 400.0},
               {"pattern": "isend", "ndims": 2, "size": 1024, "work_bytes": 4096, "work": "after", "max_us": 12.0,
                "avg_us": 11.0, "p99_us": 15.0, "t_max_us": 11.5, "bandwidth_mb_s": 340.0}],
              [("TorusCheck", {"pattern": "isend", "ndims": 2, "msg_size": 1024, "work": 4096},
                {"max": (10.0, "us"), "avg": (9.0, "us"), "p99": (14.0, "us"), "t_max": (9.5, "us"),
                 "bandwidth": (400.0, "MB/s"), "max_work_after": (12.0, "us")})]),
    "alltoall": ([{"method": "pairwise", "size": 1024, "tasks": 4, "max_us": 50.0, "avg_us": 40.0, "p99_us": 70.0,
                   "t_max_us": 45.0, "throughput_mb_s": 120.0}],
                 [("AlltoallCheck", {"method": "pairwise", "msg_size": 1024},
                   {"max": (50.0, "us"), "avg": (40.0, "us"), "p99": (70.0, "us"), "t_max": (45.0, "us"),
                    "throughput": (120.0, "MB/s")})]),
    # the distance is k where the pattern has one, else hops; a slow-down only where measured
    "contention": ([{"pattern": "hops", "size": 8, "hops": 2, "latency_us": 3.0, "latency_p50_us": 2.9, "max_us": 6.0,
                     "slowdown": None},
                    {"pattern": "link", "size": 8, "hops": 2, "k": 3, "latency_us": 5.0, "latency_p50_us": 4.8,
                     "max_us": 10.0, "slowdown": 1.5}],
                   [("ContentionCheck", {"pattern": "hops", "msg_size": 8, "distance": 2},
                     {"latency": (3.0, "us"), "latency_p50": (2.9, "us"), "max": (6.0, "us")}),
                    ("ContentionCheck", {"pattern": "link", "msg_size": 8, "distance": 3},
                     {"latency": (5.0, "us"), "latency_p50": (4.8, "us"), "max": (10.0, "us"), "slowdown": (1.5, "")})]),
    # its check names variables by the partition's transports, which a document does not know
    "eager": ([{"pair": "on-node", "partner": 1, "eager_limit_bytes": 4040, "eager_up_to_max": 0,
                "eager_send_us": 10.0, "rendezvous_send_us": 50000.0}], []),
    # the worst node
    "noise": ([{"node": 0, "host": "a", "tasks": 2, "detours": 10, "rate_per_s": 5.0, "noise_fraction": 0.01,
                "length_p50_us": 3.0, "length_p99_us": 20.0, "length_max_us": 30.0},
               {"node": 1, "host": "b", "tasks": 2, "detours": 40, "rate_per_s": 20.0, "noise_fraction": 0.002,
                "length_p50_us": 1.0, "length_p99_us": 9.0, "length_max_us": 90.0}],
              [("NoiseCheck", {}, {"noise_fraction": (0.01, "fraction"), "rate": (20.0, "1/s"),
                                   "length_p99": (20.0, "us"), "length_max": (90.0, "us")})]),
}


@pytest.mark.unit
@pytest.mark.parametrize("benchmark", sorted(DOCUMENTS))
def test_a_document_becomes_the_cases_its_check_names(benchmark):
    results, expected = DOCUMENTS[benchmark]
    doc = {"benchmark": benchmark, "config": {}, "metadata": META, "results": results}
    cases = runs.document_cases("here", "doc.json", doc)
    assert [(c.check, c.params, result_values(c)) for c in cases] == [
        (check, {**SHAPE, **params}, values) for check, params, values in expected]
    assert all(c.environ == "Open MPI v4.1.4" and c.documents == [doc] for c in cases)


@pytest.mark.unit
def test_a_result_without_a_field_its_descriptor_reads_is_one_error():
    doc = {"benchmark": "halo", "config": {}, "metadata": META, "results": [{"pattern": "sendrecv"}]}
    with pytest.raises(runs.RunsError, match="doc.json: a result of jb-halo lacks the field placement"):
        runs.document_cases("here", "doc.json", doc)


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """A real JSON document of every benchmark that has a descriptor, from 2 ranks of Open MPI."""
    if not mpis.OPENMPI.available():
        pytest.skip("Open MPI is not installed")
    out = tmp_path_factory.mktemp("documents")
    paths = {}
    for d in benchmarks.ALL:
        if d.benchmark:
            path = out / f"{d.benchmark}.json"
            run = run_benchmark(mpis.OPENMPI, 2, given_once(["--calls", "3"], [*d.small, *d.pair_options]), json_path=path,
                                benchmark=d.benchmark)
            assert run.returncode == 0, run.stderr
            paths[d.benchmark] = path
    return paths


@pytest.mark.mpi
def test_summarize_prints_a_row_for_each_result_of_each_benchmark(documents, capsys):
    assert cli.main(["summarize", *map(str, documents.values())]) == 0
    tables = capsys.readouterr().out.split("\n\n")
    assert [t.splitlines()[0] for t in tables] == [f"# jb-{b}" for b in documents]  # the descriptors' order
    for table, (bench, path) in zip(tables, documents.items()):
        lines = table.splitlines()
        described = benchmarks.by_benchmark(bench)
        assert lines[1].split("  ")[0] == "mpi" and all(c.header in lines[1] for c in described.summary), lines[1]
        assert len(lines) - 2 == len(results.load(path)["results"]) > 0, table
        assert all(line.startswith("Open MPI") for line in lines[2:]), table


@pytest.mark.mpi
def test_every_real_document_reads_as_its_checks_cases(documents):
    col = runs.collect([str(p) for p in documents.values()], progress=False)
    for bench in documents:
        none_expected = bench in DOCUMENTS and not DOCUMENTS[bench][1]  # eager: see DOCUMENTS
        cases = col.of(benchmarks.by_benchmark(bench).check)
        assert bool(cases) != none_expected, bench
        # the job's nodes: one, but where the run made virtual nodes (pairs, congestion: --tasks-per-node 1)
        assert all(c.perf and c.params["nodes"] == c.documents[0]["metadata"]["nodes"] for c in cases), bench


@pytest.mark.mpi
def test_every_result_of_a_real_document_holds_what_its_record_declares_and_nothing_else(documents):
    for bench, path in documents.items():
        record = benchmarks.by_benchmark(bench)
        fields = set().union(*(r.keys() for r in results.load(path)["results"]))
        assert fields - record.declared_fields() == set(), f"jb-{bench} writes fields its record does not declare"
        missing = {q.field for q in record.quantities} - fields
        assert missing == set(), f"jb-{bench}'s record declares quantities its results lack"


def string_constants(tree):
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


@pytest.mark.unit
def test_the_modules_that_iterate_over_descriptors_name_no_benchmark():
    # a benchmark's name that is also a result field ("pairs": jb-pairs, and ping-pong's pairs) may stand as the field
    fields = {f for d in benchmarks.ALL for f in d.declared_fields()}
    names = {d.check for d in benchmarks.ALL} | {d.benchmark for d in benchmarks.ALL if d.benchmark} - fields
    package = REPO / "jitterbench"
    for module in ("runs", "report", "figures", "report_figures", "sweeps", "references", "results", "compare", "verdict_table"):
        named = string_constants(ast.parse((package / f"{module}.py").read_text())) & names
        assert not named, f"jitterbench/{module}.py names {', '.join(sorted(named))}: that belongs in a descriptor"
    # cli.py: the commands that read every benchmark (simulate reads one benchmark's documents)
    tree = ast.parse((package / "cli.py").read_text())
    commands = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name in ("summarize", "write_report")]
    assert len(commands) == 2
    named = set().union(*(string_constants(f) for f in commands)) & names
    assert not named, f"jitterbench/cli.py names {', '.join(sorted(named))} in its commands"
