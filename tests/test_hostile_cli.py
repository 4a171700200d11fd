"""The failures issue 44's probe found, one regression test each (items 1-13): a hostile value
never runs as code, nothing is written outside -o, no output blocks or replaces what the user
protected, a silent dashboard costs one timeout, every refusal is one line.  Commands run as a
subprocess where the failure was a process's (a hang, a signal, a full standard output, a limit),
and as an unprivileged user in a scratch folder where it was a permission's (root writes anything)."""
from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from support import fuzz_cli as fz
from jitterbench import cli, mpi as mpis, references, settings, site
from jitterbench.harness import configuration, systems

REPO = Path(__file__).resolve().parents[1]
JITTERBENCH = [sys.executable, "-m", "jitterbench"]
GUARD_S = 60  # a command still running after this hung: it fails the test, not the session


def jitterbench(*argv, cwd=None, env=None, user=None, **kw):
    """The command, as user (None: this one), failing the test where it hangs; its home and
    Matplotlib's cache in cwd (the user's own: nobody has no home)."""
    full = {**{k: v for k, v in os.environ.items() if not k.startswith("JB_")}, "LC_ALL": "C.UTF-8",
            **({"HOME": str(cwd), "MPLCONFIGDIR": str(Path(cwd) / ".mpl")} if cwd else {}), **(env or {})}
    return subprocess.run([*fz.as_user(user), *JITTERBENCH, *map(str, argv)], cwd=cwd, env=full, text=True,
                          capture_output=kw.pop("capture_output", "stdout" not in kw), timeout=GUARD_S, **kw)


def one_line(proc, *says):
    """A refusal: exit 2, stderr one line starting 'jitterbench' holding each of says."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("jitterbench"), proc.stderr
    for said in says:
        assert said in lines[0], proc.stderr


def reports(folder: Path, system="local"):
    """Five run reports of system (the fewest a reference file is made of)."""
    paths = []
    for i in range(5):
        doc = fz.run_report(i, 10.0 + i / 10)
        doc["runs"][0]["testcases"][0]["system"] = system
        doc["runs"][0]["testcases"][0]["perfvalues"] = {k.replace("local:", f"{system}:", 1): v for k, v in
                                                        doc["runs"][0]["testcases"][0]["perfvalues"].items()}
        paths.append(folder / f"report{i}.json")
        paths[-1].write_text(json.dumps(doc))
    return [str(p) for p in paths]


@pytest.fixture
def scratch():
    """A folder an unprivileged user owns (nobody where the tests run as root), and that user's uid
    (None: the tests' own user, already unprivileged)."""
    uid = fz.NOBODY if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="hostile-cli-"))
    os.chmod(base, 0o755)
    if uid is not None:
        os.chown(base, uid, uid)
    yield base, uid
    for root, dirs, _ in os.walk(base):  # what a test made read-only, writable again to be removed
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    shutil.rmtree(base, ignore_errors=True)


def owned(path: Path, uid):
    if uid is not None:
        for root, dirs, names in os.walk(path):
            for name in [*dirs, *names, ""]:
                os.lchown(os.path.join(root, name), uid, uid)
    return path


# ---- 1: no code from `site new` ------------------------------------------------------------

HOSTILE_TEXT = 'x"""and __import__("os").system("touch P")or"""' + "'\\{}\u2028"
ACCESS = HOSTILE_TEXT.replace("\u2028", "")  # a partition's access goes into job scripts: no line separator


@pytest.mark.unit
def test_1_site_new_writes_hostile_values_as_literals_and_loading_the_module_runs_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sites = tmp_path / "sites"
    sites.mkdir()
    written = site.new("hostile", [HOSTILE_TEXT], "local", "local", ["openmpi"], "tcp",
                       [f"p:2:2:--x={ACCESS}"], sites=sites, command=f"jitterbench site new {HOSTILE_TEXT}")
    assert sites / "hostile.py" in written
    module = systems._load(sites / "hostile.py")  # as ReFrame's configuration loads it
    assert module.SYSTEM["hostnames"] == [HOSTILE_TEXT]
    assert module.SYSTEM["partitions"][0]["access"] == [f"--x={ACCESS}"]
    assert module.COMMAND == f"jitterbench site new {HOSTILE_TEXT}"
    assert not list(tmp_path.rglob("P"))


