"""Seeded hostile-input fuzzing of the `jitterbench` command, beside fuzz_benchmarks.py (the
benchmarks' own).

Every case is one command line of a subcommand (its options read from the command's own
argparse parsers, as fuzz_benchmarks.py reads the getopt tables) with inputs, outputs, numbers
and texts drawn from hostile sets, and now and then a JB_* variable (jitterbench/settings.py)
set to a hostile value:

  inputs   valid run reports, a halo document, a reference file and a results store; and a
           FIFO, /dev/zero, a sparse 2 GiB file, truncated, binary, deeply nested and NaN JSON,
           a YAML alias bomb, an empty file, a folder, a missing path, a symlink loop;
  outputs  a new path, a file of the user's (decoy), a symlink to it, its folder, "", ".",
           the home folder, a name holding a newline, "-";
  numbers  0, -1, nan, inf, 1e308, 2^64 + 1, 1e12, hex, digits of other scripts, lists;
  texts    "", a 100,000-character one, a line break, $(touch X), "(", unicode.

Each case runs as an unprivileged user (nobody where the fuzzer is root) in a scratch folder
of its worker's, under a 3 GiB address-space cap.  It fails on:

  - a hang: still running after TIMEOUT_S (its process tree is killed), or death by a signal;
  - a Python traceback anywhere in its output;
  - a non-zero exit other than 1 (a verdict: history, table, reference --check) whose stderr
    is not exactly one line starting 'jitterbench';
  - anything changed that was there before: a file of the scratch folder or the home folder
    altered, removed or replaced; or a file left where no output option pointed (a temporary
    file or folder of a refused write), or an X made by a value.

`site new` writes into the checkout by design: it runs only where the fuzzing user cannot
write there (the fuzzer started as root), so that its refusal is what is fuzzed.

Cases take turns among families (case i is of FAMILIES[i % len(FAMILIES)], 12), so that any session
of 12 cases or more has one of each (issues 44 and 61):

  command        the subcommand lines above;
  site-module    `site new` with hostile hostnames, access options and command lines, written into
                 a scratch sites folder and loaded as ReFrame loads it: no value may run;
  traversal      run reports whose system, partition and environment are ../../X, /tmp/X, a/../../X,
                 into reference and report, -o a folder: nothing written outside it;
  fifo-output    every output option naming a FIFO: refused, never waited on;
  silent-server  ReFrame's httpjson handler, as systems/config.py configures it for JB_RESULTS_URL,
                 posting to a dashboard that accepts and never answers, closes, drips, answers 429
                 or 500: each post ends within its timeout (jitterbench.harness.configuration.RESULTS_TIMEOUT_S), and
                 a dead dashboard costs that once;
  full-stdout    a command line of the first family with standard output on /dev/full: one line;
  read-only      outputs the user made read-only: a reference file, an earlier report, a folder;
  forged-marker  a folder whose .jitterbench-report names the user's file (an earlier version's marker,
                 or checksums of other bytes), a report of the tool's with one file the user's since,
                 a reference file that begins with the header line then the user's notes, or one of
                 the tool's edited by hand: each -o there refused, nothing in it changed;
  signal-import  a writing command line sent SIGTERM, SIGINT or SIGHUP at a random instant of its first
                 0.8 s (its imports, its work): one line 'jitterbench: interrupted' and exit 130, or its
                 own ending, nothing half-written; a death by SIGTERM before Python runs the entry point
                 (no output at all) is the one other ending;
  jb-entry       a JB_* variable set to a hostile value, given to every entry point that reads it (the
                 command, ReFrame's configuration systems/config.py, the pipeline's check): each refuses it
                 in one line naming it, or each takes it;
  simulate-huge  simulate halo and alltoall asked for 10^7 to 10^12 tasks, trials or processors, and fed a
                 64 MB garbage samples file: refused by the budget in one line, or done within its time
                 and the 3 GiB cap;
  c-repeat       a C benchmark (this checkout's Open MPI build) given one of its options twice: one line
                 'jb-NAME: error: option ... given twice', exit 2 (or the line refusing its first value,
                 where that value is wrong for the run itself).

Case i of seed S is the same on every machine (its own Random(f"{S}/{i}")), so
`python tests/support/fuzz_cli.py --seed S --case i` replays one failure.

  python tests/support/fuzz_cli.py --seed 1 --seconds 120
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # the package; conftest, when run as a script

from conftest import halo_document  # noqa: E402  the tests' small jb-halo document
from jitterbench import cli, settings  # noqa: E402

TIMEOUT_S = 60
MEMORY_CAP = 3 << 30
NOBODY = 65534
JITTERBENCH = [sys.executable, "-m", "jitterbench"]
VERDICT_EXIT = {"again", "history", "table", "reference"}  # exit 1: the verdict, not an error

NUMBERS = ["0", "-1", "1", "2", "3.5", "1e308", "-1e308", "nan", "inf", "-inf", "1e12", "100000000",
           "18446744073709551617", "0x10", "1_000", "", " ", "\u0663", "1e-300", "2,4,100000000", "1,0",
           "1:1:1:1", "1e9:0:1:1", "-1:2:3:4", "nan:1:1:1", "0.5", "1,2,3"]
TEXTS = ["", "x", "(", "a\nb", "$(touch X)", "`touch X`", "A" * 100_000, "\u00e9\u4e2d", "--", "-1", "%s%n",
         "2026-13-45", "2026-11-25", "local", "quick", "max_us", "^max_", "openmpi"]
JB_VALUES = ["$(touch X)", "`touch X`", "a; touch X", "a b", "a\ntouch X", "{x}/{environ}", "-1", "nan", ""]
# what would run as code if a generated module held it raw: in a docstring, a literal, a comment
CODE = ['x"""and __import__("os").system("touch X")or"""', "x" + "'" * 3 + "+__import__('os').system('touch X')#",
        'x" + __import__("os").system("touch X") + "', "x\\", "x\\\nimport os; os.system('touch X')",
        "{__import__('os').system('touch X')}", "x\u2028y", "# touch X", "x\rimport os"]
FAMILIES = ("command", "site-module", "traversal", "fifo-output", "silent-server", "full-stdout", "read-only",
            "forged-marker", "signal-import", "jb-entry", "simulate-huge", "c-repeat")
FORGERIES = ("names", "wrong-sum", "swapped", "header", "edited-ref")
SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")
# values of JB_* variables the probe of issue 61 met: URLs ReFrame cannot parse, relative paths, commands
ENTRY_VALUES = [*JB_VALUES, "http://[::1", "http://h:99999/", "http://h:x/", "http:///x", "https://h:9200/jb",
                "x;touch X", "../x", "0", "quick", "papers", "local", "mpirun --quiet", "/tmp"]
HUGE = [["simulate", "halo", "{in}/halo.json", "--tasks", "100000,100000000"],
        ["simulate", "halo", "{in}/halo.json", "--tasks", "10000000"],
        ["simulate", "halo", "{in}/halo.json", "--tasks", "1000000000000"],
        ["simulate", "alltoall", "{in}/samples.txt", "--trials", "1000000000"],
        ["simulate", "alltoall", "{in}/samples.txt", "--procs", "65536", "--trials", "10"],
        ["simulate", "alltoall", "{in}/samples.txt", "--procs", "2,1024", "--trials", "100000"],
        ["simulate", "alltoall", "{in}/garbage.txt"],
        ["simulate", "alltoall", "{in}/garbage.txt", "--trials", "1000000000"]]
TRAVERSALS = ["../../X", "/tmp/X", "a/../../X", "..", ".", "X/", "../mine/notes.txt"]
SERVERS = ("silent", "close", "drip", "429", "500")
FUZZ = [sys.executable, str(Path(__file__).resolve())]  # this file's drivers: --site-module, --post

VALID = ["halo.json", "samples.txt", *(f"report{i}.json" for i in range(5)), "store.db", "local.yaml"]
# options whose value is a file read, or one written
INPUT_OPTIONS = {"--history", "--store", "--interrupt-trace", "--entry", "--from", "-C", "--config"}
OUTPUT_OPTIONS = {"-o", "--output", "--json", "--figure"}


# ---- the command's own parsers -----------------------------------------------------------

def commands() -> dict:
    """{('table',): [actions], ('simulate', 'halo'): [...], ...}: every leaf subcommand."""
    out = {}

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[path] = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
        for sub in subs:
            for name, child in sub.choices.items():
                walk(child, (*path, name))

    walk(cli.parser(), ())
    return out


# ---- the material ----------------------------------------------------------------------

def run_report(i, value=10.0):
    case = {"display_name": "HaloCheck %nodes=1", "nodes": 1, "system": "local", "partition": "default",
            "environ": "openmpi", "result": "pass", "fixture": False, "calls": 100,
            "perfvalues": {"local:default:max_isend-recv_4096": [value, 10.0, None, 0.5, "us", "pass"],
                           "local:default:eager_limit_shm": [4096, 4096, -0.01, 0.01, "B", "pass"]}}
    return {"session_info": {"version": "4.10.4", "uuid": f"run{i}", "hostname": "host",
                             "time_start_unix": 1795323075 + 86400 * i}, "runs": [{"testcases": [case]}]}


def make_inputs(folder: Path) -> dict:
    """The input files, valid and hostile, in folder/in; {name: path}."""
    d = folder / "in"
    d.mkdir()
    f = {}

    def put(name, text, mode="w"):
        p = d / name
        with open(p, mode) as out:
            out.write(text)
        f[name] = str(p)

    put("halo.json", json.dumps(halo_document()))
    put("samples.txt", "\n".join(str(10 + i % 7) for i in range(50)) + "\n")  # exchange times, us
    for i in range(5):
        put(f"report{i}.json", json.dumps(run_report(i, 10.0 + i / 10)))
    with sqlite3.connect(d / "store.db") as db:
        db.execute("CREATE TABLE sessions(uuid TEXT PRIMARY KEY, session_start_unix REAL, session_end_unix REAL, "
                   "json_blob TEXT, report_file TEXT)")
        for i in range(5):
            r = run_report(i)
            db.execute("INSERT INTO sessions VALUES (?, ?, NULL, ?, '')",
                       (f"run{i}", r["session_info"]["time_start_unix"], json.dumps(r)))
    f["store.db"] = str(d / "store.db")
    made = subprocess.run([*JITTERBENCH, "reference", *(f[f"report{i}.json"] for i in range(5)), "-o",
                           str(d / "local.yaml"), "--measured-by", "fuzz"], capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"cannot make a reference file: {made.stderr}")
    f["local.yaml"] = str(d / "local.yaml")
    text = Path(f["report0.json"]).read_text()
    put("truncated.json", text[: len(text) // 2])
    put("binary.bin", os.urandom(4096), "wb")
    put("deep.json", "[" * 200_000 + "]" * 200_000)
    put("nan.json", json.dumps(run_report(7, float("nan"))))
    put("huge-number.json", text.replace("10.0,", "1e999,"))
    put("empty.json", "")
    put("utf16.json", text.encode("utf-16"), "wb")
    # a YAML alias bomb: 9^8 x's once expanded
    put("bomb.yaml", "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + chr(ord(c) - 1)] * 9)}]\n" for c in "bcdefghi"))
    put("list.yaml", "- 1\n- 2\n")
    with open(d / "garbage.txt", "wb") as out:  # simulate-huge: what alltoall must refuse at line 1, streaming
        for _ in range(64):
            out.write(random.Random(len(f)).randbytes(1 << 20))
    f["garbage.txt"] = str(d / "garbage.txt")
    with open(d / "sparse.json", "wb") as out:
        out.truncate(2 << 30)
    f["sparse.json"] = str(d / "sparse.json")
    os.mkfifo(d / "fifo")
    f["fifo"] = str(d / "fifo")
    (d / "folder").mkdir()
    f["folder"] = str(d / "folder")
    os.symlink("loop", d / "loop")
    f["loop"] = str(d / "loop")
    f["missing"] = str(d / "missing.json")
    f["/dev/zero"] = "/dev/zero"
    f["/dev/null"] = "/dev/null"
    for t, where in enumerate(TRAVERSALS):  # five repeats each, system, partition and environment hostile
        for i in range(5):
            r = run_report(i, 10.0 + i / 10)
            case = r["runs"][0]["testcases"][0]
            case.update(system=where, partition=where, environ=where, display_name=f"HaloCheck %x={where}")
            case["perfvalues"] = {f"{where}:{where}:{k.split(':', 2)[2]}": v for k, v in case["perfvalues"].items()}
            put(f"traversal{t}-{i}.json", json.dumps(r))
    return f


def make_outputs(folder: Path) -> dict:
    """Where a case may write: {kind: path}; the decoys are the user's and must stay as they are."""
    home = folder / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's own\n")
    mine = folder / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's notes\n")
    os.symlink(home / ".bashrc", folder / "link-to-bashrc")
    from jitterbench import references  # noqa: PLC0415
    (mine / "marker.txt").write_text(f"the user's, naming what jitterbench writes: {references.HEAD}local'.\n")
    for name in FIFOS.values():
        os.mkfifo(folder / name)
    made = subprocess.run([*JITTERBENCH, "report", str(folder / "in" / "report0.json"), "-o", str(folder / "ro-report")],
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"cannot make a report: {made.stderr}")
    shutil.copy(folder / "in" / "local.yaml", folder / "ro-ref.yaml")
    (folder / "ro-folder").mkdir()
    return {"decoy": str(mine / "notes.txt"), "link": str(folder / "link-to-bashrc"), "folder": str(mine),
            "home": str(home), "dot": ".", "empty": "", "newline": str(folder / "a\nb"), "dash": "-",
            "bashrc": str(home / ".bashrc"), "marker": str(mine / "marker.txt")}


