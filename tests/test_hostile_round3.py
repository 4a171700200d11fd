"""The failures issue 61's probe found (round three), one regression test each, numbered as the
issue numbers them: what the tool removes or replaces is what it can prove it wrote, a signal
during start-up is one line, every JB_* variable is checked by one table wherever it is read,
the simulators cost what their docs say, and the C benchmarks refuse an option given twice
(tests/test_hostile_c.py holds that one)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import command
from support import fuzz_cli as fz
from jitterbench import cli, files, references, settings

REPO = Path(__file__).resolve().parents[1]
JITTERBENCH = [sys.executable, "-m", "jitterbench"]
GUARD_S = 60


def reports(folder: Path):
    """Five run reports (the fewest a reference file is made of)."""
    paths = []
    for i in range(5):
        paths.append(folder / f"report{i}.json")
        paths[-1].write_text(json.dumps(fz.run_report(i, 10.0 + i / 10)))
    return [str(p) for p in paths]


def one_line(proc, *says):
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("jitterbench"), proc.stderr
    for said in says:
        assert said in lines[0], proc.stderr


def as_nobody():
    """The prefix that runs a command as an unprivileged user (none where the tests are one)."""
    return fz.as_user(fz.NOBODY if os.geteuid() == 0 else None)


@pytest.fixture
def scratch():
    """A folder an unprivileged user owns; the tests' own user where it is one already."""
    base = Path(tempfile.mkdtemp(prefix="round3-"))
    os.chmod(base, 0o755)
    if os.geteuid() == 0:
        os.chown(base, fz.NOBODY, fz.NOBODY)
    yield base
    for root, dirs, _ in os.walk(base):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    shutil.rmtree(base, ignore_errors=True)


# ---- 1: a forged marker removes nothing ------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("marker", ["jitterbench 0.1.0\nindex.html\nthesis.tex\n",  # the forgery
                                    None])  # a report of the tool's, one of its files replaced by the user's