@pytest.mark.unit
def test_13_site_new_refuses_a_partition_beyond_any_machine(tmp_path):
    with pytest.raises(site.SiteError, match="nodes must be 1 to"):
        site.parse_partition("p:99999999999999999999999:1", "slurm")
    with pytest.raises(site.SiteError, match="tasks per node 1 to"):
        site.parse_partition("p:1:99999999999999999999999", "slurm")
    with pytest.raises(site.SiteError, match="a control character"):  # ACCESS goes into job scripts
        site.parse_partition("p:1:1:-A x\rtouch P", "slurm")


# ---- 2: no write outside -o ----------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("system", ["../../../X", "/tmp/X", "a/../../b"])
def test_2_a_system_name_from_the_reports_cannot_take_reference_o_dir_outside_it(tmp_path, capsys, system):
    out = tmp_path / "a" / "b" / "c" / "refs"
    out.mkdir(parents=True)
    made = reports(tmp_path, system)
    before, outside = fz.snapshot(tmp_path), os.path.lexists("/tmp/X.yaml")
    assert cli.main(["reference", *made, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "would write outside it" in err, err
    assert fz.snapshot(tmp_path) == before and os.path.lexists("/tmp/X.yaml") == outside
    # a folder named with a trailing / that is not there yet is not made for a name that leaves it
    assert cli.main(["reference", *made, "-o", f"{tmp_path}/new/"]) == 2
    assert "would write outside it" in capsys.readouterr().err and not (tmp_path / "new").exists()


# ---- 3: no hang on a FIFO output -----------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("argv", [
    ["reference", "{reports}", "-o", "{fifo}"],
    ["simulate", "alltoall", "{samples}", "--trials", "10", "--json", "{fifo}"],
    ["simulate", "profile", "--compute-us", "10", "--messages", "2", "--size", "8", "--figure", "{fifo}.svg"],
    ["report", "{reports}", "-o", "{fifo}"],
])
def test_3_a_fifo_output_is_refused_without_waiting_for_a_reader(tmp_path, argv):
    os.mkfifo(tmp_path / "out")
    os.mkfifo(tmp_path / "out.svg")
    (tmp_path / "samples.txt").write_text("5\n6\n7\n")
    made = reports(tmp_path)
    expanded = []
    for a in argv:
        expanded += made if a == "{reports}" else [a.format(fifo=tmp_path / "out", samples=tmp_path / "samples.txt")]
    one_line(jitterbench(*expanded, cwd=tmp_path), "out")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out").st_mode)


# ---- 4: a silent dashboard costs one timeout -----------------------------------------------

@pytest.mark.unit
def test_4_a_dashboard_that_accepts_and_never_answers_costs_one_timeout(monkeypatch):
    from reframe.core import logging as rfm_logging
    from reframe.core.exceptions import LoggingError

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted = []
    threading.Thread(target=lambda: [accepted.append(server.accept()) for _ in range(16)], daemon=True).start()
    monkeypatch.setenv("JB_RESULTS_URL", f"http://127.0.0.1:{server.getsockname()[1]}/jb/_doc")
    monkeypatch.setattr(configuration, "RESULTS_TIMEOUT_S", 1)
    (config,) = configuration.results_handlers()

    class SiteConfig:  # what ReFrame's creator reads of the handler's entry (its defaults else)
        def get(self, key):
            return {"url": config["url"], "extras": config["extras"], "backoff_intervals": [0.1],
                    "retry_timeout": 0, "debug": False}.get(key.rsplit("/", 1)[1])

    handler = rfm_logging._create_handlers[config["type"]](SiteConfig(), "logging/0/handlers_perflog/0")
    record = logging.LogRecord("perf", logging.INFO, __file__, 1, "a case", None, None)
    record.check_tags = set()
    outcome = []

    def emit_twice():
        for _ in range(2):
            try:
                handler.emit(record)
                outcome.append(None)
            except LoggingError as e:
                outcome.append(str(e))

    worker = threading.Thread(target=emit_twice, daemon=True)
    worker.start()
    worker.join(GUARD_S)  # ReFrame's own handler never returns here
    assert not worker.is_alive(), "the post to a silent dashboard hung"
    connections = len(accepted)
    assert outcome[0] and "JB_RESULTS_URL: no answer within 1 s" in outcome[0]
    assert outcome[1] is None and len(accepted) == connections  # the dead dashboard not asked again
    server.close()


