"""`jitterbench plan`: what a mode will run on a system, and what it will cost, before
anything runs.

    jitterbench plan --system local --mode acceptance
    jitterbench plan --system c1a --mode acceptance --from output/report.json --cases
    jitterbench plan --system mysite:debug --mode quick -n HaloCheck -p openmpi -S calls=1000

ReFrame itself loads the checks (`reframe --system S --mode M --describe`, which
runs nothing) so the plan holds exactly the variants the mode selects; each
variant becomes one test case per partition it fits and programming environment
it takes, as ReFrame concretises it.  A case's machine time is its nodes times
its duration: the duration a previous run measured for the same case with the
same calls (--from a run's report.json), else its descriptor's cost model.  Cases a
check skips when it runs (an eager limit the MPI has no variable for, OSU not
installed) are counted: they are known only there.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from . import benchmarks, checkout
from .console import say

# ---- the cost model: each benchmark's descriptor models its run (Descriptor.cost) -----------
JOB_S = 5.0               # a job's start and end under its scheduler
LAUNCH_S = 1.0            # one launch in the job (a job step): the launcher, MPI_Init, MPI_Finalize
# The quick mode's cap: the most machine time its cases take on one partition, at any size
# (checks.QUICK_NODES: the same few node counts on every partition), OSU included
QUICK_CAP_S = 15 * 60
# the runs a reference file is made of (docs/references.md)
REFERENCE_RUNS = 5


def run_seconds(v):
    """The modelled seconds of a variant's job (a --describe record): its start, and each of its
    launches (the check's `launches`, JB_LAUNCHES) with what its check's descriptor models; a
    check without a descriptor, its launches alone."""
    described = benchmarks.by_check(v.get("@class"))
    return JOB_S + (v.get("launches") or 1) * (LAUNCH_S + (described.cost(v) if described else 0.0))


# ---- the plan ----------------------------------------------------------------------------

class PlanError(ValueError):
    """Bad input: one line, exit status 2."""


@dataclass
class Case:
    check: str
    name: str          # the display name: check and parameters
    partition: str     # system:partition
    environ: str
    nodes: int
    seconds: float
    measured: bool     # seconds from a previous run, not the model

    @property
    def node_hours(self):
        return self.nodes * self.seconds / 3600


def load_configuration(path):
    """The site configuration of a ReFrame configuration file, read as ReFrame reads it, its
    output folder a temporary one and the environment restored afterwards (system modules
    set variables)."""
    if not Path(path).is_file():
        raise PlanError(f"no ReFrame configuration at {path}")
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory() as out:
            os.environ["JB_OUTPUT"] = out
            spec = importlib.util.spec_from_file_location("jitterbench_plan_config", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    except Exception as e:  # a configuration that does not load: whatever it raised, one line
        raise PlanError(f"{path}: the configuration does not load: {type(e).__name__}: {e}") from None
    finally:
        os.environ.clear()
        os.environ.update(saved)
    config = getattr(module, "site_configuration", None)
    if not (isinstance(config, dict) and isinstance(config.get("systems"), list)
            and all(isinstance(s, dict) and isinstance(s.get("name"), str) for s in config["systems"])
            and isinstance(config.get("modes", []), list) and all(isinstance(m, dict) for m in config.get("modes", []))):
        raise PlanError(f"{path}: not a ReFrame configuration (site_configuration is no object with a list of "
                        f"named systems)")
    return config


def _matches(spec, name, features):
    """Whether a ReFrame valid_systems or valid_prog_environs spec ('+mpi', 'sys:part +mpi',
    'openmpi', '*') admits the partition or environment of that name and features."""
    for token in spec.split():
        if token.startswith("+") and token[1:] not in features:
            return False
        if token.startswith("-") and token[1:] in features:
            return False
        if token[0] not in "+-%" and token not in ("*", "*:*", name, name.split(":")[0], f"{name.split(':')[0]}:*"):
            return False
    return True


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def reframe_error(output, returncode):
    """ReFrame's own message in a failed run's output: its first ERROR line (the cause; a
    traceback follows it with -v only), else its last line."""
    lines = [ANSI.sub("", line).strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("ERROR:")), lines[-1] if lines else f"exit {returncode}")


def describe(config, system, mode, reframe=None, options=()):
    """The variants the mode selects on the system (a name, or system:partition), as ReFrame's
    --describe records them; options are ReFrame's own selections (-n, -p, -S)."""
    reframe = reframe or shutil.which("reframe", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if not reframe:
        raise PlanError("ReFrame is not installed: no reframe command (run ci/setup.sh)")
    with tempfile.TemporaryDirectory() as out:  # its log and run files go there, never over a run's
        try:
            proc = subprocess.run([reframe, "-C", str(config), "--system", system, "--mode", mode, *options,
                                   "--describe"],
                                  env=dict(os.environ, JB_OUTPUT=out), capture_output=True, text=True, timeout=900)
        except OSError as e:  # not executable by this user, say
            raise PlanError(f"{reframe} does not start: {e.strerror}") from None
    if proc.returncode == 0:
        try:
            return json.loads(proc.stdout[proc.stdout.index("["):])
        except ValueError:
            pass
    raise RuntimeError(f"ReFrame could not list the checks: {reframe_error(proc.stderr + proc.stdout, proc.returncode)}")


def measured_durations(report_paths):
    """{(display name, system:partition, environ, calls): seconds} of the cases of previous runs."""
    from . import reframe_report  # the JSON reader: only with --from
    durations = {}
    for path in report_paths:
        try:
            report = reframe_report.read_report(path)
        except reframe_report.RunReportError as e:
            raise PlanError(str(e)) from None
        for run in report["runs"]:
            for c in run.get("testcases", []):
                if c.get("time_run") is not None and not c.get("fixture") and c.get("result") != "skip":
                    durations[(c["display_name"], f"{c['system']}:{c['partition']}", c["environ"],
                               c.get("calls"))] = c["time_run"]
    return durations


def cases(config, system, variants, durations, partition=None, prgenvs=()):
    """Every test case of the variants: one per partition (only partition, when named) and
    environment (those matching a prgenvs pattern, as ReFrame's -p selects) each fits."""
    (sys_entry,) = [s for s in config["systems"] if s["name"] == system]
    environs = {e["name"]: e for e in config["environments"] if system in e.get("target_systems", [system])}
    out = []
    for v in variants:
        for part in sys_entry["partitions"]:
            fullname = f"{system}:{part['name']}"
            if partition and part["name"] != partition:
                continue
            if not any(_matches(spec, fullname, part.get("features", [])) for spec in v["valid_systems"]):
                continue
            for env in part["environs"]:
                if prgenvs and not any(re.match(pattern, env) for pattern in prgenvs):
                    continue
                features = environs.get(env, {}).get("features", [])
                if not any(_matches(spec, env, features) for spec in v["valid_prog_environs"]):
                    continue
                key = (v["display_name"], fullname, env, v.get("calls"))
                out.append(Case(v["@class"], v["display_name"], fullname, env, v.get("nodes") or 1,
                                durations.get(key, run_seconds(v)), key in durations))
    return out


def _duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def summary(system, mode, planned, listed=False):
    """One line per check, and a total; with listed, every case first."""
    lines = []
    if listed:
        lines += [f"{c.name} @{c.partition}+{c.environ}: {c.nodes} node(s), {_duration(c.seconds)}"
                  f"{' (measured)' if c.measured else ''}" for c in planned]
        lines.append("")
    by_check = defaultdict(list)
    for c in planned:
        by_check[c.check].append(c)
    header = f"{'check':<16} {'cases':>6} {'nodes':>12} {'time':>9} {'node-hours':>11}"
    lines += [f"jitterbench plan: system {system}, mode {mode}", header]

    def row(label, group):
        nodes = sorted({c.nodes for c in group})
        span = f"{nodes[0]}-{nodes[-1]}" if len(nodes) > 1 else str(nodes[0]) if nodes else "-"
        return (f"{label:<16} {len(group):>6} {span:>12} {_duration(sum(c.seconds for c in group)):>9} "
                f"{sum(c.node_hours for c in group):>11.3f}")

    lines += [row(check, group) for check, group in sorted(by_check.items())]
    lines.append(row("total", planned))
    measured = sum(c.measured for c in planned)
    lines.append(f"{len(planned)} test case(s); durations: {measured} measured in a previous run (--from), "
                 f"{len(planned) - measured} from the benchmarks' descriptors' cost model; time is run one after "
                 "the other, as the modes run")
    by_partition = defaultdict(float)
    for c in planned:
        by_partition[c.partition] += c.seconds
    if mode == "quick":  # the cap the quick mode is designed to, against what this plan models
        lines += [f"quick cap {QUICK_CAP_S // 60} min a partition: {p} {_duration(t)}"
                  f"{'' if t <= QUICK_CAP_S else ' OVER THE CAP: name fewer environments or checks (-p, -n)'}"
                  for p, t in sorted(by_partition.items())]
    if mode == "acceptance":  # what references cost before the first judged run
        lines.append(f"references (docs/references.md): {REFERENCE_RUNS} runs of this mode, "
                     f"{REFERENCE_RUNS * sum(c.node_hours for c in planned):.1f} node-hours, "
                     f"{_duration(REFERENCE_RUNS * max(by_partition.values(), default=0))} on the busiest partition; "
                     f"quick references first: {REFERENCE_RUNS} runs of plan --mode quick")
    return "\n".join(lines)


WHAT = ("what a mode will run on a system and its machine time, before it runs: the test cases, their "
        "count and estimated node-hours")


def add_arguments(p) -> None:
    """The plan subcommand's options (its parser from cli.parser, as every subcommand's)."""
    p.add_argument("--system", metavar="SYSTEM[:PARTITION]",
                   help="the ReFrame system, e.g. local, vcluster, c1a, or one partition of it, as reframe takes it "
                        "(default: the first system whose hostnames match this host, as reframe chooses)")
    p.add_argument("--mode", default="acceptance", metavar="MODE",
                   help="the mode: quick, acceptance or papers (default: acceptance)")
    p.add_argument("-C", "--config", metavar="FILE", help="the ReFrame configuration; its checkout's checks are "
                   "planned (default: systems/config.py of the checkout run from)")
    # ReFrame's own selections, handed to `reframe --describe` as they are
    p.add_argument("-n", "--name", action="append", default=[], metavar="PATTERN",
                   help="only the checks whose name matches PATTERN, as reframe -n (repeatable)")
    p.add_argument("-p", "--prgenv", action="append", default=[], metavar="PATTERN",
                   help="only the programming environments matching PATTERN, as reframe -p (repeatable)")
    p.add_argument("-S", "--setvar", action="append", default=[], metavar="[TEST.]VAR=VAL",
                   help="set a check variable, as reframe -S (repeatable), e.g. -S calls=1000")
    p.add_argument("--from", dest="reports", nargs="+", default=[], metavar="REPORT",
                   help="run reports (report.json) whose measured durations replace the cost model's")
    p.add_argument("--cases", action="store_true", help="list every test case before the summary")


def _near(word, known) -> str:
    import difflib  # noqa: PLC0415
    found = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean '{found[0]}'?)" if found else ""


def host_system(config, hostname=None):
    """The system ReFrame would choose here: the first whose hostnames match this host."""
    hostname = hostname or socket.gethostname()
    for entry in config["systems"]:
        if any(re.match(pattern, hostname) for pattern in entry.get("hostnames", [])):
            return entry["name"]
    raise PlanError(f"no system's hostnames match host '{hostname}': name one with --system")


def command(args) -> int:
    """jitterbench plan: the plan on stdout; 2 for a mistake of input, 1 where ReFrame could not
    describe the checks."""
    try:
        args.config = args.config or str(checkout.config())
        config = load_configuration(args.config)  # which names its checkout (checkout.use)
        system, _, partition = (args.system or host_system(config)).partition(":")
        systems = [s["name"] for s in config["systems"]]
        if system not in systems:
            raise PlanError(f"unknown system '{system}'{_near(system, systems)} (known: {', '.join(systems)})")
        partitions = [p["name"] for s in config["systems"] if s["name"] == system for p in s["partitions"]]
        if partition and partition not in partitions:
            raise PlanError(f"unknown partition '{partition}' of system '{system}'{_near(partition, partitions)} "
                            f"(known: {', '.join(partitions)})")
        modes = [m["name"] for m in config.get("modes", []) if system in m.get("target_systems", [system])]
        if args.mode not in modes:
            raise PlanError(f"unknown mode '{args.mode}' for system '{system}'{_near(args.mode, modes)} "
                            f"(known: {', '.join(modes)})")
        for pattern in (*args.name, *args.prgenv):
            try:
                re.compile(pattern)
            except re.error as e:
                raise PlanError(f"pattern '{pattern}' is not a regular expression: {e}") from None
        for setting in args.setvar:
            if not re.fullmatch(r"(\w+\.)?\w+=.*", setting, re.S):
                raise PlanError(f"-S '{setting}' is not [TEST.]VAR=VAL")
        durations = measured_durations(args.reports)
        options = [*(o for n in args.name for o in ("-n", n)), *(o for n in args.prgenv for o in ("-p", n)),
                   *(o for v in args.setvar for o in ("-S", v))]
        variants = describe(args.config, args.system or system, args.mode, options=options)
    except (PlanError, checkout.CheckoutError) as e:
        say(f"jitterbench plan: error: {e}")
        return 2
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        say(f"jitterbench plan: error: {e}")
        return 1
    planned = cases(config, system, variants, durations, partition, args.prgenv)
    if not planned:  # a misspelt -n or -p selects nothing: never a plan of nothing that looks like one
        say(f"jitterbench plan: error: no test case of mode {args.mode} on {args.system or system} is selected"
            f"{' by ' + ' '.join(options) if options else ''}: see the checks with "
            f"reframe -C {args.config} --system {args.system or system} --mode {args.mode} -l")
        return 2  # the selection's mistake, as every refusal of input (found by the CLI fuzzer, seed 4447 case 721)
    print(f"jitterbench plan: {checkout.describe()}, configuration {args.config}")
    print(summary(args.system or system, args.mode, planned, args.cases))
    return 0

