"""Seeded fuzzing of the benchmarks' command lines, and the ASan+UBSan build it runs against.

Every case is a benchmark's real options (read from its getopt_long table in
src/<name>/main.c and JB_COMMON_LONGOPTS in src/core/jb_options.h) with values that
are valid or hostile (blanks, signs, overflow, inf/nan, suffixes, unicode, long
strings, special files, repeated, unknown and valueless options).  A case fails on:

  - death by a signal, or a hang: still running after KILL_S, when the driver kills
    its whole process tree;
  - any sanitizer report (ASan, UBSan, LSan) on stderr;
  - a non-zero exit whose stderr is not exactly one line 'jb-NAME: error: ...',
    or whose line names an option the command line does not hold (-ZZ);
  - exit 0 with anything on stderr, or without its --json document;
  - a refused run that leaves its --json document or a temporary twin behind.

Every case starts with --calls 2 --warmup 0 (and small defaults where a benchmark's
are slow), so a valid run is short; a benchmark that takes --timeout gets --timeout
WATCHDOG_S after the fuzzed options.  A run stopped by that watchdog is a failure too,
unless it holds a value a memory budget may admit on a big node (1G, 2^31, a 1:1G
range: MAY_RUN_LONG): such a run is counted 'long', as a run over the sanitizer's
RSS cap is counted 'memory-capped'; both are listed, neither fails.

Most cases run as MPI singletons (the binary started without mpirun, which
Open MPI and MPICH support): a start costs ~0.05-0.2 s instead of 0.3-1.2 s.
No launcher noise is allowed: Open MPI's mpirun runs with --quiet.

Case i of seed S is the same on every machine (its own Random(f"{S}/{i}")), so
`python tests/support/fuzz_benchmarks.py --seed S --case i` replays one failure.

  python tests/support/fuzz_benchmarks.py --build-sanitized            # build/asan-openmpi
  python tests/support/fuzz_benchmarks.py --build build/asan-openmpi --seed 1 --seconds 120
"""
from __future__ import annotations

import argparse
import dataclasses
import fcntl
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from jitterbench import checkout  # noqa: E402
from jitterbench import benchmarks as records  # noqa: E402
from jitterbench import mpi as mpis  # noqa: E402

SRC = REPO / "src"

# ---- the sanitizer build -------------------------------------------------------------------

# MPI runs: Open MPI's MPI_Init/MPI_Finalize leave allocations that LeakSanitizer would
# report on every run (none of them ours), so leaks are not checked here (the unit tests,
# which use no MPI, check them: src/CMakeLists.txt).  abort_on_error: a report ends the
# run with SIGABRT, which no exit-code check can miss.  allocator_may_return_null: an
# impossible allocation returns NULL, as the C library's would, so the benchmark's own
# checks are what is tested; max_allocation_size_mb: so does any one allocation over
# 3 GiB.  hard_rss_limit_mb: a valid but huge run (the benchmarks budget half the node's
# memory per task) ends at 3 GiB resident instead of taking the machine; the fuzz
# counts such runs as 'memory-capped', not failures.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1:"
                    "hard_rss_limit_mb=3072:max_allocation_size_mb=3072:disable_coredump=1",
    "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
}
MEMORY_CAP = 3 << 30  # bytes of address space per process for builds without ASan (prlimit)
SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|"
                              r"runtime error:|AddressSanitizer:DEADLYSIGNAL|SUMMARY: \w+Sanitizer")
MEMORY_CAPPED = re.compile(r"hard rss limit exhausted|cannot allocate")


def sanitized_build_dir(mpi=mpis.OPENMPI) -> Path:
    return checkout.builds() / f"asan-{mpi.name}"