# ---- 5: JB_* folders checked as JB_OUTPUT is ------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("name", ["JB_PREFIX", "JB_OSU_PREFIX", "JB_IMB_PREFIX", "JB_PERFTEST_PREFIX",
                                  "JB_SPACK_VIEWS", "JB_REFERENCE_DIR"])
def test_5_a_folder_variable_holding_commands_or_naming_nothing_is_one_line(tmp_path, name):
    template = "/{environ}" if name in ("JB_PREFIX", "JB_OSU_PREFIX", "JB_IMB_PREFIX") else ""
    hostile = tmp_path / "p $(touch X);`touch Y`"
    hostile.mkdir()
    for value in (f"{hostile}{template}", f"{tmp_path}/nothing{template}"):
        proc = jitterbench("table", "x.json", cwd=tmp_path, env={name: value})
        one_line(proc, f"{name}=")
    assert not [p for p in tmp_path.rglob("*") if p.name in ("X", "Y")]
    assert settings.check(environ={name: f"{tmp_path}{template}"}) is None


# ---- 6: one signal path --------------------------------------------------------------------

CALLBACK_SIGNAL = """
import os, signal, sys
from jitterbench import signals
signals.install()

class Callback:
    def __del__(self):  # the signal comes while a garbage-collection callback runs
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100000):
            pass

try:
    Callback()
    for _ in range(10 ** 7):
        pass
    print("went on as if nothing came")
    sys.exit(0)
except KeyboardInterrupt:
    print("interrupted")
    sys.exit(130)
"""


@pytest.mark.process
def test_6_a_signal_that_lands_in_a_callback_still_ends_the_command():
    proc = subprocess.run([sys.executable, "-c", CALLBACK_SIGNAL], cwd=REPO, capture_output=True, text=True,
                          timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "interrupted\n", "")


SIGNAL_AS_THE_COMMAND_ENDS = """
import os, signal, sys
from jitterbench import cli, entry

def command():  # the command's work done; the signal comes as it returns
    os.kill(os.getpid(), signal.SIGTERM)
    return 0

cli.main = command
sys.exit(entry.main())
"""


@pytest.mark.process
def test_6_a_signal_that_comes_as_the_command_ends_is_one_line_not_a_death_by_sigint():
    """Python acts on a signal at the next call: a SIGTERM that came as the command returned was raised
    on entering the entry point's last signals.quiet(), outside any handler, and the process ended by
    SIGINT (exit -2) with no line: 1 of 60 random SIGTERMs during `report` did so."""
    proc = subprocess.run([sys.executable, "-c", SIGNAL_AS_THE_COMMAND_ENDS], cwd=REPO, capture_output=True,
                          text=True, timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "jitterbench: interrupted\n")


