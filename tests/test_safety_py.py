"""Nothing lost, nothing crashes (issue 16, the Python side): the outputs never destroy what
the tool did not make and appear whole or not at all, even on Ctrl-C; every bad input is one
line naming the file (and the field), exit status 2, and leaves nothing behind.

Every destructive case runs inside pytest's tmp_path, on folders and files planted there."""
from __future__ import annotations

import json
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import halo_document, until_the_command_handles_signals
from jitterbench import cli, files, report_figures


REPORT_FILES = {"index.html", "environment.html", "figures", files.MARKER}


def run_report(report):
    """A ReFrame run report, as `jitterbench reference` reads it."""
    case = {"display_name": "HaloCheck %nodes=1", "nodes": 1, "system": "local", "partition": "default",
            "environ": "openmpi", "result": "pass", "fixture": False,
            "perfvalues": {"local:default:max": [10.0, 0, None, None, "us", "pass"]}}
    return {"session_info": {"version": "4.10.4", "time_start_unix": 1795323075}, "runs": [{"testcases": [case]}],
            **report}


def run_reports(folder):
    """Five runs of their own (distinct sessions): the fewest `jitterbench reference` makes a file of."""
    paths = [folder / f"report{i}.json" for i in range(5)]
    for i, path in enumerate(paths):
        path.write_text(json.dumps(run_report({"session_info": {"version": "4.10.4", "time_start_unix": 1795323075,
                                                                "uuid": f"run{i}"}})))
    return [str(p) for p in paths]


def write_halo_json(folder):
    """A jb-halo document whose report draws one figure: these tests are of the files the commands
    write and keep, not of what the figures show (its per-call series and histogram, which draw two
    more in a second, left out)."""
    doc = halo_document()
    for drawn in ("series", "histogram"):
        del doc["results"][0][drawn]
    path = folder / "halo.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def halo_json(tmp_path):
    return write_halo_json(tmp_path)


def one_error_line(capsys, *needles):
    """The command's only line on standard error, which holds every needle."""
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("jitterbench: error: "), captured.err
    assert "Traceback" not in captured.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def command_line(command, path, tmp_path):
    """command on path, with the outputs it needs (into tmp_path, where they must not appear)."""
    outputs = {"report": ["-o", str(tmp_path / "out")], "compare": ["-o", str(tmp_path / "out")],
               "reference": ["--system", "local", "-o", str(tmp_path / "ref.yaml")]}
    return [*command.split(), str(path), *outputs.get(command, [])]


