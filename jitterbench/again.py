"""`jitterbench again`: a verdict in two attempts (docs/references.md, "Two attempts").

On the CI machine type a whole case of a clean run now and then lands 1.5-2x off for about a
minute, so one judged run cannot both hold a small false-alarm rate and bound 2x.  Each check
that failed under an MPI is therefore run again at once, alone, by the run's own command, and
fails only if it fails again: two independent attempts at 0.1 each make the 0.01 a run that the
references state.  The second attempts are recorded in the run's report, their runs appended as
ReFrame's --max-retries appends a retry's, so that every reader (table, report, reference) takes a
case's last attempt as its verdict.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

from . import files, reframe_report, verdict_table

WHAT = ("judge again, at once and alone, each check that failed under an MPI in a ReFrame run: it fails only "
        "if it fails again")


class AgainError(Exception):
    """A command line that cannot be run again, in one line."""


def add_arguments(p):
    p.add_argument("report", metavar="REPORT", help="the run's ReFrame report (--report-file); the second attempts "
                                                    "are recorded in it")
    p.add_argument("reframe", nargs=argparse.REMAINDER, metavar="REFRAME...",
                   help="after --, the run's own ReFrame command line; its -n options are left out, as ReFrame runs what "
                        "any -n names and the check runs alone")


def without_names(command) -> list:
    """command without its -n (--name) options."""
    kept, value_of_n = [], False
    for arg in command:
        if value_of_n:
            value_of_n = False
        elif arg in ("-n", "--name"):
            value_of_n = True
        elif not (re.match(r"-n.", arg) or arg.startswith("--name=")):
            kept.append(arg)
    return kept


def second_attempt(outcomes) -> str:
    if "fail" in outcomes:
        return "failed again"
    if reframe_report.INCONCLUSIVE in outcomes:
        return "was inconclusive"
    return "passed" if outcomes else "did not run"


def command(args) -> int:
    """0: no check failed twice; 1: one did, or its second attempt left no report."""
    reframe = args.reframe[1:] if args.reframe[:1] == ["--"] else args.reframe
    if not reframe:
        raise AgainError("give the run's ReFrame command after --, e.g. jitterbench again output/report.json -- "
                         "reframe -C systems/config.py --mode quick -r")
    if shutil.which(reframe[0]) is None:
        raise AgainError(f"{reframe[0]}: no such command to run again (the run's ReFrame command line goes after --)")
    reframe_report.report_cases(args.report)  # a report every command can read, or one line why not
    # the report is rewritten at the end, whole: refused now, not after the attempts, if that cannot be
    if not reframe_report.REPORT_HEAD.match(files.read_text(args.report, AgainError)[:4096]):
        raise AgainError(f"{args.report}: does not begin as ReFrame writes a run report ({{\"session_info\": ...); "
                         f"the second attempts are recorded only in one it wrote")
    files.writable(args.report, own=reframe_report.REPORT_HEAD)
    failed = verdict_table.failed([args.report])
    if not failed:
        print(f"{args.report}: no check failed; nothing to judge again")
        return 0
    # in the output and stage folders beside the report (where the main job and the acceptance job keep
    # ReFrame's), not where a report's text says: the first attempt's folders stay as they were
    run = Path(args.report).resolve().parent
    output, stage = run / "output" / "again", run / "stage" / "again"
    output.mkdir(parents=True, exist_ok=True)
    attempts, code = [], 0
    for check, environ in failed:
        name = files.within(output, f"{check}-{environ}")  # names read from a report stay inside the folder
        with open(f"{name}.log", "w") as log:
            subprocess.run([*without_names(reframe), "-n", rf"^{re.escape(check)}\b", "-S", f"valid_prog_environs={environ}",
                            "-o", str(output), "-s", str(stage), f"--report-file={name}.json",
                            f"--report-junit={name}.xml"], stdout=log, stderr=subprocess.STDOUT, check=False)
        report = Path(f"{name}.json")
        if report.is_file() and report.stat().st_size:
            attempts.append(report)
            outcomes = verdict_table.outcomes_of([report]).get((check, environ), [])
        else:
            outcomes = []
        code |= "fail" in outcomes or not outcomes
        print(f"{check} under {environ} failed, then {second_attempt(outcomes)} ({name}.log)", flush=True)
    if attempts:
        reframe_report.add_attempts(args.report, attempts)
    return code