# what make_outputs makes that the read-only family finds read-only (set after the chown to the user)
READ_ONLY = {"ro-report": 0o555, "ro-ref.yaml": 0o444, "ro-folder": 0o555}
FIFOS = {"": "out.fifo", ".svg": "out.fifo.svg", ".json": "out.fifo.json", ".yaml": "out.fifo.yaml"}
# a valid command line of each subcommand that writes, {out} where its output goes: the FIFO,
# read-only and traversal families change only that
WRITERS = [
    ("reference", ["{reports}", "-o", "{out}"], ".yaml"),
    ("report", ["{reports}", "-o", "{out}"], ""),
    ("compare", ["A={in}/report0.json", "B={in}/report1.json", "-o", "{out}"], ""),
    ("simulate", ["alltoall", "{in}/samples.txt", "--trials", "10", "--json", "{out}"], ".json"),
    ("simulate", ["halo", "{in}/samples.txt", "--tasks", "4", "--json", "{out}"], ".json"),
    ("simulate", ["profile", "--compute-us", "10", "--messages", "2", "--size", "8", "--figure", "{out}"], ".svg"),
]


def snapshot(folder: Path) -> dict:
    """Every entry under folder: its kind and content (a FIFO and the sparse file by size only)."""
    out = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            p = Path(root, name)
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[str(p)] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[str(p)] = ("file", st.st_size if st.st_size > 1 << 24 else
                               hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode))
            else:
                out[str(p)] = ("other", stat.S_IFMT(st.st_mode))
    return out


