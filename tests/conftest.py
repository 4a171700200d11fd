"""What every test may use: the real benchmarks run under each MPI's real launcher (run_benchmark),
the binaries ci/setup.sh built (install_prefix), a folder made on the spot (folder).

Where a new test goes: in the file of the module or benchmark it tests (tests/test_<module>.py:
test_references.py for jitterbench/references.py, test_halo.py for src/halo), or of the subject
it runs across modules (test_perflogs.py: ReFrame's perflogs; test_first_day.py: a site's first
day).  Its tier is its one marker (pyproject.toml lists them; a test without exactly one is not
collected): unit for what runs in the test's own process (the edit loop: the command through
jitterbench.cli.main, never started), process for what starts the command or another program (its
exit status, signals, start-up, another working folder or user), mpi for a benchmark's launch,
reframe for a ReFrame run, vcluster, pipeline, fuzz or spack for what those need.  What tests share that is not a test
(the virtual cluster's fixtures, the fuzzers, the ReFrame runs' helpers) goes in tests/support/."""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from jitterbench import mpi as mpis

HANG_LIMIT_S = 120
# The ReFrame runs of the tests launch each case once: they check what a run does, not how fast,
# and the modes' 10 rounds would take CI past its time.  The launches
# themselves (the loop, the median, a disturbed launch launched again) are tested at 3
# (tests/test_launches.py), which sets JB_LAUNCHES itself; so does a test of the main job's
# default.  Likewise the rounds (one round: no --repeat); tests/test_rounds.py sets JB_ROUNDS itself.
os.environ.setdefault("JB_LAUNCHES", "1")
os.environ.setdefault("JB_ROUNDS", "1")
# every benchmark of src/: a folder with a main.c
BENCHMARKS = sorted(p.parent.name for p in (Path(__file__).resolve().parents[1] / "src").glob("*/main.c"))


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    doc: dict | None  # the --json document, if one was written

    def error_lines(self, benchmark="halo"):
        return [l for l in self.stderr.splitlines() if l.startswith(f"jb-{benchmark}: error:")]

    def results(self):
        return self.doc["results"]


def run_benchmark(mpi, np, args, json_path=None, benchmark="halo", timeout=HANG_LIMIT_S, env=None) -> Run:
    """Runs jb-<benchmark> on np ranks, with extra environment variables env;
    a run that outlives timeout is a hang and fails the test."""
    argv = [mpi.binary(benchmark)]
    if json_path is not None:
        argv += ["--json", json_path]  # first, so a test's last option may lack its value
    argv += args
    cmd, full_env = mpi.launch(np, argv)
    full_env.update(env or {})
    proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # what each process of the launch was doing (state R spins, S waits; its kernel wait
        # channel; its CPU time), so that a rare hang says where it stood before it is killed
        states = subprocess.run(["ps", "-o", "pid,stat,wchan:24,time,comm", "-g", str(proc.pid)],
                                capture_output=True, text=True).stdout
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"hung: {' '.join(map(str, cmd))} did not end within {timeout} s\n{states}"
                    f"stdout: {out[-1500:]}\nstderr: {err[-1500:]}")
    doc = None
    if json_path is not None and os.path.exists(json_path):
        with open(json_path) as f:
            doc = json.load(f)
    return Run(proc.returncode, out, err, doc)


def given_once(defaults, args):
    """The options of defaults that args does not give, then args: the C benchmarks refuse an
    option given twice, so a test's own value replaces a default instead of following it."""
    names = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    kept, i = [], 0
    while i < len(defaults):
        takes_value = i + 1 < len(defaults) and not defaults[i + 1].startswith("--")
        if defaults[i] not in names:
            kept += defaults[i:i + 1 + takes_value]
        i += 1 + takes_value
    return kept + list(args)


def assert_rejected(mpi, np, args, message, benchmark, tmp_path):
    """Bad input: non-zero exit, one line from the benchmark naming the problem, no results file, no hang."""
    out = tmp_path / "never.json"
    run = run_benchmark(mpi, np, args, json_path=None if "--json" in args else out, benchmark=benchmark, timeout=60)
    assert run.returncode != 0
    lines = run.error_lines(benchmark)
    assert len(lines) == 1, run.stderr
    assert message in lines[0]
    assert not out.exists() and not list(tmp_path.glob("never.json*"))


def halo_document(**result):
    """A small jb-halo document that report, compare, summarize and simulate halo accept."""
    base = {"placement": "row", "pattern": "isend-recv", "ns_size": 848, "ew_size": 848, "calls": 10,
            "off_node_per_node": 0, "max_us": 30.0, "avg_us": 20.0, "jitter": 1.5, "p99_us": 45.0, "t_max_us": 25.0,
            "histogram": {"bins": [[10, 20, 4], [20, 40, 6]]}, "series": {"max_us": [30.0] * 10}}
    base.update(result)
    return {"benchmark": "halo", "config": {}, "metadata": {"mpi_library": "Open MPI v4.1.4", "ranks": 2},
            "results": [base]}


def command(*argv) -> subprocess.CompletedProcess:
    """The jitterbench command run in this process, as its entry point runs it (jitterbench.cli.main):
    its exit status, standard output and standard error, as a process of its own gives them, for a
    unit test.  What only a process shows (a signal, start-up, another user) is a process test's."""
    from jitterbench import cli  # noqa: PLC0415
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main([str(a) for a in argv])
        except SystemExit as e:  # argparse's --help and refusals
            status = 0 if e.code is None else e.code
    return subprocess.CompletedProcess(["jitterbench", *map(str, argv)], status, out.getvalue(), err.getvalue())


def folder(path) -> Path:
    """path, made where it is not yet: a JB_* folder must be there (jitterbench/settings.py), an
    empty one standing for "none here" (no references, no binaries)."""
    Path(path).mkdir(parents=True, exist_ok=True)
    return Path(path)


