"""`jitterbench plan`: what a mode will run on a system, and what it will cost, before
anything runs.

    jitterbench plan --system local --mode acceptance
    jitterbench plan --system c1a --mode acceptance --from output/report.json --cases

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

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from . import benchmarks, checkout
from .console import OneLineParser, say

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


def describe(config, system, mode, reframe=None):
    """The variants the mode selects on the system, as ReFrame's --describe records them."""
    reframe = reframe or shutil.which("reframe", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if not reframe:
        raise PlanError("ReFrame is not installed: no reframe command (run ci/setup.sh)")
    with tempfile.TemporaryDirectory() as out:  # its log and run files go there, never over a run's
        try:
            proc = subprocess.run([reframe, "-C", str(config), "--system", system, "--mode", mode, "--describe"],
                                  env=dict(os.environ, JB_OUTPUT=out), capture_output=True, text=True, timeout=900)
        except OSError as e:  # not executable by this user, say
            raise PlanError(f"{reframe} does not start: {e.strerror}") from None
    try:
        return json.loads(proc.stdout[proc.stdout.index("["):]) if proc.returncode == 0 else None
    except ValueError:
        pass
    lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
    raise RuntimeError(f"ReFrame could not list the checks: {lines[-1] if lines else f'exit {proc.returncode}'}")


def measured_durations(report_paths):
    """{(display name, system:partition, environ, calls): seconds} of the cases of previous runs."""
    from . import references  # PyYAML: only with --from
    durations = {}
    for path in report_paths:
        try:
            report = references.read_report(path)
        except references.ReferenceFileError as e:
            raise PlanError(str(e)) from None
        for run in report["runs"]:
            for c in run.get("testcases", []):
                if c.get("time_run") is not None and not c.get("fixture") and c.get("result") != "skip":
                    durations[(c["display_name"], f"{c['system']}:{c['partition']}", c["environ"],
                               c.get("calls"))] = c["time_run"]
    return durations


def cases(config, system, variants, durations):
    """Every test case of the variants: one per partition and environment each fits."""
    (sys_entry,) = [s for s in config["systems"] if s["name"] == system]
    environs = {e["name"]: e for e in config["environments"] if system in e.get("target_systems", [system])}
    out = []
    for v in variants:
        for part in sys_entry["partitions"]:
            fullname = f"{system}:{part['name']}"
            if not any(_matches(spec, fullname, part.get("features", [])) for spec in v["valid_systems"]):
                continue
            for env in part["environs"]:
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
                     f"quick references first cost {REFERENCE_RUNS} quick runs")
    return "\n".join(lines)


def parser():
    p = OneLineParser(prog="jitterbench plan", description=(
        "List the test cases a mode runs on a system, their count and estimated machine time "
        "(node-hours), without running anything."))
    p.add_argument("--system", required=True, help="the ReFrame system, e.g. local, vcluster, c1a")
    p.add_argument("--mode", default="acceptance", help="the mode: quick or acceptance [acceptance]")
    p.add_argument("-C", "--config", help="the ReFrame configuration; its checkout's checks are planned "
                   "[systems/config.py of the checkout run from]")
    p.add_argument("--from", dest="reports", nargs="+", default=[], metavar="REPORT",
                   help="run reports (report.json) whose measured durations replace the cost model's")
    p.add_argument("--cases", action="store_true", help="list every test case before the summary")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        args.config = args.config or str(checkout.config())
        config = load_configuration(args.config)  # which names its checkout (checkout.use)
        systems = [s["name"] for s in config["systems"]]
        if args.system not in systems:
            raise PlanError(f"unknown system '{args.system}' (known: {', '.join(systems)})")
        modes = [m["name"] for m in config.get("modes", []) if args.system in m.get("target_systems", [args.system])]
        if args.mode not in modes:
            raise PlanError(f"unknown mode '{args.mode}' for system '{args.system}' (known: {', '.join(modes)})")
        durations = measured_durations(args.reports)
        variants = describe(args.config, args.system, args.mode)
    except (PlanError, checkout.CheckoutError) as e:
        say(f"jitterbench plan: error: {e}")
        return 2
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        say(f"jitterbench plan: error: {e}")
        return 1
    print(f"jitterbench plan: {checkout.describe()}, configuration {args.config}")
    print(summary(args.system, args.mode, cases(config, args.system, variants, durations), args.cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