def test_1_a_marker_naming_a_file_whose_bytes_are_not_the_tool_s_removes_nothing(tmp_path, capsys, marker):
    made = reports(tmp_path)
    fake = tmp_path / "fake"
    if marker is None:
        assert cli.main(["report", *made, "-o", str(fake)]) == 0
        (fake / "index.html").write_text("precious\n")  # the user's own page now, under the tool's name
        kept = fake / "index.html"
    else:
        fake.mkdir()
        (fake / files.MARKER).write_text(marker)
        (fake / "thesis.tex").write_text("precious\n")
        kept = fake / "thesis.tex"
    capsys.readouterr()
    before = fz.snapshot(tmp_path)
    assert cli.main(["compare", f"A={made[0]}", f"B={made[1]}", "-o", str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not replaced" in err, err
    assert fz.snapshot(tmp_path) == before and kept.read_text() == "precious\n"


@pytest.mark.unit
def test_1_a_report_the_tool_wrote_is_still_replaced(tmp_path, capsys):
    made = reports(tmp_path)
    assert cli.main(["report", *made, "-o", str(tmp_path / "rep")]) == 0
    assert cli.main(["compare", f"A={made[0]}", f"B={made[1]}", "-o", str(tmp_path / "rep")]) == 0
    assert "A vs B" in (tmp_path / "rep" / "index.html").read_text()  # the comparison's page
    # each file's line holds its checksum: what a later run proves it wrote
    lines = (tmp_path / "rep" / files.MARKER).read_text().splitlines()
    assert lines[0].startswith("jitterbench ") and any(line.startswith("sha256:") for line in lines[1:])


# ---- 2: reference -o replaces only a whole file the tool wrote ----------------------------------

@pytest.mark.unit
def test_2_a_user_s_file_that_begins_with_the_header_line_is_not_replaced(tmp_path, capsys):
    notes = tmp_path / "x.yaml"
    notes.write_text(f"{references.HEAD}x'.\nmy own notes on the machine\n")
    assert cli.main(["reference", *reports(tmp_path), "-o", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a file jitterbench wrote" in err and "--force" in err
    assert notes.read_text().endswith("my own notes on the machine\n")


@pytest.mark.unit
def test_2_a_reference_file_edited_by_hand_is_not_replaced_but_one_as_written_is(tmp_path, capsys):
    made, ref = reports(tmp_path), tmp_path / "local.yaml"
    assert cli.main(["reference", *made, "-o", str(ref)]) == 0
    assert cli.main(["reference", *made, "-o", str(ref)]) == 0  # its own, as it wrote it
    edited = ref.read_text().replace("provenance:", "# my bound, set by hand\nprovenance:", 1)
    ref.write_text(edited)
    capsys.readouterr()
    assert cli.main(["reference", *made, "-o", str(ref)]) == 2
    assert "not a file jitterbench wrote" in capsys.readouterr().err and ref.read_text() == edited
    # a file of an earlier jitterbench (no checksum line) whose provenance says the tool made it: replaced
    shipped = tmp_path / "old.yaml"
    shipped.write_text((REPO / "reference_data" / "local.yaml").read_text())
    assert cli.main(["reference", *made, "-o", str(shipped)]) == 0


# ---- 3: a signal while the modules load --------------------------------------------------------

SIGNAL_IN_AN_IMPORT = """
import os, signal, sys

class Stopped:  # numpy's import, which a KeyboardInterrupt inside it turns into an ImportError
    def find_spec(self, name, path=None, target=None):
        if name == "jitterbench.cli":
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(10**6):
                    pass
            except KeyboardInterrupt:
                raise ImportError("numpy._core.multiarray failed to import") from None
        return None

sys.meta_path.insert(0, Stopped())
from jitterbench import entry
sys.exit(entry.main())
"""


@pytest.mark.process
def test_3_a_signal_that_a_module_s_import_turns_into_an_import_error_is_one_line():
    proc = subprocess.run([sys.executable, "-c", SIGNAL_IN_AN_IMPORT], cwd=REPO, capture_output=True, text=True,
                          timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "jitterbench: interrupted\n")


SIGNAL_IN_A_CYTHON_IMPORT = """
import os, signal, sys, types, warnings
from jitterbench import signals
signals.install()
signals.REDELIVER_S = 0.1  # the warning said before the hook's alarm, every time (a millisecond: most times)
try:
    try:  # a Cython module's import: the interrupt passed to sys.unraisablehook, then a warning
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10**6):
            pass
    except KeyboardInterrupt as e:
        sys.unraisablehook(types.SimpleNamespace(exc_type=type(e), exc_value=e, exc_traceback=None, err_msg=None,
                                                 object=None))
        warnings.warn("Cython module failed to patch module with custom type", RuntimeWarning)
    for _ in range(10**7):  # the import goes on; the hook's alarm raises the interrupt again
        pass
except KeyboardInterrupt:
    sys.exit(signals.interrupted())
"""


@pytest.mark.process
def test_3_a_warning_a_library_gives_about_the_signal_is_not_a_second_line():
    """The fuzzer's case (seed 6163, case 1004): SIGINT inside SciPy's imports printed Cython's
    RuntimeWarning before the one line (Cython's Coroutine.c, __Pyx_Coroutine_patch_module: the
    interrupt to sys.unraisablehook, then the warning).  A module the command loads later than the
    entry point's (a command's own import of SciPy) still meets it."""
    proc = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_CYTHON_IMPORT], cwd=REPO, capture_output=True,
                          text=True, timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "jitterbench: interrupted\n")


SIGNAL_IN_AN_EXTENSION_S_IMPORT = """
import os, signal, sys

class Interrupted:  # the signal comes as orjson's import begins (history.py)
    def find_spec(self, name, path=None, target=None):
        if name == "orjson":
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**6):
                pass
            print("orjson's import went on", flush=True)
        return None

sys.meta_path.insert(0, Interrupted())
sys.argv = ["jitterbench", "--version"]
from jitterbench import entry
sys.exit(entry.main())
"""


@pytest.mark.process
def test_3_a_signal_while_the_modules_load_is_acted_on_once_they_have():
    """The fuzzer's case (seed 6164, case 716): a SIGINT 0.4 s into `simulate halo` ended it by
    SIGSEGV inside orjson's initialisation (ijl/orjson#310: it assumes its own imports succeed).
    The signal now waits for the modules: the import goes on, then the one line, exit 130."""
    proc = subprocess.run([sys.executable, "-c", SIGNAL_IN_AN_EXTENSION_S_IMPORT], cwd=REPO, capture_output=True,
                          text=True, timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "orjson's import went on\n",
                                                           "jitterbench: interrupted\n")


# a signal whose KeyboardInterrupt leaves code run by exec() (dataclasses make each __init__ so): Python
# notes it as unhandled for good, and `python -m` then ended by SIGINT after the one line (5 of 30
# random SIGTERMs 0.3-0.45 s into `python -m jitterbench reference`)
SIGNAL_IN_EXEC = """
import os, signal, sys

class Stopped:
    def find_spec(self, name, path=None, target=None):
        if name == "jitterbench.cli":
            exec("os.kill(os.getpid(), signal.SIGTERM)\\nfor _ in range(10**6):\\n    pass")
        return None

sys.meta_path.insert(0, Stopped())
"""


@pytest.mark.process
def test_3_a_signal_that_leaves_an_exec_during_the_imports_is_one_line_under_python_m(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SIGNAL_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run([*JITTERBENCH, "table", "x.json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=GUARD_S)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "jitterbench: interrupted\n")


@pytest.mark.process
def test_3_the_package_loads_nothing_before_the_entry_point_s_handler():
    """The entry point's first line installs the handler; the package it lives in loads nothing
    first (importlib.metadata took a window of its own, in which a signal was Python's default)."""
    probe = ("import sys; before = set(sys.modules); import jitterbench, jitterbench.entry; "
             "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in ('jitterbench',)))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=GUARD_S)
    loaded = eval(proc.stdout)  # noqa: S307  a list of module names this test printed
    assert not [m for m in loaded if m.startswith(("importlib.metadata", "email", "zipfile"))], loaded
    from jitterbench import __version__  # still there, read when asked
    assert __version__ == (REPO / "VERSION").read_text().strip()


# ---- 6: simulate halo's cost ----------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("sample,calls", [([10.0, 30.0], 100),             # few values: counted per task
                                          (list(range(1, 200)), 4)])       # many: drawn per task
def test_6_the_uncoupled_limit_keeps_no_array_of_its_tasks(sample, calls):
    """At 10^8 tasks it held 830 MB (8 bytes a task): its memory is a chunk's, whatever N."""
    import tracemalloc

    import numpy as np

    from jitterbench.simulate import halo
    tasks = 2_000_000  # an array of them: 16 MB
    tracemalloc.start()
    try:
        largest, mean = halo._halo_once(np.array(sample, float), tasks, calls, np.random.default_rng(1), False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20, peak
    assert min(sample) <= mean <= largest <= max(sample)


@pytest.mark.unit
@pytest.mark.parametrize("terminal", [True, False])
def test_6_long_work_shows_its_progress_on_a_terminal_only(tmp_path, monkeypatch, capsys, terminal):
    import io

    from conftest import halo_document
    from jitterbench.simulate import command
    halo = tmp_path / "halo.json"
    halo.write_text(json.dumps(halo_document()))
    monkeypatch.setattr(command, "PROGRESS_AFTER_S", 0.0)  # this small one as if it took long

    class Terminal(io.StringIO):
        def isatty(self):
            return terminal

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["simulate", "halo", str(halo), "--tasks", "4,100000"]) == 0
    assert ("MAX uncoupled" in err.getvalue()) == terminal, err.getvalue()
    assert "100000" in capsys.readouterr().out


@pytest.mark.unit
def test_6_the_docs_say_what_grows_with_the_tasks():
    text = (REPO / "docs" / "cli.md").read_text()
    assert "Neither grows in cost with N: the whole prediction" not in text
    assert "grows as the task count" in text


# ---- 7: simulate alltoall reads its samples as a stream ---------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("garbage,line", [(b"x" * (64 << 20), 1),                      # no line break at all
                                          (b"12.5\n# a comment\n\n" + b"\x00\xff" * (32 << 20), 4)])
def test_7_a_garbage_samples_file_is_refused_at_its_first_bad_line_without_reading_it_whole(tmp_path, garbage, line):
    import tracemalloc

    from jitterbench import simulate
    samples = tmp_path / "samples.txt"
    samples.write_bytes(garbage)
    tracemalloc.start()
    try:
        with pytest.raises(simulate.SimulationInputError, match=f"samples.txt: line {line}: ") as e:
            simulate.load_samples(samples)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak  # the file is 64 MB
    said = str(e.value).split("samples.txt: ", 1)[1]
    assert "\n" not in said and len(said) < 250, said


@pytest.mark.unit
def test_7_a_samples_file_read_as_a_stream_gives_what_it_gave(tmp_path):
    from jitterbench import simulate
    samples = tmp_path / "samples.txt"
    samples.write_text("# exchange times\n" + "\n".join(f"{10 + i % 7}" for i in range(300_000)) + "\n\n 3.5 \n4")
    got = simulate.load_samples(samples)
    assert got.size == 300_002 and got[0] == 10 and got[-2:].tolist() == [3.5, 4.0]
    samples.write_text("1\n2\nnan\n")
    with pytest.raises(simulate.SimulationInputError, match="line 3: 'nan' is not a finite time"):
        simulate.load_samples(samples)


# ---- 4 and 10: every JB_* variable, one table, every entry point ----------------------------------

def load_configuration(env, cwd=REPO, user=()):
    """systems/config.py, loaded as ReFrame loads it (without running ReFrame)."""
    full = {**{k: v for k, v in os.environ.items() if not k.startswith("JB_")}, **env}
    return subprocess.run([*user, sys.executable, "-c", f"import runpy; runpy.run_path({str(REPO / 'systems' / 'config.py')!r})"],
                          cwd=cwd, env=full, capture_output=True, text=True, timeout=GUARD_S)


@pytest.mark.unit
@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:99999/", "http://h:99999/", "http://h:x/", "http:///jb"])
def test_4_a_url_that_reframe_cannot_parse_is_refused(url):
    with pytest.raises(settings.SettingError, match="JB_RESULTS_URL="):
        settings.check(environ={"JB_RESULTS_URL": url})
    settings.check(environ={"JB_RESULTS_URL": "http://[::1]:9200/jb/_doc"})


@pytest.mark.process
@pytest.mark.parametrize("name,value", [("JB_SYSTEM", "x;touch P"), ("JB_MODE", "papers;x"), ("JB_ACCOUNT", "a b"),
                                        ("JB_PARTITION", "$(touch P)"), ("JB_MODULES", "m;touch P"),
                                        ("JB_RFM_OPTIONS", "-n x\ntouch P"), ("JB_SPACK_SYSTEM", "../x"),
                                        ("JB_RESULTS_DB", "a b"), ("JB_MPICH_ROOT", "$(touch P)"),
                                        ("JB_INTEL_MPI_ROOT", "`touch P`"), ("JB_VCLUSTER_DIR", "a;b"),
                                        ("JB_MPIRUN", "mpirun;touch P"), ("JB_RESULTS_URL", "http://[::1")])
def test_10_the_pipeline_s_variables_stop_reframe_s_configuration_and_the_command(tmp_path, name, value):
    proc = load_configuration({name: value, "JB_OUTPUT": str(tmp_path / "out")})
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"jitterbench: {name}=")
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()
    ran = subprocess.run([*JITTERBENCH, "table", "--help"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, name: value}, timeout=GUARD_S)
    one_line(ran, f"{name}=")


@pytest.mark.unit
def test_10_a_launcher_command_as_the_environments_set_it_passes():
    settings.check(environ={"JB_MPIRUN": "/usr/bin/mpirun.openmpi --quiet", "JB_SYSTEM": "local", "JB_MODE": "quick"})


# ---- 5: a relative JB_OUTPUT ------------------------------------------------------------------

@pytest.mark.process
@pytest.mark.parametrize("value", ["nan", "0", "-1"])
def test_5_a_relative_output_that_cannot_be_made_is_named_with_where_it_resolved(scratch, value):
    locked = scratch / "locked"
    locked.mkdir(mode=0o555)
    if os.geteuid() == 0:
        os.chown(locked, fz.NOBODY, fz.NOBODY)
    proc = load_configuration({"JB_OUTPUT": value, "HOME": str(scratch)}, cwd=locked, user=as_nobody())
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"jitterbench: JB_OUTPUT={value!r}") and str(locked / value) in proc.stderr
    assert not (locked / value).exists()


# ---- 9: history --session-extras of a mode that does not exist ---------------------------------

@pytest.mark.unit
def test_9_session_extras_of_an_unknown_mode_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proc = command("history", "--session-extras", "bogus")
    one_line(proc, "bogus", "quick", "acceptance")
    assert proc.stdout == ""


# ---- the nits ---------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
                                  "\u2069", "\u200e", "\u200f", "\u061c"])
def test_a_bidirectional_control_in_a_value_is_escaped_in_the_one_line(char):
    from jitterbench.console import one_line as line
    said = line(f"unknown scheduler 'evil{char}txt.exe'")
    assert char not in said and f"\\u{ord(char):04x}" in said


@pytest.mark.unit
def test_an_unknown_option_is_said_to_be_unknown_before_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proc = command("site", "new", "-rf")
    one_line(proc, "-rf")
    assert "unrecognized arguments: -rf" in proc.stderr and "required" not in proc.stderr
    # a missing argument alone is still said as such
    proc = command("site", "new")
    one_line(proc, "required: NAME")