def tree(folder):
    """Every path under folder with the contents of its files: what a refusal must not change."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


# ---- report and compare -o: only an earlier report is replaced ---------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("command", ["report", "compare"])
def test_o_onto_a_folder_of_the_users_refuses_and_touches_nothing(tmp_path, capsys, halo_json, command):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious")
    before = tree(tmp_path)
    assert cli.main([command, str(halo_json), "-o", str(mine)]) == 2
    one_error_line(capsys, str(mine), "not a jitterbench report", "not replaced")
    assert tree(tmp_path) == before


@pytest.mark.unit
def test_o_onto_an_earlier_report_holding_a_file_of_the_users_refuses(tmp_path, capsys, halo_json):
    out = tmp_path / "out"
    assert cli.main(["report", str(halo_json), "-o", str(out)]) == 0
    (out / "figures" / "my-notes.txt").write_text("added by hand")
    capsys.readouterr()
    before = tree(tmp_path)
    assert cli.main(["compare", str(halo_json), "-o", str(out)]) == 2
    one_error_line(capsys, "figures/my-notes.txt", "jitterbench did not write")
    assert tree(tmp_path) == before


@pytest.mark.unit
@pytest.mark.parametrize("command", ["report", "compare"])
def test_o_onto_an_existing_file_refuses(tmp_path, capsys, halo_json, command):
    target = tmp_path / "results.txt"
    target.write_text("mine")
    assert cli.main([command, str(halo_json), "-o", str(target)]) == 2
    one_error_line(capsys, "exists and is not a folder")
    assert target.read_text() == "mine" and sorted(os.listdir(tmp_path)) == ["halo.json", "results.txt"]


@pytest.mark.unit
def test_o_onto_an_earlier_report_replaces_it_whole(tmp_path, capsys, halo_json):
    out = tmp_path / "out"
    assert cli.main(["report", str(halo_json), "-o", str(out), "--title", "first"]) == 0
    # a file an older version wrote (listed in its marker with its checksum) goes with the old report
    (out / "figures" / "retired.png").write_bytes(b"old")
    with open(out / files.MARKER, "a") as marker:
        marker.write(f"{files.checksum(out / 'figures' / 'retired.png')} figures/retired.png\n")
    assert cli.main(["report", str(halo_json), "-o", str(out), "--title", "second"]) == 0
    html = (out / "index.html").read_text()
    assert "second" in html and "first" not in html
    assert not (out / "figures" / "retired.png").exists()
    assert set(os.listdir(out)) == REPORT_FILES
    assert (out / files.MARKER).read_text().startswith("jitterbench ")
    assert sorted(os.listdir(tmp_path)) == ["halo.json", "out"]  # no temporary folder left beside it


@pytest.mark.unit
def test_a_folder_the_tool_made_empty_is_its_own_and_replaced_again(tmp_path, capsys):
    """A report with no figures (an EagerCheck run) leaves figures/ empty: the marker lists it, so
    the same command run again (the main job's second run) replaces the report."""
    def fill(folder):
        (folder / "figures").mkdir()
        (folder / "index.html").write_text("x")
    out = tmp_path / "out"
    for _ in range(2):
        files.write_folder(out, fill, "jitterbench test")
    assert (out / files.MARKER).read_text().splitlines() == [
        "jitterbench test", "folder figures", f"sha256:{hashlib.sha256(b'x').hexdigest()} index.html"]


@pytest.mark.unit
@pytest.mark.parametrize("mask,mode", [(0o022, 0o755), (0o027, 0o750)])
def test_the_report_folder_has_the_users_umask(tmp_path, capsys, halo_json, mask, mode):
    old = os.umask(mask)
    try:
        assert cli.main(["report", str(halo_json), "-o", str(tmp_path / "out")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "out").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "out" / "figures").st_mode) == mode


# ---- interrupted: the old output stays, no temporary is left -------------------------------------

@pytest.fixture(scope="module")
def report_drawn_once(tmp_path_factory):
    """A report of halo.json as the tool writes it, drawn once for every test that replaces one."""
    folder = tmp_path_factory.mktemp("drawn")
    out = folder / "out"
    assert cli.main(["report", str(write_halo_json(folder)), "-o", str(out)]) == 0
    return out


@pytest.fixture
def earlier_report(tmp_path, halo_json, report_drawn_once):
    """A report the tool wrote at out, beside halo.json: a copy of the one drawn once, byte for byte
    and mode for mode."""
    out = tmp_path / "out"
    shutil.copytree(report_drawn_once, out)
    return out


@pytest.mark.unit
def test_ctrl_c_while_the_report_is_drawn_keeps_the_old_report(tmp_path, capsys, halo_json, earlier_report,
                                                                 monkeypatch):
    before = tree(tmp_path)

    def interrupted(col, baseline=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_figures, "all_figures", interrupted)
    assert cli.main(["report", str(halo_json), "-o", str(earlier_report)]) == 130
    assert capsys.readouterr().err == "jitterbench: interrupted\n"
    assert tree(tmp_path) == before


@pytest.mark.unit
def test_ctrl_c_between_the_two_renames_puts_the_old_report_back(tmp_path, capsys, halo_json, earlier_report,
                                                                  monkeypatch):
    """Where the system cannot exchange two folders in one step (files.exchange): the old one
    aside, the new one in; stopped in between, the old one goes back."""
    monkeypatch.setattr(files, "exchange", lambda a, b: False)
    before = tree(tmp_path)
    rename, moved_in = os.rename, []

    def interrupted_when_the_new_one_moves_in(src, dst):
        # the old one went aside (onto a temporary name); the first rename onto out is the new one's
        if os.path.realpath(dst) == os.path.realpath(earlier_report) and not moved_in:
            moved_in.append(src)
            raise KeyboardInterrupt
        rename(src, dst)

    monkeypatch.setattr(files.os, "rename", interrupted_when_the_new_one_moves_in)
    assert cli.main(["report", str(halo_json), "-o", str(earlier_report)]) == 130
    assert moved_in and capsys.readouterr().err == "jitterbench: interrupted\n"
    assert tree(tmp_path) == before