@pytest.mark.unit
@pytest.mark.parametrize("output", ["report", "ref.yaml"])
def test_6_a_signal_right_after_the_temporary_output_is_made_leaves_nothing(tmp_path, capsys, monkeypatch, output):
    made = reports(tmp_path)
    before = fz.snapshot(tmp_path)
    real = {"mkdtemp": tempfile.mkdtemp, "mkstemp": tempfile.mkstemp}

    def then_signalled(kind):
        def make(**where):
            got = real[kind](**where)
            os.kill(os.getpid(), signal.SIGINT)  # between its making and the block that removes it
            return got
        return make

    monkeypatch.setattr(tempfile, "mkdtemp", then_signalled("mkdtemp"))
    monkeypatch.setattr(tempfile, "mkstemp", then_signalled("mkstemp"))
    argv = ["report", *made, "-o", str(tmp_path / output)] if output == "report" else \
        ["reference", *made, "-o", str(tmp_path / output)]
    assert cli.main(argv) == 130
    assert capsys.readouterr().err.rsplit("\r", 1)[-1] == "jitterbench: interrupted\n"  # after tqdm's progress line
    assert fz.snapshot(tmp_path) == before


# ---- 7 and 13: read-only targets -----------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("command,target,mode", [("report", "rep", 0o555), ("reference", "local.yaml", 0o444)])
def test_7_a_read_only_report_or_reference_is_kept_as_it_is(scratch, command, target, mode):
    base, uid = scratch
    made = reports(owned(base, uid))
    owned(base, uid)
    assert jitterbench(command, *made, "-o", target, cwd=base, user=uid).returncode == 0
    os.chmod(base / target, mode)
    before = fz.snapshot(base)
    one_line(jitterbench(command, *made, "-o", target, cwd=base, user=uid), target, "read-only")
    assert fz.snapshot(base) == before


@pytest.mark.process
def test_13_simulate_json_into_a_read_only_folder_is_refused_before_the_table(scratch):
    base, uid = scratch
    (base / "samples.txt").write_text("5\n6\n7\n")
    (base / "ro").mkdir()
    owned(base, uid)
    os.chmod(base / "ro", 0o555)
    proc = jitterbench("simulate", "alltoall", "samples.txt", "--trials", "10", "--json", "ro/out.json", cwd=base,
                       user=uid)
    one_line(proc, "ro/out.json", "read-only")
    assert proc.stdout == ""


# ---- 8: a file that merely holds the marker is the user's ----------------------------------

@pytest.mark.unit
def test_8_a_file_holding_the_marker_text_further_in_is_not_overwritten(tmp_path, capsys):
    note = tmp_path / "notes.yaml"  # a file of the user's that ReFrame's lookup would also take
    note.write_text(f"my notes: jitterbench writes files that begin {references.HEAD}local'.\n")
    assert cli.main(["reference", *reports(tmp_path), "-o", str(note)]) == 2
    assert "not a file jitterbench wrote" in capsys.readouterr().err
    assert note.read_text().startswith("my notes")


# ---- 9: '' refused everywhere --------------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("command", ["report", "compare", "reference"])
def test_9_an_output_named_empty_is_refused(tmp_path, command):
    made = reports(tmp_path)
    before = fz.snapshot(tmp_path)
    one_line(jitterbench(command, *made, "-o", "", cwd=tmp_path), "''")
    assert fz.snapshot(tmp_path) == before


# ---- 10: a full standard output ------------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("argv", [["summarize", "{halo}"], ["table", "{report}"], ["--help"], ["table", "--help"],
                                  ["--version"], ["report", "{report}", "-o", "rep"],
                                  ["simulate", "profile", "--compute-us", "10", "--messages", "2", "--size", "8"]])
def test_10_a_full_standard_output_is_one_line_and_exit_2(tmp_path, argv):
    from conftest import halo_document
    (tmp_path / "halo.json").write_text(json.dumps(halo_document()))
    report = reports(tmp_path)[0]
    argv = [a.format(halo=tmp_path / "halo.json", report=report) for a in argv]
    with open("/dev/full", "w") as full:
        proc = jitterbench(*argv, cwd=tmp_path, stdout=full, stderr=subprocess.PIPE)
    one_line(proc, "cannot write standard output")
    assert "Exception ignored" not in proc.stderr


# ---- 11: numbers the tool computes with ----------------------------------------------------