# ---- cases -----------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    index: int
    command: tuple
    argv: list
    env: dict
    outputs: list       # the paths its output options name: what it writes may appear there (or in them)
    family: str = "command"
    program: list = dataclasses.field(default_factory=lambda: list(JITTERBENCH))
    stdout: str = "pipe"  # or "full": /dev/full
    signal: tuple | None = None  # (name, seconds): sent to the command that long after its start


def make_case(seed, index, subcommands, inputs, outputs, folder: Path) -> Case:
    family = FAMILIES[index % len(FAMILIES)]
    if family not in ("command", "full-stdout"):
        return make_family_case(family, random.Random(f"{seed}/{index}"), index, inputs, outputs, folder)
    case = make_command_case(seed, index, subcommands, inputs, outputs, folder)
    if family == "full-stdout":
        case.family, case.stdout = family, "full"
    return case


def make_family_case(family, rng, index, inputs, outputs, folder: Path) -> Case:
    """A case of the families issue 44 added (FAMILIES but the first)."""
    if family == "site-module":
        spec = {"name": rng.choice(["fz", "fz-site", "x" * 41, "Fz", rng.choice(TEXTS)]),
                "hostnames": [rng.choice(CODE + TEXTS[:4]) for _ in range(rng.randint(0, 2))],
                "scheduler": rng.choice(["local", "slurm", "pbs", rng.choice(CODE)]),
                "launcher": rng.choice(["local", "mpirun", "srun", rng.choice(CODE)]),
                "mpis": rng.sample(["openmpi", "mpich", "intelmpi"], rng.randint(1, 3)),
                "network": rng.choice(["tcp", "ib"]),
                "partitions": [f"p{k}:{rng.choice(['1', '2', '128', '99999999999999999999999'])}:2"
                               f"{rng.choice(['', ':' + rng.choice(CODE), ':-A acct'])}" for k in range(rng.randint(1, 2))],
                "command": "jitterbench site new " + rng.choice(CODE)}
        sites = str(folder / "sites")
        return Case(index, ("site-module",), ["--site-module", json.dumps(spec), sites], {}, [sites], family, list(FUZZ))
    if family == "silent-server":
        mode = SERVERS[index // len(FAMILIES) % len(SERVERS)]
        return Case(index, ("silent-server",), ["--post", mode], {}, [], family, list(FUZZ))
    if family in ("forged-marker", "jb-entry", "c-repeat", "simulate-huge"):
        return make_issue_61_case(family, rng, index, folder)
    reports = [inputs[f"report{i}.json"] for i in range(5)]
    command, argv, suffix = rng.choice(WRITERS)
    if family == "signal-import":  # a writer's valid line, a signal at a random instant of its first 0.8 s
        out = str(folder / f"out-{index}{suffix}")
        sig = (rng.choice(SIGNALS), round(rng.uniform(0.05, 0.8), 3))
    elif family == "traversal":
        command, argv, suffix = rng.choice(WRITERS[:2])
        t = rng.randrange(len(TRAVERSALS))
        reports = [inputs[f"traversal{t}-{i}.json"] for i in range(5)]
        # reference: a folder of the user's, its file named by the system; report: a new folder
        out = outputs["folder"] if command == "reference" else str(folder / f"rep-{index}")
    elif family == "fifo-output":
        out = str(folder / FIFOS[suffix])
    else:  # read-only: a file or report of the tool's, or a new one in a folder
        out = str(folder / rng.choice([{"": "ro-report", ".yaml": "ro-ref.yaml"}.get(suffix, f"ro-folder/new{suffix}"),
                                       f"ro-folder/new{suffix}"]))
    full = []
    for a in argv:
        full += reports if a == "{reports}" else [a.format(out=out, **{"in": str(folder / "in")})]
    return Case(index, (command,), [command, *full], {}, [out], family,
                signal=sig if family == "signal-import" else None)


def make_issue_61_case(family, rng, index, folder: Path) -> Case:
    """A case of the families issue 61 added: each but simulate-huge run by a driver of this file
    (--forged, --jb-entry, --c-repeat), as the unprivileged user, in a folder of its own that the
    case names as its output (what it makes there goes with it)."""
    own = str(folder / f"{family}-{index}")
    if family == "forged-marker":
        return Case(index, (family,), ["--forged", rng.choice(FORGERIES), own, str(folder / "in")], {}, [own],
                    family, list(FUZZ))
    if family == "jb-entry":
        name, value = rng.choice(sorted(settings.RULES)), rng.choice(ENTRY_VALUES)
        return Case(index, (family,), ["--jb-entry", name, value, own], {}, [own], family, list(FUZZ))
    if family == "c-repeat":  # an option of its table, given twice, each time a value it takes
        from support import fuzz_benchmarks as fb  # noqa: PLC0415
        benchmark = rng.choice(fb.benchmarks())
        options, valid = fb.read_options(benchmark), {**fb.VALID.get(benchmark, {}), "json": ["{own}/a.json"]}
        option = rng.choice(sorted(o for o in options if o not in ("help", "version") and (not options[o] or o in valid)))
        value = rng.choice(valid[option]).format(own=own) if options[option] else ""
        return Case(index, (family,), ["--c-repeat", benchmark, option, value, own], {}, [own], family, list(FUZZ))
    argv = [a.format(**{"in": str(folder / "in")}) for a in rng.choice(HUGE)]
    return Case(index, tuple(argv[:2]), argv, {}, [], family)


def make_command_case(seed, index, subcommands, inputs, outputs, folder: Path) -> Case:
    rng = random.Random(f"{seed}/{index}")
    command = rng.choice(sorted(subcommands))
    argv, named = list(command), []

    def an_input():  # valid half the time, so that cases reach past the first check
        names = sorted(VALID if rng.random() < 0.5 else inputs)
        return inputs[rng.choice(names)]

    def an_output():
        if rng.random() < 0.5:  # a new name, now and then in a folder that does not exist
            name = f"out-{index}-{rng.randrange(1000)}{rng.choice(['', '.json', '.yaml', '.svg'])}"
            path = str(folder / ("no-folder/" if rng.random() < 0.2 else "") / name)
        else:
            path = outputs[rng.choice(sorted(outputs))]
        named.append(path)
        return path

    for action in subcommands[command]:
        if not action.option_strings:  # a positional: inputs, or a name (site new)
            count = {"+": rng.randint(1, 3), "*": rng.randint(0, 3), None: 1}.get(action.nargs, 1)
            if action.dest == "name":
                argv += [rng.choice(TEXTS) for _ in range(count)]
            elif command[0] in ("reference", "history", "table") and rng.random() < 0.5:
                argv += [inputs[f"report{i}.json"] for i in range(5)]  # the five repeats a reference takes
            else:
                argv += [an_input() for _ in range(count)]
            continue
        writes = bool(set(action.option_strings) & OUTPUT_OPTIONS) or action.dest in ("output", "json", "figure")
        if rng.random() < 0.7:
            if writes and command[0] in ("report", "compare"):  # where they write when not told (--help)
                named += ["report", *(os.path.join(a, "report") for a in argv if os.path.isdir(a))]
            continue
        option = rng.choice(action.option_strings)
        if action.nargs == 0:
            argv += [option] * rng.randint(1, 2)
        elif writes:
            argv += [option, an_output()]
        elif option in INPUT_OPTIONS or action.dest in ("history", "store", "interrupt_trace", "config"):
            argv += [option, an_input()]
        elif action.type is not None and action.type is not str:
            argv += [option, rng.choice(NUMBERS if rng.random() < 0.6 else ["1", "2", "4", "0.01", "100"])]
        else:
            argv += [option, rng.choice(TEXTS)]
    if rng.random() < 0.1:
        argv.append(rng.choice(["--zz", "-Z", "--output"]))  # unknown, or an option lacking its value
    env = {}
    if rng.random() < 0.3:
        every = settings.RULES
        env[rng.choice(sorted(every))] = rng.choice(JB_VALUES)
    return Case(index, command, argv, env, named)


# ---- running and judging ----------------------------------------------------------------

def _capped():
    """The case's own session (its tree killed as one) under the address-space cap."""
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def as_user(uid) -> list:
    """The command prefix that runs a case as uid: util-linux's setpriv (Python's own setuid in a
    preexec function cannot exec this checkout's interpreter, which lives under /root here)."""
    if uid is None:
        return []
    if not shutil.which("setpriv"):
        raise RuntimeError("running as root, the fuzzer runs its cases as nobody with setpriv (util-linux), "
                           "which is not installed")
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def run(case: Case, folder: Path, uid) -> tuple:
    """Runs the case in folder (its scratch), its own files (JB_OUTPUT, Matplotlib's cache) beside it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JB_")}
    # simulate's budget well inside the timeout: a case it admits that still runs out is a failure
    env.update(HOME=str(folder / "home"), JB_OUTPUT=str(folder.parent / "jb-output"), LC_ALL="C.UTF-8",
               JB_SIMULATE_BUDGET_S=str(TIMEOUT_S // 4), PYTHONDONTWRITEBYTECODE="1",
               MPLCONFIGDIR=str(folder.parent / "mpl"))
    env.update(case.env)
    with open("/dev/full", "wb") if case.stdout == "full" else contextlib.nullcontext(subprocess.PIPE) as stdout:
        proc = subprocess.Popen([*as_user(uid), *case.program, *case.argv], cwd=folder, env=env,
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=_capped)
        try:
            if case.signal:  # setpriv execs the command: the pid is the command's
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.communicate(timeout=case.signal[1])
                if proc.poll() is None:
                    proc.send_signal(getattr(signal, case.signal[0]))
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return None, (out or b"").decode(errors="replace"), err.decode(errors="replace")
    return proc.returncode, (out or b"").decode(errors="replace"), err.decode(errors="replace")


def judge(case: Case, folder: Path, code, out: str, err: str, before: dict, after: dict) -> str | None:
    """None where the case passed, else why not."""
    if code is None:
        return f"hang: still running after {TIMEOUT_S} s"
    if case.signal and code == -signal.SIGTERM and (out, err) == ("", ""):
        return None  # SIGTERM before Python ran the entry point's first line: nothing to say, nothing made
    if code < 0:
        return f"killed by signal {-code}"
    if "Traceback (most recent call last)" in out + err:
        return "a traceback: " + err.strip().splitlines()[-1][:200]
    if "Exception ignored" in err:  # what Python prints of an error at exit or in a callback
        return "Exception ignored: " + err.strip()[:200]
    if case.signal and code == 130:
        if err.splitlines() != ["jitterbench: interrupted"]:
            return f"exit 130 without exactly the one line 'jitterbench: interrupted': {err[:300]!r}"
    elif code not in (0, 1, 2) or (code == 1 and case.command[0] not in VERDICT_EXIT):
        return f"exit {code}"
    if code == 2:
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith("jitterbench"):
            return f"exit 2 without exactly one line 'jitterbench...': {err[:300]!r}"
    changed = sorted(p for p in before if after.get(p) != before[p])
    if changed:
        return f"changed what the case did not make: {changed[:3]}"
    # a named path that was not there: the tool's, with all in it and the folders made to hold it;
    # a folder that was: a file directly in it (reference -o DIR writes DIR/<system>.yaml)
    named = [Path(os.path.normpath(folder / p)) for p in case.outputs if p]
    left = sorted(p for p in after if p not in before and not any(
        (Path(p).parent == n) if str(n) in before else (Path(p) == n or n in Path(p).parents or Path(p) in n.parents)
        for n in named))
    if left:
        return f"left what no option named: {left[:3]}"
    return None


def restore(before: dict, after: dict):
    """Removes what the case made, deepest first, so that the next case finds the folder as it was."""
    for p in sorted(set(after) - set(before), key=len, reverse=True):
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.unlink(p)


@dataclasses.dataclass
class Summary:
    cases: int = 0
    outcomes: dict = dataclasses.field(default_factory=dict)   # (command, outcome) -> count
    failures: list = dataclasses.field(default_factory=list)   # (case, why, stderr)
    errors: list = dataclasses.field(default_factory=list)     # a worker's own exception
    families: dict = dataclasses.field(default_factory=dict)   # family -> cases

    def text(self, seed) -> str:
        lines = [f"{self.cases} cases, {len(self.failures)} failures; by family: "
                 + ", ".join(f"{f} {self.families.get(f, 0)}" for f in FAMILIES)]
        by_command = {}
        for (command, outcome), n in sorted(self.outcomes.items()):
            by_command.setdefault(command, []).append(f"{outcome} {n}")
        lines += [f"  {' '.join(c)}: {', '.join(o)}" for c, o in sorted(by_command.items())]
        for case, why, err in self.failures:
            lines.append(f"FAIL case {case.index} (--seed {seed} --case {case.index}): {why}\n"
                         f"    env {case.env} argv {[a[:80] for a in case.argv]}\n    stderr {err[-400:]!r}")
        lines += [f"WORKER ERROR: {e}" for e in self.errors]
        return "\n".join(lines)


def fuzz(seed, seconds, workers=2, only=None, limit=None) -> Summary:
    uid = NOBODY if os.geteuid() == 0 else None
    subcommands = commands()
    if uid is None:
        subcommands.pop(("site", "new"), None)  # it would write into this checkout
    summary, lock = Summary(), threading.Lock()
    next_case = iter([only] if only is not None else range(limit or 10**9))
    deadline = time.monotonic() + seconds

    def worker(k):
        try:
            with tempfile.TemporaryDirectory(prefix=f"fuzz-cli-{k}-") as tmp:
                base = Path(tmp)
                os.chmod(base, 0o755)
                folder = base / "scratch"
                for d in (folder, base / "jb-output", base / "mpl"):
                    d.mkdir()
                inputs, outputs = make_inputs(folder), make_outputs(folder)
                if uid is not None:  # the user's own folder, as the unprivileged user's
                    for root, dirs, names in os.walk(base):
                        for name in [*dirs, *names, ""]:
                            os.lchown(os.path.join(root, name), uid, uid)
                for name, mode in READ_ONLY.items():  # what the user protected (root writes anything)
                    os.chmod(folder / name, mode)
                while time.monotonic() < deadline or only is not None:
                    with lock:
                        index = next(next_case, None)
                    if index is None:
                        return
                    case = make_case(seed, index, subcommands, inputs, outputs, folder)
                    before = snapshot(folder)
                    code, out, err = run(case, folder, uid)
                    after = snapshot(folder)
                    why = judge(case, folder, code, out, err, before, after)
                    if (folder / "X").exists():
                        why = why or "a value ran as a command (X made)"
                    restore(before, after)
                    outcome = "failure" if why else {0: "ok", 1: "verdict", 2: "refused", 130: "interrupted"}.get(
                        code, "died-before-start")
                    with lock:
                        summary.cases += 1
                        summary.families[case.family] = summary.families.get(case.family, 0) + 1
                        key = (case.command, outcome)
                        summary.outcomes[key] = summary.outcomes.get(key, 0) + 1
                        if why:
                            summary.failures.append((case, why, err))
                    if only is not None:
                        return
        except Exception as e:  # noqa: BLE001  the summary says so, and the run fails
            with lock:
                summary.errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(1 if only is not None else workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return summary


# ---- the drivers of two families (run as the unprivileged user, as the commands are) -------

def load_new_site(spec: str, sites: str) -> int:
    """site-module: `site new` of spec (JSON: site.new's arguments) into the folder sites, then its
    module loaded as ReFrame's configuration loads it (jitterbench.harness.systems._load)."""
    from jitterbench import site  # noqa: PLC0415
    from jitterbench.harness import systems  # noqa: PLC0415
    args = json.loads(spec)
    Path(sites).mkdir(exist_ok=True)
    try:
        site.new(**args, sites=sites)
    except site.SiteError as e:
        print("jitterbench: error: " + settings.CONTROL.sub(lambda m: repr(m.group())[1:-1], str(e)), file=sys.stderr)
        return 2
    module = systems._load(Path(sites) / f"{args['name']}.py")
    expected = (args["hostnames"] or ["^never-selected-by-hostname$"], args["command"])
    if (module.SYSTEM["hostnames"], module.COMMAND) != expected:
        print(f"jitterbench-fuzz: the module holds other values than given: {module.SYSTEM['hostnames']!r}",
              file=sys.stderr)
        return 3
    return 0


def post_to_dashboard(mode: str) -> int:
    """silent-server: two records through ReFrame's httpjson handler as systems/config.py makes it
    (jitterbench.harness.configuration.results_handlers), to a server here that accepts and then (mode) never answers,
    closes, drips a byte a second, answers 429 or 500.  Exit 3 where it took longer than a
    handler may: its 1-second probe, then the post's timeout once (a dead dashboard is not asked
    again) and a second's slack."""
    import logging  # noqa: PLC0415
    import socket  # noqa: PLC0415

    from jitterbench.harness import configuration  # noqa: PLC0415
    from reframe.core import logging as rfm_logging  # noqa: PLC0415
    from reframe.core.exceptions import LoggingError  # noqa: PLC0415

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def serve():
        while True:
            conn, _ = server.accept()
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    def answer(conn):
        conn.recv(65536)
        if mode == "close":
            conn.close()
        elif mode == "drip":
            with contextlib.suppress(OSError):  # the handler gave up and closed
                for _ in range(600):
                    conn.send(b"H")
                    time.sleep(1)
        elif mode in ("429", "500"):
            conn.sendall(f"HTTP/1.1 {mode} No\r\nContent-Length: 0\r\n\r\n".encode())
        else:  # silent
            time.sleep(3600)

    threading.Thread(target=serve, daemon=True).start()
    os.environ["JB_RESULTS_URL"] = f"http://127.0.0.1:{server.getsockname()[1]}/jb/_doc"
    (config,) = configuration.results_handlers()

    class SiteConfig:  # the entry's fields; ReFrame's defaults for the rest (schemas/config.json)
        def get(self, key):
            field = key.rsplit("/", 1)[1]
            return config.get(field, {"backoff_intervals": [0.1, 0.2, 0.4], "retry_timeout": 0,
                                      "debug": False}.get(field))

    started = time.monotonic()
    handler = rfm_logging._create_handlers[config["type"]](SiteConfig(), "logging/0/handlers_perflog/0")
    record = logging.LogRecord("perf", logging.INFO, __file__, 1, "a case", None, None)
    for _ in range(2):
        record.check_tags = set()
        try:
            handler.emit(record)
        except LoggingError as e:
            print(f"warning: {e}")
    took = time.monotonic() - started
    print(f"{mode}: {took:.2f} s")
    if took > 1 + configuration.RESULTS_TIMEOUT_S + 1 + (configuration.RESULTS_TIMEOUT_S if mode == "drip" else 0):
        print(f"jitterbench-fuzz: a {mode} dashboard cost {took:.1f} s, over its timeout of "
              f"{configuration.RESULTS_TIMEOUT_S} s", file=sys.stderr)
        return 3
    return 0


# ---- the drivers of issue 61's families --------------------------------------------------------

def _failed(why: str) -> int:
    print(f"jitterbench-fuzz: {why}", file=sys.stderr)
    return 3


def forged(kind: str, own: str, inputs: str) -> int:
    """forged-marker: a forgery of kind in the folder own, then the command that would replace it: it
    must refuse in one line (exit 2) and leave every byte there as it was."""
    from jitterbench import files, references  # noqa: PLC0415
    own, ins = Path(own), Path(inputs)
    own.mkdir()
    reports = [str(ins / f"report{i}.json") for i in range(5)]
    precious = "the user's own work\n"
    if kind in ("names", "wrong-sum"):  # an earlier version's marker, or checksums of other bytes
        target = own / "fake"
        target.mkdir()
        (target / "thesis.tex").write_text(precious)
        named = ["index.html", "thesis.tex"] if kind == "names" else \
            [f"sha256:{hashlib.sha256(precious.encode() + b'x').hexdigest()} thesis.tex"]
        (target / files.MARKER).write_text("\n".join(["jitterbench 0.1.0 report", *named]) + "\n")
        argv = ["compare", f"A={reports[0]}", f"B={reports[1]}", "-o", str(target)]
    elif kind == "swapped":  # a report of the tool's, one of its files the user's since
        target = own / "rep"
        shutil.copytree(ins.parent / "ro-report", target)
        for root, dirs, _ in os.walk(target):
            os.chmod(root, 0o755)
        (target / "index.html").write_text(precious)
        argv = ["report", reports[0], "-o", str(target)]
    elif kind == "header":  # the header line, then the user's notes
        target = own / "x.yaml"
        target.write_text(f"{references.HEAD}x'.\n{precious}")
        argv = ["reference", *reports, "-o", str(target)]
    else:  # edited-ref: a reference file of the tool's, a bound set by hand since
        target = own / "local.yaml"
        target.write_text((ins / "local.yaml").read_text().replace("provenance:", "# mine\nprovenance:", 1))
        argv = ["reference", *reports, "-o", str(target)]
    before = snapshot(own)
    code, err = _in_process(lambda: cli.main(argv))
    lines = err.splitlines()
    if code != 2 or len(lines) != 1 or not lines[0].startswith("jitterbench"):
        return _failed(f"{kind}: {argv[0]} -o over a forgery ended {code}: {err[-300:]!r}")
    if snapshot(own) != before:
        return _failed(f"{kind}: {argv[0]} changed what the forgery held: {err[-300:]!r}")
    return 0


def _in_process(call) -> tuple:
    """(exit status, standard error) of call() run here: the drivers run as the unprivileged user,
    who may not start this checkout's interpreter again (it lives under /root where the fuzzer is
    root), so each entry point is called as its process would call it."""
    import io  # noqa: PLC0415
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = call()
        except SystemExit as e:  # argparse's --help, and ReFrame's configuration's refusal (its message)
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
            code = 0 if e.code is None else (e.code if isinstance(e.code, int) else 1)
        except Exception:  # noqa: BLE001  a traceback is the failure: said as Python would
            import traceback  # noqa: PLC0415
            traceback.print_exc()
            code = 1
    return code or 0, err.getvalue()


def jb_entry(name: str, value: str, own: str) -> int:
    """jb-entry: name=value given to every entry point that reads JB_* variables: the command,
    ReFrame's configuration and the pipeline's check each refuse it in one line naming it, or each
    takes it.  They run in own/here (a relative path resolves inside own)."""
    import runpy  # noqa: PLC0415
    here = Path(own) / "here"
    here.mkdir(parents=True)
    for k in [k for k in os.environ if k.startswith("JB_")]:
        del os.environ[k]
    os.environ.update({"JB_OUTPUT": str(Path(own) / "output"), name: value})
    os.chdir(here)
    entries = {"the command": lambda: cli.main(["table", "--help"]),
               "ReFrame's configuration": lambda: runpy.run_path(str(REPO / "systems" / "config.py")) and 0,
               "the pipeline's check": settings.main}
    verdicts = {}
    for what, call in entries.items():
        code, err = _in_process(call)
        lines = err.splitlines()
        if "Traceback" in err:
            return _failed(f"{what} traced back on {name}={value!r}: {lines[-1][:200]}")
        if code == 0:
            verdicts[what] = "takes it"
        elif len(lines) == 1 and lines[0].startswith("jitterbench") and f"{name}=" in lines[0]:
            verdicts[what] = "refuses it"
        else:
            return _failed(f"{what} ended {code} on {name}={value!r} without one line naming it: {err[-300:]!r}")
    if len(set(verdicts.values())) != 1:
        return _failed(f"the entry points disagree on {name}={value!r}: {verdicts}")
    return 0


def c_repeat(benchmark: str, option: str, value: str, own: str) -> int:
    """c-repeat: jb-<benchmark> of this checkout's Open MPI build given --option twice: one line
    'jb-NAME: error: option '--option' given twice', a non-zero exit, no result, nothing written;
    or, where the first value is wrong for the run itself (--inject-tasks 0,1 on one rank), the
    one line that names that option: the parser stops at the first fault either way."""
    from conftest import run_benchmark  # noqa: PLC0415
    from jitterbench import mpi as mpis  # noqa: PLC0415
    Path(own).mkdir()
    os.chdir(own)
    args = [f"--{option}", *([value] if value else [])] * 2
    run = run_benchmark(mpis.OPENMPI, 1, args, benchmark=benchmark, timeout=TIMEOUT_S // 2)
    lines = run.error_lines(benchmark)
    if run.returncode == 0 or len(lines) != 1 or not (f"option '--{option}' given twice" in lines[0]
                                                      or lines[0].startswith(f"jb-{benchmark}: error: --{option}: ")):
        return _failed(f"jb-{benchmark} {' '.join(args)} ended {run.returncode}: {run.stderr[-300:]!r}")
    if "JB_RESULT" in run.stdout or any(Path(own).iterdir()):
        return _failed(f"jb-{benchmark} {' '.join(args)} refused, but ran or wrote: {sorted(os.listdir(own))}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--site-module"]:
        return load_new_site(*argv[1:3])
    if argv[:1] == ["--post"]:
        return post_to_dashboard(argv[1])
    if argv[:1] == ["--forged"]:
        return forged(*argv[1:4])
    if argv[:1] == ["--jb-entry"]:
        return jb_entry(*argv[1:4])
    if argv[:1] == ["--c-repeat"]:
        return c_repeat(*argv[1:5])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float, default=120, help="new cases start until then")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--case", type=int, help="replay this case of the seed only")
    args = p.parse_args(argv)
    s = fuzz(args.seed, args.seconds, args.workers, args.case)
    print(s.text(args.seed))
    # no case run, or a worker that raised, is a failed fuzzing session too
    return 1 if s.failures or s.errors or s.cases == 0 else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("fuzz_cli: interrupted")