@pytest.mark.unit
@pytest.mark.parametrize("step", ["before the exchange", "after it, while the old one is removed"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_at_each_step_of_the_swap_leaves_the_old_or_the_new_report(tmp_path, capsys, halo_json,
                                                                            earlier_report, monkeypatch, step,
                                                                            signum):
    """A real signal to this process at each step of the swap (SIGTERM made Ctrl-C as the command's
    entry point does): the folder holds the old report or the new one, never neither, and no
    temporary folder stays.  While the old one is removed the signal waits (files.signals_held)."""
    # Python's own Ctrl-C handler (a background job starts with SIGINT ignored, and Python keeps that)
    # and SIGTERM as Ctrl-C
    old_handlers = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
                    signal.SIGTERM: signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))}
    before = tree(tmp_path)
    exchange, rmtree, seen = files.exchange, files.shutil.rmtree, []

    def exchange_then(a, b):
        if step == "before the exchange":
            os.kill(os.getpid(), signum)
            time.sleep(0.1)  # the handler runs here: KeyboardInterrupt before the exchange
        done = exchange(a, b)
        seen.append(os.path.exists(earlier_report / "index.html"))
        return done

    def rmtree_signalled(path, *args, **kwargs):
        if step != "before the exchange":
            os.kill(os.getpid(), signum)  # held back: delivered when the removal is done
        seen.append(os.path.exists(earlier_report / "index.html"))
        return rmtree(path, *args, **kwargs)

    monkeypatch.setattr(files, "exchange", exchange_then)
    monkeypatch.setattr(files.shutil, "rmtree", rmtree_signalled)
    try:
        assert cli.main(["report", str(halo_json), "-o", str(earlier_report)]) == 130
    finally:
        for signum_, handler in old_handlers.items():
            signal.signal(signum_, handler)
    assert capsys.readouterr().err == "jitterbench: interrupted\n"
    assert all(seen) and (earlier_report / "index.html").exists()
    if step == "before the exchange":
        assert tree(tmp_path) == before
    else:  # the new report in, the old one gone with its temporary name (.out.*)
        assert tree(tmp_path) != before and not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.unit