@pytest.mark.process
def test_11_a_false_alarm_rate_too_small_to_bound_is_said_of_the_rate(tmp_path):
    proc = jitterbench("reference", *reports(tmp_path), "--false-alarm-rate", "1e-320", "-o", "out.yaml", cwd=tmp_path)
    one_line(proc, "false-alarm rate of 1e-320")
    assert "Warning" not in proc.stderr and not (tmp_path / "out.yaml").exists()


def _address_space(limit):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.process
def test_11_simulate_under_an_address_space_limit_names_the_limit(tmp_path):
    (tmp_path / "samples.txt").write_text("5\n6\n7\n")
    proc = subprocess.run([*JITTERBENCH, "simulate", "alltoall", "samples.txt", "--trials", "20000000"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=GUARD_S, preexec_fn=_address_space(2 << 30))
    one_line(proc, "address-space limit", "fewer --trials")


# ---- 12: the C abort path ------------------------------------------------------------------

@pytest.mark.mpi
@pytest.mark.parametrize("option", ["--size", "--ns-size"])
def test_12_a_size_over_the_address_space_limit_is_one_line_naming_its_option(option):
    m = mpis.OPENMPI
    if not m.available() or not m.binary("halo").exists():
        pytest.skip("Open MPI or its jb-halo is not built")
    cmd, env = m.launch(1, [m.binary("halo"), option, "1G", "--calls", "2"])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=GUARD_S,
                          preexec_fn=_address_space(3 << 30))
    errors = [line for line in proc.stderr.splitlines() if line.startswith("jb-halo: error:")]
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr
    assert f"the most for {option} " in errors[0] and "MPI_ABORT" not in proc.stderr, proc.stderr


# ---- 13: one run given twice ---------------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("command", ["report", "compare"])
def test_13_the_same_run_given_twice_is_refused(tmp_path, command):
    report = reports(tmp_path)[0]
    one_line(jitterbench(command, report, report, "-o", "out", cwd=tmp_path), "given twice")
    assert not (tmp_path / "out").exists()


@pytest.mark.unit
def test_6_an_interrupt_a_library_turned_into_its_own_error_is_still_an_interrupt(monkeypatch, capsys):
    """SIGTERM while scipy's C extension initialised came out as "ImportError: initialization
    failed" and a traceback (1 of 40 random SIGTERMs during report): where a signal came, any error
    is the interrupt."""
    from jitterbench import signals

    def import_stopped(args):
        raise ImportError("initialization failed")
    monkeypatch.setattr(cli, "run", import_stopped)
    monkeypatch.setattr(signals, "_received", [True])
    assert cli.main(["summarize", "x.json"]) == 130
    assert capsys.readouterr().err == "jitterbench: interrupted\n"
    monkeypatch.setattr(signals, "_received", [False])
    with pytest.raises(ImportError):  # without a signal, an error of the code's own is not hidden
        cli.main(["summarize", "x.json"])


@pytest.mark.process
def test_a_refusal_after_reading_four_runs_or_more_is_one_line_without_a_progress_bar(tmp_path):
    """Found by the fuzzer's traversal family: tqdm's bar, on a standard error that is no terminal,
    put carriage returns (lines to splitlines, and to a log) before the one line."""
    made = reports(tmp_path)
    Path(made[-1]).write_text(Path(made[-1]).read_text().replace('"nodes": 1', '"nodes": "one"'))
    proc = jitterbench("report", *made, "-o", "rep", cwd=tmp_path)
    one_line(proc)
    assert "\r" not in proc.stderr


@pytest.mark.unit
def test_a_line_separator_in_a_value_is_escaped_in_the_one_line():
    """Found by the fuzzer's site-module family: U+2028 (and U+2029, NEL) break a line for
    str.splitlines and for some terminals."""
    from jitterbench.console import one_line
    said = one_line("unknown scheduler 'x\u2028y\u2029z\x85w'")
    assert said.splitlines() == [said] and "\\u2028" in said