def build_sanitized(mpi=mpis.OPENMPI) -> Path:
    """Configures and builds src/ with -DJB_SANITIZE=ON into build/asan-<mpi>; one builder at a time.
    Raises RuntimeError with the compiler's output when the build fails."""
    if not mpi.available():
        raise RuntimeError(f"{mpi.name} is not installed ({mpi.mpicc} or {mpi.mpirun} not on PATH)")
    out = sanitized_build_dir(mpi)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update({k: v for k, v in mpi.env.items() if k != "PATH"})
    mpicc = shutil.which(mpi.mpicc, path=mpi.env.get("PATH", os.environ.get("PATH")))
    steps = [["cmake", "-S", str(SRC), "-B", str(out), "-DJB_SANITIZE=ON", f"-DMPI_C_COMPILER={mpicc}"],
             ["cmake", "--build", str(out), "-j", str(os.cpu_count() or 1)]]
    with open(out.parent / f".asan-{mpi.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for step in steps:
            done = subprocess.run(step, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=900)
            if done.returncode != 0:
                raise RuntimeError(f"{shlex.join(step)} failed:\n{done.stdout[-6000:]}")
    return out


# Open MPI, started quickly: pml ob1, as the default first probes the cm/ofi transports
# (0.25 s per start); singleton_isolated: no orted per singleton; sigkill_timeout 0: a
# failed 2-rank run ends at once (its ranks have met in MPI_Finalize already), not 1 s later
QUICK_START = {"openmpi": {"OMPI_MCA_pml": "ob1", "OMPI_MCA_ess_singleton_isolated": "1",
                           "OMPI_MCA_odls_base_sigkill_timeout": "0"}}


def sanitized_mpi(mpi=mpis.OPENMPI):
    """mpi, launching the binaries of build/asan-<mpi> with the sanitizer settings, for
    conftest's run_benchmark and assert_rejected.  $JB_TIMEOUT: a run that hangs ends
    itself with one line, well before those helpers' own limit."""
    return dataclasses.replace(mpi, name=sanitized_build_dir(mpi).name,
                               env={**mpi.env, **QUICK_START.get(mpi.name, {}), **SANITIZER_ENV, "JB_TIMEOUT": "30"})


def require_sanitized_build(mpi=mpis.OPENMPI) -> Path:
    """For tests: the sanitizer build, built now if need be; skips without the MPI."""
    import pytest
    if not mpi.available():
        pytest.skip(f"{mpi.name} is not installed")
    try:
        return build_sanitized(mpi)
    except RuntimeError as e:
        pytest.fail(str(e))


# ---- running one command -------------------------------------------------------------------

@dataclass
class Result:
    returncode: int | None  # None: killed by the driver
    stdout: str
    stderr: str
    seconds: float


def _descendants(pid: int) -> set:
    """pid's process tree and its session (a launcher's daemons may leave the tree)."""
    parent, session = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        p = int(stat.parent.name)
        parent[p], session[p] = int(fields[1]), int(fields[3])
    found = {p for p, s in session.items() if s == pid} | {pid}
    grew = True
    while grew:
        more = {p for p, pp in parent.items() if pp in found} - found
        grew = bool(more)
        found |= more
    return found


def kill_tree(pid: int):
    for p in _descendants(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def execute(cmd: list, env: dict, timeout: float, cwd=None) -> Result:
    """Runs cmd in a session of its own; past timeout the whole tree is killed."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)  # Open MPI's ranks have process groups of their own: the session finds them
        out, err = proc.communicate()
        code = None
    try:  # a launcher waits for its ranks; anything else left in the group goes
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return Result(code, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - start)


def launch(mpi, np: int, binary: Path, args: list, sanitized: bool, rss_cap: bool = True) -> tuple[list, dict]:
    """Command and environment that run binary on np ranks: a singleton when np is 1.
    Without rss_cap, ASan's RSS watcher (a thread that adds ~0.06 s to every start) is
    left out: the fuzz keeps it for the cases that may allocate much (MAY_RUN_LONG)."""
    cmd, env = mpi.launch(np, [binary, *args])
    if np == 1:
        cmd = [str(binary), *map(str, args)]
    env.update(QUICK_START.get(mpi.name, {}))
    env.update(SANITIZER_ENV)
    if not rss_cap:
        env["ASAN_OPTIONS"] = re.sub(r":hard_rss_limit_mb=\d+", "", env["ASAN_OPTIONS"])
    if not sanitized:  # ASan reserves terabytes of address space: the cap is its hard_rss_limit_mb
        cmd = ["prlimit", f"--as={MEMORY_CAP}", "--", *cmd]
    return cmd, env


def is_sanitized(binary: Path) -> bool:
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


# ---- the options, from the sources ---------------------------------------------------------

OPTION_ENTRY = re.compile(r'\{\s*"([\w-]+)"\s*,\s*(required_argument|no_argument|optional_argument)')


def source_of(build: Path) -> Path:
    """The sources a build folder was configured from (its CMakeCache), else src/."""
    cache = Path(build) / "CMakeCache.txt"
    m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    return Path(m.group(1)) if m else SRC


def benchmarks(src: Path = SRC) -> list:
    return sorted(p.parent.name for p in src.glob("*/main.c"))


def read_options(benchmark: str, src: Path = SRC) -> dict:
    """{name: takes a value} from the benchmark's getopt_long table and the common options."""
    common = re.search(r"#define\s+JB_COMMON_LONGOPTS(.*?)\{\s*NULL", (src / "core" / "jb_options.h").read_text(), re.S)
    table = re.search(r"struct option\s+\w+\[\]\s*=\s*\{(.*?)\};", (src / benchmark / "main.c").read_text(), re.S)
    if not common or not table:
        raise RuntimeError(f"no getopt_long table found for {benchmark} in src/")
    # an entry the core's headers define once for several benchmarks (JB_INJECT_TASKS_LONGOPT)
    shared = dict(re.findall(r"#define\s+(\w+_LONGOPT)\s+(\{[^}]*\})",
                             "\n".join(p.read_text() for p in (src / "core").glob("*.h"))))
    own = re.sub(r"\b\w+_LONGOPT\b", lambda m: shared.get(m.group(0), m.group(0)), table.group(1))
    entries = OPTION_ENTRY.findall(own) + OPTION_ENTRY.findall(common.group(1))
    return {name: kind != "no_argument" for name, kind in entries}


def read_names(benchmark: str, src: Path = SRC) -> dict:
    """{option: its valid names} for the options whose case in the option switch looks a
    value up in a *_names table (jb_parse_name_list, jb_lookup)."""
    text = "\n".join(p.read_text() for p in src.glob("*/*.c"))
    arrays = {m.group(1): re.findall(r'"([^"]+)"', m.group(2))
              for m in re.finditer(r"\b(\w+_names)\[\]\s*=\s*\{([^}]*)\}", text)}
    code = "\n".join((src / f).read_text() for f in (f"{benchmark}/main.c", "core/options.c", "core/jb_options.h"))
    entries = re.findall(r'\{\s*"([\w-]+)"\s*,\s*required_argument\s*,\s*NULL\s*,\s*(\'.\'|\w+)\s*\}', code)
    names = {}
    for option, label in entries:
        case = re.search(rf"case {re.escape(label)}:(.*?)(?:\bcase\b|\bdefault:)", code, re.S)
        table = case and re.search(r"\b(\w+_names)\b", case.group(1))
        if table and table.group(1) in arrays:
            names[option] = arrays[table.group(1)]
    return names


def read_bounds(benchmark: str, src: Path = SRC) -> dict:
    """{option: (lo, hi)} for jb_parse_long(_list) and jb_parse_double calls whose bounds
    are plain numbers (None where they are not)."""
    def number(expr):
        expr = expr.strip()
        m = re.fullmatch(r"(\d+|0x[0-9a-fA-F]+)L?(?:\s*<<\s*(\d+))?", expr)
        if m:
            return int(m.group(1), 0) << int(m.group(2) or 0)
        return float(expr) if re.fullmatch(r"\d+(\.\d*)?(e\d+)?", expr) else None

    text = (src / benchmark / "main.c").read_text() + (src / "core" / "options.c").read_text()
    call = r'"--([\w-]+)",\s*jb_parse_(?:long|long_list|double)\(\s*\w+,\s*([^,]+),\s*([^,]+),'
    return {opt: (number(lo), number(hi)) for opt, lo, hi in re.findall(call, text)}


# ---- values --------------------------------------------------------------------------------

HOSTILE = ["", " ", " 5", "5 ", "\t5", "5\n", "+5", "-1", " -1", "-0", "0", "00", "1.5", "1e3", "0x10", "010",
           "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551615",
           "18446744073709551616", str(2 ** 31), str(2 ** 31 - 1), str(2 ** 32), str(2 ** 63 * 10),
           "65536x65536x65536x65536", "65536x65536x65536", "1048576x1048576", "0x0", "1x", "x1", "xx",
           "1x1x1x1x1x1x1x1x1", "-1x-1", "inf", "-inf", "nan", "1e999", "-1e999", "x", "5x", "1G", "256M", "4G",
           "1K1", "1KK", "1B", "8:", ":8", "8:1", "0:8", "1:1G", "8:18446744073709551615", "1,", ",1", "1,,2", ",",
           "all,all", "%s%s%s%n", "%n", "\\", "'", '"', "é", "５", "٣", "1\u00a0", "\u202e5", "\U0001F600",
           "9" * 400, "1" * 5000 + "K", "a" * 100000, "-ZZ", "--", "-", "=", "--calls"]
INJECT = ["1:inf", "1:nan", "1:-inf", "1:1e999", "nan:1", "inf:1", "-0.5:1", "1.5:1", "1:-1", "1:0", "1:", ":1",
          "1:1:1", "0.5: 5", "0.5:5 ", " 0.5:5", "1e-999:1", "0x1p-1:1", "2:5", "1:1:-1", "1:1:nan", "1:1:1:1",
          "1:1:", "1::1", "1:1:1e999", "0.5:10:" + "9" * 200]
UNKNOWN = ["-ZZ", "-Z", "-x", "--bogus", "--bogus=1", "---calls", "--calls-", "--=", "-é", "--json-", "-hZ", "-?"]
STRAY = ["stray", "", " ", "5", "-", "--", "é"]
# sizes a budget may admit on a big node: such runs may be long, memory-capped or stopped by --timeout
MAY_RUN_LONG = {"1G", "256M", "4G", str(2 ** 31), str(2 ** 31 - 1), str(2 ** 32), "1:1G", "1e3"}
# any valid value but a small one is a long run: the core's --window, and the records' long options
TIMES = {"window"} | {o for d in records.ALL for o in d.long_options}

OUTPUTS = {"json", "samples", "trace"}  # written by the benchmark: only under the case's folder or refused paths
INPUTS = {"topology"}
# a short valid run of each benchmark (its record's small options), and the valid values of
# the options the core parses for several of them; each record adds its own options' values
BASE = {d.benchmark: list(d.small) for d in records.ALL if d.benchmark}
SHARED_VALID = {
    "calls": ["1", "2", "3"], "warmup": ["0", "1"], "seed": ["0", "7"], "tasks-per-node": ["1"],
    "timeout": ["60"], "size": ["8", "1K", "8:64", "848,1016"], "inject": ["0.5:10", "1:1", "1:10:5"],
    "inject-by": ["spin", "sleep"], "inject-tasks": ["0", "0,1"], "window": ["100", "1000"],
}
VALID = {d.benchmark: {**SHARED_VALID, **d.option_values} for d in records.ALL if d.benchmark}


def topology_files(folder: Path) -> dict:
    """Topology files, hostile and one valid for this host, written into folder."""
    host = os.uname().nodename
    texts = {
        "valid": f"dims 2\nwrap yes\n{host} 0\nother-host 1\n",
        "dims-65536x4": f"dims 65536x65536x65536x65536\n{host} 0 0 0 0\n",
        "dims-65536x3": "dims 65536x65536x65536\n",
        "dims-2p31": "dims 2147483648\n", "dims-0": "dims 0\n", "dims-neg": "dims -1\n", "dims-x": "dims 4x\n",
        "dims-many": "dims 1x1x1x1x1x1x1x1x1x1\n", "dims-twice": "dims 2\ndims 2\n",
        "wrap-extra": "dims 4\nwrap yes yes\n", "coord-big": f"dims 4\n{host} 99999999999999999999\n",
        "coord-neg": f"dims 4\n{host} -1\n", "coord-out": f"dims 4\n{host} 4\n",
        "coord-blank": f"dims 4\n{host}  \t1 \n", "coord-nan": f"dims 4\n{host} nan\n",
        "host-twice": f"dims 4\n{host} 0\n{host} 1\n", "long-line": "dims 4\n" + "h" * 200000 + " 0\n",
        "nul": f"dims 2\n\0{host} 0\n", "crlf": f"dims 2\r\nwrap yes\r\n{host} 0\r\nother 1\r\n",
        "no-newline": f"dims 2\n{host} 0", "empty": "", "comments": "# nothing\n#\n",
        "fields": "dims 4\nh 1 2 3 4 5 6 7 8 9 10 11 12\n", "unicode": "dims 2\nhôte\u202e 0\n",
        "format": "dims 4\n%s%n%s 0\n",
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"topo-{name}.txt"
        paths[name].write_text(text)
    return paths


@dataclass
class Fixtures:
    """Files and folders the cases name; one set per fuzzing session."""
    root: Path

    def __post_init__(self):
        self.folder = self.root / "a-folder"
        self.folder.mkdir()
        self.fifo = self.root / "a-fifo"
        os.mkfifo(self.fifo)
        self.topologies = topology_files(self.root)

    def input_paths(self):
        return [str(self.fifo), str(self.folder), "/dev/zero", "/dev/null", "/proc/version", "/proc/self/mem",
                str(self.root / "missing.txt"), str(self.root / "no-folder" / "x.txt"), "", "-",
                *map(str, self.topologies.values())]

    def output_paths(self):
        # never a device: --json writes a twin and renames it over the path
        return ["", str(self.folder), str(self.folder) + "/", "/proc/version", str(self.root / "no-folder" / "x"),
                "{CASE}/", ".", "..", "{CASE}/" + "n" * 300, "{CASE}/ok.json"]


# ---- cases ---------------------------------------------------------------------------------

def last_value(args: list, option: str, options: dict):
    """The value getopt_long ends up with for --option (exact or an unambiguous prefix,
    '--opt v' or '--opt=v'), or None."""
    value, i = None, 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            break
        if not a.startswith("--"):
            continue
        name, eq, v = a[2:].partition("=")
        full = [o for o in options if o == name] or [o for o in options if name and o.startswith(name)]
        if len(full) != 1 or not options[full[0]]:
            continue
        if not eq:
            if i == len(args):
                break
            v, i = args[i], i + 1
        if full[0] == option:
            value = v
    return value


@dataclass
class Case:
    index: int
    benchmark: str
    np: int
    args: list          # may hold {CASE}: the case's own folder
    may_run_long: bool  # a value a memory budget may admit
    json_path: str | None = None  # our --json document, if the last --json is ours

    def key(self):
        return (self.benchmark, self.np, tuple(self.args))

    def argv(self, folder: Path) -> list:
        return [a.replace("{CASE}", str(folder)) for a in self.args]


@dataclass
class Fuzzer:
    seed: int
    fixtures: Fixtures
    watchdog: dict  # benchmark -> whether it takes --timeout
    names: list
    src: Path = SRC

    def __post_init__(self):
        self.options = {b: read_options(b, self.src) for b in self.names}
        self.name_lists = {b: read_names(b, self.src) for b in self.names}
        self.bounds = {b: read_bounds(b, self.src) for b in self.names}

    def value(self, rnd: random.Random, benchmark: str, option: str) -> tuple[str, bool]:
        """A value for option: (text, is it hostile)."""
        if option in OUTPUTS:
            return rnd.choice(self.fixtures.output_paths()), True
        if option in INPUTS:
            return rnd.choice(self.fixtures.input_paths()), True
        valid = list(VALID.get(benchmark, SHARED_VALID).get(option, ["1"]))
        names = self.name_lists[benchmark].get(option)
        if names:
            valid += names + ["all", ",".join(rnd.sample(names, min(2, len(names))))]
        if rnd.random() < 0.4:
            return rnd.choice(valid), False
        special = []
        lo, hi = self.bounds[benchmark].get(option, (None, None))
        if lo is not None:
            special += [str(lo - 1), f" {lo}", f"{lo} "]
        if hi is not None:
            special += [str(hi + 1), str(hi * 2)]
        if option == "inject":
            special += INJECT * 3
        if names:
            special += [names[0].upper(), names[0] + ",", names[0][:-1], names[0] + " "]
        return rnd.choice(HOSTILE + special * 2), True

    def case(self, index: int) -> Case:
        rnd = random.Random(f"{self.seed}/{index}")
        benchmark = rnd.choice(self.names)
        options = self.options[benchmark]
        # 2 ranks through mpirun cost 3-5 singletons: kept for what 1 rank cannot reach
        two = 0.3 if benchmark in ("pingpong", "eager", "contention") else 0.05
        np = 2 if rnd.random() < two else 1
        args = ["--calls", "2", "--warmup", "0", *BASE.get(benchmark, [])]
        long_run = False
        for _ in range(rnd.choice((1, 1, 2, 2, 3, 4))):
            r = rnd.random()
            if r < 0.08:
                args.append(rnd.choice(UNKNOWN))
                continue
            if r < 0.11:
                args.append(rnd.choice(STRAY))
                continue
            if r < 0.13:
                args.append(rnd.choice(["--help", "-h", "--version", "--hel", "--vers"]))
                continue
            option = rnd.choice(sorted(options))
            spelled = f"--{option}"
            if rnd.random() < 0.06 and len(option) > 3:  # getopt_long takes unambiguous prefixes
                spelled = spelled[:-1]
            if not options[option]:
                args.append(spelled if rnd.random() < 0.85 else f"{spelled}={rnd.choice(['', '1', 'x'])}")
                continue
            text, hostile = self.value(rnd, benchmark, option)
            long_run |= hostile and (text in MAY_RUN_LONG or option in TIMES)
            if rnd.random() < 0.15:
                args.append(f"{spelled}={text}")
            else:
                args += [spelled, text]
            if rnd.random() < 0.07:  # the same option again
                args += [spelled, rnd.choice(VALID.get(benchmark, SHARED_VALID).get(option, ["1"]))]
        if self.watchdog.get(benchmark):
            args += ["--timeout", str(WATCHDOG_S)]
        if rnd.random() < 0.08:  # an option that needs a value, last and without one
            args.append("--" + rnd.choice([o for o, v in sorted(options.items()) if v]))
        json_path = last_value(args, "json", options)
        return Case(index, benchmark, np, args, long_run, json_path if json_path == "{CASE}/ok.json" else None)


# ---- judging -------------------------------------------------------------------------------

WATCHDOG_S = 10   # --timeout given to benchmarks that take it
KILL_S = 25       # a run still there after this is killed: a hang


def first_frame(stderr: str) -> str:
    """The first stack frame in our sources, or the report's first line."""
    for line in stderr.splitlines():
        m = re.search(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S*/src/\S+)", line)
        if m:
            return f"{m.group(1)} {m.group(2).split('/src/', 1)[1]}"
    for line in stderr.splitlines():
        if SANITIZER_REPORT.search(line):
            return line.strip()[:200]
    return ""


def report_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if SANITIZER_REPORT.search(line):
            return line.strip()[:240]
    return ""


def judge(case: Case, argv: list, options: dict, res: Result, folder: Path, watchdog: bool) -> tuple[str, str]:
    """(outcome, problem): outcome is ok, no-results (--help, --version), refused, memory-capped,
    long (a value a budget may admit ran into --timeout or the kill) or failure."""
    err_lines = [l for l in res.stderr.splitlines() if l.strip()]
    name = f"jb-{case.benchmark}"
    if SANITIZER_REPORT.search(res.stderr):
        if "hard rss limit exhausted" in res.stderr and case.may_run_long:
            return "memory-capped", ""
        return "failure", f"sanitizer: {report_line(res.stderr)} at {first_frame(res.stderr)}"
    if res.returncode is None:
        if case.may_run_long and not watchdog:
            return "long", ""
        return "failure", f"hang: killed after {res.seconds:.0f} s" + (" (--timeout did not end it)" if watchdog else "")
    if res.returncode < 0 or res.returncode >= 128:
        sig = -res.returncode if res.returncode < 0 else res.returncode - 128
        return "failure", f"killed by signal {sig} ({signal.Signals(sig).name if sig in signal.valid_signals() else '?'})" \
                          f"; stderr: {err_lines[:3]}"
    leftovers = sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)
    if res.returncode == 0:
        if err_lines:
            return "failure", f"exit 0 with stderr: {err_lines[:3]}"
        if leftovers:
            return "failure", f"exit 0 left temporary files {leftovers}"
        if case.json_path and "JB_RESULT" in res.stdout:
            doc = Path(case.json_path.replace("{CASE}", str(folder)))
            try:
                json.loads(doc.read_text())
            except (OSError, ValueError) as e:
                return "failure", f"exit 0 without a readable --json document: {e}"
        return ("ok" if "JB_RESULT" in res.stdout else "no-results"), ""
    form = re.compile(rf"{re.escape(name)}: error: \S.*")
    if len(err_lines) != 1 or not form.fullmatch(err_lines[0]):
        if MEMORY_CAPPED.search(res.stderr) and case.may_run_long and err_lines and form.fullmatch(err_lines[0]):
            return "memory-capped", ""
        return "failure", f"exit {res.returncode}, stderr is not one '{name}: error:' line: {err_lines[:4]}"
    line = err_lines[0]
    if f"--timeout {WATCHDOG_S} s passed" in line:
        return ("long", "") if case.may_run_long else ("failure", f"stopped by its --timeout: {line}")
    named = re.search(r"(unknown option|option) '([^']*)'", line)
    if named:  # the option at fault as written (a long one may lose its "=value"), not a good option
        kind, word = named.groups()
        written = word in argv or any(a.startswith("--") and a.split("=", 1)[0] == word for a in argv)
        good = word.startswith("--") and word[2:] in options
        if not written or not word.startswith("-") or (kind == "unknown option" and good):
            return "failure", f"the error names '{word}', not the option at fault: {line}"
    if case.json_path and (folder / "ok.json").exists():
        return "failure", f"refused, but the --json document was written: {line}"
    if leftovers:
        return "failure", f"refused, but left temporary files {leftovers}: {line}"
    return "refused", ""


# ---- a session -----------------------------------------------------------------------------

@dataclass
class Failure:
    case: Case
    problem: str
    command: str

    def signature(self):
        """Failures alike: short quoted words (options) kept, values and numbers not."""
        return re.sub(r"'[^']{13,}'|'[^']*\d[^']*'|\d+", "#", self.problem)[:160]


@dataclass
class Summary:
    seed: int
    build: Path
    executions: int = 0
    distinct: set = field(default_factory=set)
    outcomes: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    seconds: float = 0.0
    watchdog: dict = field(default_factory=dict)
    busy: dict = field(default_factory=dict)  # (ranks, outcome) -> [runs, seconds]
    long: list = field(default_factory=list)  # (case, outcome, command) of the long and memory-capped
    errors: list = field(default_factory=list)  # what a worker raised: the session fails

    def text(self, most=3) -> str:
        lines = [f"fuzz: seed {self.seed}, build {self.build}: {self.executions} executions, "
                 f"{len(self.distinct)} distinct cases in {self.seconds:.0f} s",
                 "  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
                 "  time: " + ", ".join(f"{o} on {np} rank(s) {n} x {t / n:.2f} s"
                                        for (np, o), (n, t) in sorted(self.busy.items())),
                 "  --timeout: " + (", ".join(b for b, w in sorted(self.watchdog.items()) if w) or "none"),
                 f"  failures: {len(self.failures)}"
                 + (f" (replay one: python tests/support/fuzz_benchmarks.py --build {self.build} --seed {self.seed} --case N)"
                    if self.failures else "")]
        groups = {}
        for f in self.failures:
            groups.setdefault(f.signature(), []).append(f)
        for case, outcome, command in sorted(self.long, key=lambda l: l[0].index)[:most]:
            lines.append(f"  ({outcome}, not a failure) case {case.index}: {command}")
        for sig, fs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            fs = sorted(fs, key=lambda f: len(f.command))  # the shortest reproduce it best
            benches = sorted({f.case.benchmark for f in fs})
            lines.append(f"  - {len(fs)} x ({', '.join(benches)}): {fs[0].problem}")
            for f in fs[:most]:
                lines.append(f"      case {f.case.index}: {f.command}")
        lines += [f"  WORKER ERROR: {e}" for e in self.errors]
        return "\n".join(lines)


def probe_watchdog(mpi, build: Path, names: list, sanitized: bool) -> dict:
    """Which benchmarks take --timeout (the C side adds it)."""
    found = {}
    for b in names:
        cmd, env = launch(mpi, 1, build / f"jb-{b}", ["--timeout", "30", "--version"], sanitized)
        found[b] = execute(cmd, env, 60).returncode == 0
    return found


def fuzz(build: Path, seed: int, executions: int, seconds: float, workers: int = 2, mpi=mpis.OPENMPI,
         cases: list | None = None, tmp: Path | None = None, log=None) -> Summary:
    """Runs cases 0..executions-1 of seed (or just the given case numbers) until seconds have
    passed; returns the summary.  Files go under tmp (a temporary folder if None)."""
    if tmp is None:
        with tempfile.TemporaryDirectory(prefix="jb-fuzz-") as t:
            return fuzz(build, seed, executions, seconds, workers, mpi, cases, Path(t), log)
    build, tmp = Path(build).resolve(), Path(tmp)  # resolved: each case runs in a folder of its own
    src = source_of(build)
    names = [b for b in benchmarks(src) if (build / f"jb-{b}").exists()]
    if not names:
        raise RuntimeError(f"no jb-* binaries in {build}")
    sanitized = is_sanitized(build / f"jb-{names[0]}")
    summary = Summary(seed, build)
    fixtures = Fixtures(tmp)
    summary.watchdog = probe_watchdog(mpi, build, names, sanitized)
    fuzzer = Fuzzer(seed, fixtures, summary.watchdog, names, src)
    numbers = iter(cases if cases is not None else range(executions))
    lock = threading.Lock()
    start = time.monotonic()

    def worker(w):
        try:
            cases_of(w)
        except Exception as e:  # noqa: BLE001  the summary says so, and the session fails
            with lock:
                summary.errors.append(f"{type(e).__name__}: {e}")

    def cases_of(w):
        # the MPI's session files: a folder per worker, as concurrent singletons would share one
        session = tmp / f"w{w}"
        session.mkdir()
        while True:
            with lock:
                i = next(numbers, None)
            if i is None or time.monotonic() - start > seconds:
                return
            case = fuzzer.case(i)
            folder = tmp / f"c{i}"
            folder.mkdir()
            argv = case.argv(folder)
            binary = build / f"jb-{case.benchmark}"
            cmd, env = launch(mpi, case.np, binary, argv, sanitized, rss_cap=case.may_run_long)
            env["TMPDIR"] = str(session)
            res = execute(cmd, env, KILL_S, cwd=folder)
            outcome, problem = judge(case, argv, fuzzer.options[case.benchmark], res, folder,
                                     summary.watchdog.get(case.benchmark, False))
            shutil.rmtree(folder, ignore_errors=True)
            with lock:
                summary.executions += 1
                summary.distinct.add(case.key())
                summary.outcomes[outcome] = summary.outcomes.get(outcome, 0) + 1
                busy = summary.busy.setdefault((case.np, outcome), [0, 0.0])
                busy[0] += 1
                busy[1] += res.seconds
                shown = shlex.join(cmd[cmd.index(str(binary)) if case.np == 1 else cmd.index(mpi.mpirun):])
                if problem:
                    summary.failures.append(Failure(case, problem, shown))
                elif outcome in ("long", "memory-capped"):
                    summary.long.append((case, outcome, shown))
                if log and (problem or outcome in ("long", "memory-capped")):
                    log(f"case {i}: {outcome}: {problem or shlex.join(argv)}")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    summary.seconds = time.monotonic() - start
    return summary


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", type=Path, help="folder of the jb-* binaries [build/openmpi]")
    p.add_argument("--mpi", default="openmpi", help="the MPI they were built with [openmpi]")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--executions", type=int, default=3000, help="cases to run at most [3000]")
    p.add_argument("--seconds", type=float, default=120, help="stop starting cases after this [120]")
    p.add_argument("--workers", type=int, default=2, help="cases run at once [2]")
    p.add_argument("--case", type=int, action="append", help="run only this case number (repeatable)")
    p.add_argument("--build-sanitized", action="store_true",
                   help="only build src/ with ASan+UBSan into build/asan-<mpi>, and say where")
    a = p.parse_args(argv)
    mpi = mpis.by_name(a.mpi)
    if a.build_sanitized:
        try:
            print(build_sanitized(mpi))
        except RuntimeError as e:
            print(f"fuzz_benchmarks: error: {e}", file=sys.stderr)
            return 1
        return 0
    s = fuzz(a.build or mpi.build_dir(), a.seed, a.executions, a.seconds, a.workers, mpi, a.case,
             log=lambda m: print(m, flush=True))
    print(s.text())
    # no case run, or a worker that raised, is a failed session too
    return 1 if s.failures or s.errors or s.executions == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