@pytest.mark.parametrize("exchanged", [True, False])
def test_a_folder_changed_between_the_check_and_the_swap_is_never_removed(tmp_path, capsys, halo_json,
                                                                          earlier_report, monkeypatch, exchanged):
    """Another process puts a file of its own into the old report after the tool checked it: the
    swap goes on, but the old folder, now not only the tool's, is kept and named, not removed."""
    exchange = files.exchange

    def user_writes_then_exchange(a, b):
        (earlier_report / "mine.txt").write_text("the user's\n")
        return exchange(a, b) if exchanged else False

    monkeypatch.setattr(files, "exchange", user_writes_then_exchange)
    assert cli.main(["report", str(halo_json), "-o", str(earlier_report)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not the tool's to remove: kept as" in err
    kept = Path(err.split("kept as ")[1].strip())
    assert (kept / "mine.txt").read_text() == "the user's\n" and (earlier_report / "index.html").exists()


# how the files the tool writes begin: only such a file is replaced without --force
_OLD_REFERENCE = "# References for system 'local'.\nold: contents\n"
# a file the tool wrote: a reference file ends with the checksum of all above it (issue 61)
OWN = {"ref.yaml": f"{_OLD_REFERENCE}# jitterbench sha256:{hashlib.sha256(_OLD_REFERENCE.encode()).hexdigest()}\n",
       "sim.json": '{\n "written_by": "jitterbench simulate alltoall",\n "old": 1\n}\n'}


def writing(tmp_path, output, *extra):
    samples = tmp_path / "samples.txt"
    samples.write_text("5\n6\n")
    return (["reference", *run_reports(tmp_path), "--system", "local", "-o", str(output), *extra]
            if str(output).endswith(".yaml") else
            ["simulate", "alltoall", str(samples), "--trials", "10", "--json", str(output), *extra])


@pytest.mark.unit
@pytest.mark.parametrize("output", ["ref.yaml", "sim.json"])
def test_a_file_the_tool_did_not_write_is_refused_through_a_link_too_and_force_replaces_it(tmp_path, capsys,
                                                                                            output):
    foreign = tmp_path / "precious.txt"
    foreign.write_text("the user's own\n")
    target, link = tmp_path / output, tmp_path / f"link-{output}"
    target.write_text("the user's own\n")
    link.symlink_to(tmp_path / "own")  # a file of the tool's own, behind a link
    (tmp_path / "own").write_text(OWN[output])
    for path, says in ((target, "exists and is not a file jitterbench wrote"), (link, "is a symbolic link")):
        capsys.readouterr()
        assert cli.main(writing(tmp_path, path)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and "--force" in err
    assert target.read_text() == "the user's own\n" and (tmp_path / "own").read_text() == OWN[output]
    assert cli.main(writing(tmp_path, target, "--force")) == 0
    assert target.read_text() != "the user's own\n"
    assert cli.main(writing(tmp_path, target)) == 0  # now its own: replaced without --force


@pytest.mark.unit
@pytest.mark.parametrize("command", [["reference", "-o", ""], ["simulate", "alltoall", "x", "--json", ""]])
def test_an_empty_output_name_is_refused(tmp_path, capsys, command):
    (tmp_path / "x").write_text("5\n6\n")
    argv = [*command[:1], *run_reports(tmp_path), "--system", "local", *command[1:]] if command[0] == "reference" \
        else [*command[:2], str(tmp_path / "x"), *command[3:]]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("''" in err or "name the reference file" in err)


@pytest.mark.unit
@pytest.mark.parametrize("output", ["ref.yaml", "sim.json"])
def test_ctrl_c_while_a_file_is_written_keeps_the_old_file(tmp_path, capsys, monkeypatch, output):
    target = tmp_path / output
    target.write_text(OWN[output])  # a file of the tool's own, which it may replace
    reports, samples = run_reports(tmp_path), tmp_path / "samples.txt"
    samples.write_text("5\n6\n")
    before = tree(tmp_path)

    def interrupted(src, dst):
        assert os.path.exists(src)  # the temporary file is written whole, and then:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupted)
    argv = (["reference", *reports, "--system", "local", "-o", str(target)] if output == "ref.yaml" else
            ["simulate", "alltoall", str(samples), "--trials", "10", "--json", str(target)])
    assert cli.main(argv) == 130
    assert capsys.readouterr().err == "jitterbench: interrupted\n"
    assert tree(tmp_path) == before


@pytest.mark.unit
def test_a_reference_file_named_by_the_user_is_replaced_whole_and_keeps_its_mode(tmp_path, capsys):
    reports, target = run_reports(tmp_path), tmp_path / "local.yaml"
    target.write_text(OWN["ref.yaml"])
    target.chmod(0o640)
    assert cli.main(["reference", *reports, "--system", "local", "-o", str(target), "--measured-by", "t"]) == 0
    assert target.read_text().startswith("# References for system 'local'")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["local.yaml", *(f"report{i}.json" for i in range(5))]
    # a folder holds the system's file (ci/main.sh's baseline): the same file, replaced the same way
    capsys.readouterr()
    assert cli.main(["reference", *reports, "-o", str(tmp_path), "--measured-by", "t"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {target}: ")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and len(os.listdir(tmp_path)) == 6


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_in_a_real_process_is_one_line_exit_130_and_changes_nothing(tmp_path, signum):
    """Ctrl-C (SIGINT), SIGTERM or SIGHUP while `reference ... -o FILE` loads its modules, a known
    point every time: the file named stays."""
    reports, target = run_reports(tmp_path), tmp_path / "local.yaml"
    target.write_text(OWN["ref.yaml"])
    before = tree(tmp_path)
    # SIG_DFL: a shell's background job starts with SIGINT ignored, and Python then keeps it so
    proc = subprocess.Popen([str(Path(sys.executable).with_name("jitterbench")), "reference", *reports, "--system",
                             "local", "-o", str(target)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    until_the_command_handles_signals(proc)  # then it loads its modules, most of a second
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (130, "", "jitterbench: interrupted\n")
    assert tree(tmp_path) == before


@pytest.mark.unit
def test_a_pipe_or_device_as_input_is_refused_without_waiting_on_it(tmp_path, capsys):
    """A FIFO no one writes would block a read for ever, /dev/zero would fill the memory: both
    are refused before any read, in one line naming them."""
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        for argv in (["table", str(path)], ["reference", str(path), "--system", "local", "-o", str(tmp_path / "r.yaml")],
                     ["summarize", str(path)]):
            assert cli.main(argv) == 2, argv
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and str(path) in err, (argv, err)
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


# ---- bad input: one line naming the file and the field, exit 2 -----------------------------------

BAD_DOCUMENTS = [
    ("max_us 400 digits", '"max_us": ' + "9" * 400, "results[0].max_us: a number of 400 characters is out of range"),
    ("max_us 5000 digits", '"max_us": ' + "9" * 5000, "results[0].max_us: a number of 5000 characters is out of range"),
    ("max_us NaN", '"max_us": NaN', "results[0].max_us: 'NaN' is not a finite number"),
    ("avg_us Infinity", '"avg_us": Infinity', "results[0].avg_us: 'Infinity' is not a finite number"),
    ("avg_us -Infinity", '"avg_us": -Infinity', "results[0].avg_us: '-Infinity' is not a finite number"),
    ("max_us 1e999", '"max_us": 1e999', "results[0].max_us: '1e999' is not a finite number"),
    ("max_us a string", '"max_us": "fast"', "field results[0].max_us is not a number: 'fast'"),
    ("calls 400 digits", '"calls": ' + "9" * 400, "results[0].calls: a number of 400 characters is out of range"),
]


def document_with(field_text):
    """A halo document's text with one result field replaced as written (NaN, 400 digits, ...)."""
    key = field_text.split(":")[0]
    text = json.dumps(halo_document())
    start = text.index(key + ":")
    end = text.index(",", start)
    return text[:start] + field_text + text[end:]


@pytest.mark.unit
@pytest.mark.parametrize("command", ["summarize", "report", "compare", "simulate halo"])
@pytest.mark.parametrize("name,field_text,message", BAD_DOCUMENTS, ids=[b[0] for b in BAD_DOCUMENTS])
def test_a_bad_number_in_a_document_is_one_line_naming_file_and_field(tmp_path, capsys, command, name,
                                                                      field_text, message):
    path = tmp_path / "bad.json"
    path.write_text(document_with(field_text))
    assert cli.main(command_line(command, path, tmp_path)) == 2
    one_error_line(capsys, str(path), message)
    assert sorted(os.listdir(tmp_path)) == ["bad.json"]


@pytest.mark.unit
@pytest.mark.parametrize("command", ["summarize", "table", "report", "reference", "simulate halo",
                                     "simulate alltoall"])
def test_json_nested_100000_deep_is_one_line(tmp_path, capsys, command):
    path = tmp_path / "deep.json"
    path.write_text("{\"results\": " + "[" * 100000)
    assert cli.main(command_line(command, path, tmp_path)) == 2
    one_error_line(capsys, str(path), "nested too deeply")
    assert sorted(os.listdir(tmp_path)) == ["deep.json"]


@pytest.mark.unit
@pytest.mark.parametrize("command", ["table", "report", "reference"])
def test_runs_that_is_not_a_list_is_one_line(tmp_path, capsys, command):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(run_report({"runs": "notalist"})))
    assert cli.main(command_line(command, path, tmp_path)) == 2
    one_error_line(capsys, str(path), "field runs is not a list")
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


@pytest.mark.unit
def test_a_string_performance_value_in_a_run_report_names_its_field(tmp_path, capsys):
    report = run_report({})
    report["runs"][0]["testcases"][0]["perfvalues"]["local:default:max"][0] = "fast"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    assert cli.main(["table", str(path)]) == 2
    one_error_line(capsys, str(path), "runs[0].testcases[0].perfvalues.local:default:max[0] is not a number: 'fast'")


REFERENCE = """provenance: {system: local, source: measured, date: 2026-11-22, method: by hand}
HaloCheck:
  $index: [$partition]
  local:default:
    max: [VALUE, null, 0.5, us]
"""


@pytest.mark.unit
@pytest.mark.parametrize("value,message", [
    (".nan", "'.nan' is not a finite number"),
    (".inf", "'.inf' is not a finite number"),
    ("-.Inf", "'-.Inf' is not a finite number"),
    ("1.0e+999", "'1.0e+999' is not a finite number"),
    ("9" * 400, "a number of 400 characters is out of range"),
    ("9" * 5000, "a number of 5000 characters is out of range"),
])
def test_a_bad_number_in_a_reference_file_is_one_line_naming_file_and_field(tmp_path, capsys, value, message):
    path = tmp_path / "local.yaml"
    path.write_text(REFERENCE.replace("VALUE", value))
    assert cli.main(command_line("report", path, tmp_path)) == 2
    one_error_line(capsys, str(path), f"field HaloCheck.local:default.max[0]: {message}")
    assert sorted(os.listdir(tmp_path)) == ["local.yaml"]


@pytest.mark.unit
def test_a_reference_file_nested_100000_deep_is_one_line(tmp_path, capsys):
    path = tmp_path / "local.yaml"
    path.write_text("[" * 100000)
    assert cli.main(command_line("compare", path, tmp_path)) == 2
    one_error_line(capsys, str(path), "nested too deeply")
    assert sorted(os.listdir(tmp_path)) == ["local.yaml"]


# ---- no passwd entry -------------------------------------------------------------------------

@pytest.mark.unit
def test_a_user_without_a_passwd_entry_is_named_by_uid(tmp_path, capsys, monkeypatch):
    """As in a container under an arbitrary uid: no name in the environment, none in passwd."""
    import pwd

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    reports, target = run_reports(tmp_path), tmp_path / "local.yaml"
    assert cli.main(["reference", *reports, "--system", "local", "-o", str(target)]) == 0
    assert f"measured_by: uid{os.getuid()}@{os.uname().nodename}" in target.read_text()


@pytest.mark.unit
def test_only_reference_asks_who_the_user_is(tmp_path, capsys, monkeypatch, halo_json):
    def nobody():
        raise OSError("no such user")

    monkeypatch.setattr(cli.getpass, "getuser", nobody)
    assert cli.main(["summarize", str(halo_json)]) == 0
    assert "isend-recv" in capsys.readouterr().out


@pytest.mark.unit
def test_compare_refuses_one_run_under_two_labels(tmp_path, capsys):
    """A run set against itself would be compared with its own values, its repeats counted twice."""
    first, second = run_reports(tmp_path)[:2]
    assert cli.main(["compare", f"A={first}", f"B={first}", "-o", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "labels A and B hold the same run" in err and not (tmp_path / "cmp").exists()
    assert cli.main(["compare", f"A={first}", f"B={second}", "-o", str(tmp_path / "cmp")]) == 0


@pytest.mark.unit
@pytest.mark.parametrize("argv", [["table"], ["bogus"], ["history", "--since"], ["reference", "--min-slack", "1"],
                                  ["simulate", "alltoall"], ["simulate", "profile", "--size", "x"], ["plan", "--bogus"]])
def test_a_refused_command_line_is_one_line_naming_where_the_usage_is(capsys, argv):
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("jitterbench") and "--help)" in err, err