def install_prefix(root, variants=()):
    """An install prefix per programming environment, <root>/<environ>/bin, holding
    this checkout's binaries of each MPI found (as a Spack view would), so that
    ReFrame runs take them (JB_PREFIX=<root>/{environ}) instead of building again.
    Each of variants, a transport variant <mpi>-<transport> (systems/sites/vcluster.py),
    takes its MPI's: the transport is chosen when the job runs, not when it is built."""
    for m in mpis.available():
        bindir = root / m.name / "bin"
        bindir.mkdir(parents=True, exist_ok=True)
        for binary in m.binary("halo").parent.glob("jb-*"):
            (bindir / binary.name).symlink_to(binary)
    for variant in variants:
        (root / variant).symlink_to(root / variant.split("-")[0])
    return root


def openmpi_with(*benchmarks):
    """Open MPI, for the tests that need one MPI only and its jb-<benchmarks>; else the test skips."""
    m = mpis.by_name("openmpi")
    missing = [b for b in benchmarks if not m.binary(b).exists()]
    if not m.available() or missing:
        pytest.skip(f"Open MPI or its jb-{', jb-'.join(missing or benchmarks)} is not built (run ci/setup.sh)")
    return m


def run_pinned(m, np, cpu, argv, nice=0, timeout=120):
    """Runs argv on np ranks of MPI m, all on this one CPU: they inherit taskset's mask, Open MPI
    (the only MPI these runs take) binding nothing; at this niceness."""
    cmd, env = m.launch(np, argv)
    env["OMPI_MCA_hwloc_base_binding_policy"] = "none"
    return subprocess.run(["nice", "-n", str(nice), "taskset", "-c", str(cpu), *map(str, cmd)], env=env,
                          capture_output=True, text=True, timeout=timeout)


# the tiers, as pyproject.toml registers them (--strict-markers refuses any other name), in the
# order ci/test.sh runs them
TIERS = ("unit", "process", "mpi", "reframe", "vcluster", "pipeline", "fuzz", "spack")


@pytest.hookimpl(tryfirst=True)  # before -m deselects: `pytest -m unit` checks every test too
def pytest_collection_modifyitems(config, items):
    """Every test carries exactly one tier marker, or nothing is collected: a test without one
    would be run by no tier of ci/test.sh, and one with two by two."""
    wrong = []
    for item in items:
        marked = [m.name for m in item.iter_markers() if m.name in TIERS]
        if len(marked) != 1:
            wrong.append(f"{item.nodeid}: {', '.join(marked) or 'none'}")
    if wrong:
        raise pytest.UsageError(f"{len(wrong)} test(s) lack exactly one tier marker ({', '.join(TIERS)}; "
                                "pytestmark or @pytest.mark.<tier>):\n  " + "\n  ".join(wrong))


def unit_may_start(argv) -> bool:
    """What a unit test may start, though it runs in its own process: `git rev-parse`, which a
    reference file's and a stored run's provenance ask for the checkout's commit (checkout.commit),
    in milliseconds.  A test that runs git itself starts a program: its tier is process."""
    return bool(argv) and os.path.basename(str(argv[0])) == "git" and "rev-parse" in argv


@pytest.fixture(autouse=True)
def _unit_tests_start_no_program(request, monkeypatch):
    """The unit tier is the edit loop, in this process: a unit test that starts a program (the
    jitterbench command, ReFrame, a script, a launcher; a second or more each, as they crept in,
    the tier took 150 s) fails, saying which program and where such a test belongs."""
    if request.node.get_closest_marker("unit") is None:
        return
    start = subprocess.Popen.__init__

    def refused(self, args, *rest, **kw):
        argv = str(args).split() if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        if not unit_may_start(argv):
            raise AssertionError(f"a unit test starts {' '.join(map(str, argv))[:200]}: mark it process "
                                 "(pyproject.toml's tiers), or run the command in this process (jitterbench.cli.main)")
        start(self, args, *rest, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)


@pytest.fixture(params=[m.name for m in mpis.ALL])
def mpi(request):
    m = mpis.by_name(request.param)
    if not m.available():
        pytest.skip(f"{m.name} is not installed ({m.mpicc} or {m.mpirun} not on PATH)")
    for benchmark in BENCHMARKS:
        if not m.binary(benchmark).exists():
            pytest.fail(f"{m.binary(benchmark)} is missing: run ci/setup.sh first")
    return m


@pytest.fixture
def halo(mpi, tmp_path):
    """halo(np, *args) runs jb-halo with --json and returns the Run."""
    counter = iter(range(1000))

    def run(np, *args, **kw):
        return run_benchmark(mpi, np, list(args), json_path=tmp_path / f"halo{next(counter)}.json", **kw)

    return run


def checkout_copy(root):
    """A copy of this checkout's files as git tracks them (and new ones not ignored), committed
    in a repository of its own, so that `git status` there shows what a run changed.  It has
    neither .deps nor build/: the local system there finds Open MPI only."""
    repo = Path(__file__).resolve().parents[1]
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = repo / name
        if source.is_file() and not source.is_symlink():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(source.read_bytes())
            (root / name).chmod(source.stat().st_mode)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@invalid", "-C", str(root)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return root


def until_the_command_handles_signals(proc, timeout=60):
    """Waits until the jitterbench command in proc has taken SIGTERM over (jitterbench/entry.py),
    which it does just before the part of its start-up that Ctrl-C, SIGTERM and SIGHUP end with one
    line: Linux's /proc/PID/status lists the signals a process catches (SigCgt)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        status = Path(f"/proc/{proc.pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.005)
    raise AssertionError("the command never took SIGTERM over")
