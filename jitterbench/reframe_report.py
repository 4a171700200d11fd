"""ReFrame's run report (report.json, --report-file), as every command reads it: checked field by
field (a report that is not one is one line naming the field), each case once, as its last attempt
and its rounds pooled (last_attempts), its verdict (outcome: inconclusive where a launch stayed
disturbed or its node moved, node_first), its parameters from its name.  The table, reference,
history, again, plan, report and compare all read run reports through it.
"""
from __future__ import annotations

import json
import re

from . import files
from .files import is_number, read_json


class RunReportError(ValueError):
    """A file that is not a run report the commands can read: one line naming it and the field."""


def read_report(path) -> dict:
    """A ReFrame run report (--report-file), or one line saying why it is not one."""
    report = read_json(path, RunReportError)
    if not isinstance(report, dict) or "runs" not in report or "session_info" not in report:
        raise RunReportError(f"{path}: not a ReFrame run report (no 'runs' or 'session_info')")
    problem = report_problem(report)
    if problem:
        raise RunReportError(f"{path}: not a ReFrame run report: field {problem}")
    return report


CASE_TEXT = ("display_name", "result", "system", "partition", "environ")


def report_problem(report):
    """'<field> <what is wrong>' for the first field of a run report that the commands read
    and cannot use, or None."""
    if not isinstance(report["session_info"], dict):
        return "session_info is not an object"
    start = report["session_info"].get("time_start_unix")
    if start is not None and not is_number(start):
        return f"session_info.time_start_unix is not a number: {start!r}"
    if not isinstance(report["session_info"].get("prefix_output") or "", str):
        return f"session_info.prefix_output is not a string: {report['session_info']['prefix_output']!r}"
    if not isinstance(report["runs"], list):
        return f"runs is not a list: {report['runs']!r:.40}"
    for r, run in enumerate(report["runs"]):
        if not isinstance(run, dict):
            return f"runs[{r}] is not an object"
        if not isinstance(run.get("testcases", []), list):
            return f"runs[{r}].testcases is not a list"
        for c, case in enumerate(run.get("testcases", [])):
            problem = _case_problem(case)
            if problem:
                return f"runs[{r}].testcases[{c}]{problem}"
    return None


def _case_problem(case):
    if not isinstance(case, dict):
        return " is not an object"
    for key in CASE_TEXT:
        if not isinstance(case.get(key), str):
            return f".{key} is not a string: {case.get(key)!r}"
    if not case["display_name"].strip():
        return ".display_name is empty"
    for name in parameter_names(case["display_name"]):
        if name not in case:
            return f" lacks the parameter {name} that its display_name names"
        if not (case[name] is None or isinstance(case[name], (str, int, float, bool))):
            return f".{name} is not a parameter value (text or a number): {case[name]!r}"
    problem = perf_problem(case)
    if problem:
        return problem
    if not isinstance(case.get("outputdir") or "", str):
        return f".outputdir is not a string: {case['outputdir']!r}"
    keep = case.get("keep_files") or []
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        return f".keep_files is not a list of file names: {keep!r}"
    return None


def perf_problem(case):
    """What is wrong with a case's perfvalues (as _case_problem says it), or None."""
    perf = case.get("perfvalues") or {}
    if not isinstance(perf, dict):
        return ".perfvalues is not an object"
    for name, pv in perf.items():
        if not isinstance(pv, list) or len(pv) < 5:
            return f".perfvalues.{name} is not [value, reference, lower, upper, unit, ...]"
        bad = next((i for i in range(4) if pv[i] is not None and not is_number(pv[i])), None)
        if bad is not None:
            return f".perfvalues.{name}[{bad}] is not a number: {pv[bad]!r}"
        if pv[4] is not None and not isinstance(pv[4], str):
            return f".perfvalues.{name}[4] (the unit) is not a string: {pv[4]!r}"
    return None


def report_cases(path):
    """(session_info, test cases) of a ReFrame run report: the cases that ran, without the
    fixtures (the build) and the cases skipped before they measured anything, each case its
    last attempt (a retried case, --max-retries, appears again in a later run of the report;
    its failed attempt is neither its verdict nor a repeat).  Every command reads run reports
    through it: table, reference, report and compare."""
    report = read_report(path)
    return report["session_info"], last_attempts(report)


# the verdict of a case with a launch disturbed through every try (harness.launches.LaunchedCheck.undisturbed):
# ReFrame fails it, and nothing of it is judged, either way
INCONCLUSIVE = "inconclusive"


def outcome(case):
    """A report case's verdict: its result (pass, fail, skip, ...), or inconclusive where it failed
    naming a launch disturbed through every try."""
    inconclusive = case["result"] == "fail" and f"{INCONCLUSIVE}: " in str(case.get("fail_reason") or "")
    return INCONCLUSIVE if inconclusive else case["result"]


# the parameter ReFrame's --repeat gives each round of a case (harness.rounds.Rounds), in its name
ROUND = ".repeat_no"
_ROUND_IN_NAME = re.compile(rf" %{re.escape(ROUND)}=(\d+)")


def case_name(display_name):
    """A test case's name without its round: the name of the case its rounds make."""
    return _ROUND_IN_NAME.sub("", display_name)


def holds_the_figure(case):
    """Whether a case's values are its figure: not an earlier round of a case run in rounds, whose
    values are its own round's (harness.rounds.Rounds: rounds_pooled below rounds)."""
    def count(name):
        try:
            return int(case.get(name) or 1)
        except (TypeError, ValueError):
            return 1
    return count("rounds_pooled") >= count("rounds")


def _round_of(case):
    found = _ROUND_IN_NAME.search(case["display_name"])
    return int(found[1]) if found else 0


def last_attempts(report):
    """report_cases of a run report already read and checked (report_problem): each case once, its
    rounds (harness.rounds.Rounds) as one: a round that failed, else one that was inconclusive, else
    the round that holds the case's figure (holds_the_figure), named as the case, with every round's
    output folder (round_outputdirs: their launches' documents)."""
    last = {}
    for run in report["runs"]:
        for c in run.get("testcases", []):
            if not c.get("fixture") and (c["result"] != "skip" or c.get("perfvalues")):
                last[(c["display_name"], c["system"], c["partition"], c["environ"])] = c
    cases = {}
    for (name, *where), c in last.items():
        cases.setdefault((case_name(name), *where), []).append(c)
    first = {"fail": 0, INCONCLUSIVE: 1}
    return node_first([{**min(rounds, key=lambda c: (first.get(outcome(c), 2), not holds_the_figure(c))),
                        "display_name": name, "round_outputdirs": [c.get("outputdir") for c in sorted(rounds, key=_round_of)]}
                       for (name, *_), rounds in cases.items()])


def _finding(case) -> dict:
    try:
        finding = json.loads(case.get("node_finding") or "{}")
    except (TypeError, ValueError):
        return {}
    return finding if isinstance(finding, dict) else {}


def moved_nodes(cases) -> set:
    """The nodes a run's node findings name (harness.checks.JitterbenchCheck: a case past its node
    bounds, inconclusive)."""
    return {f.get("node") for c in cases if outcome(c) == INCONCLUSIVE
            for f in (_finding(c).get("past") or {}).values() if isinstance(f, dict)} - {None, "?"}


def peer_launches(cases) -> list:
    """The launches peers.slow_nodes judges: those of cases whose node figures no reference bounds
    (no node_probe_us: nodes sharing their CPUs), run on two or more nodes holding equally many
    tasks, each as (its nodes, the node of its slowest probe window, the slowest window over the
    fastest: src/core/load.c, the whole probe's time, in which a task held off its core counts)."""
    launches = []
    for c in cases:
        nodes = [n for n in str(c.get("node_list") or "").split(",") if n]
        per_node, tasks = c.get("num_tasks_per_node"), c.get("num_tasks")
        if (len(nodes) < 2 or any(name.endswith(":node_probe_us") for name in c.get("perfvalues") or {})
                or not str(per_node).isdigit() or str(tasks) != str(int(per_node) * len(nodes))):
            continue
        for sample in str(c.get("load_before") or "").split("; "):  # harness.launches: each launch's sample
            said = dict(field.split("=", 1) for field in sample.split() if "=" in field)
            slowest, fastest = (files.parse_number(said.get(k, "")) or 0 for k in ("window_us", "window_min_us"))
            if said.get("window_node") in nodes and slowest > 0:
                launches.append((nodes, said["window_node"], slowest / fastest if fastest > 0 else None))
    return launches


def node_first(cases) -> list:
    """Node first over a whole run (docs/references.md, "Node first"): a node is one thing, so where
    some case of the run found its node past the node bounds, or the run's launches found it the
    slowest among its peers (peers.slow_nodes, where nodes share their CPUs and no node figure is
    referenced), no failure of a case that ran on that node is the network's: such a case is
    inconclusive, naming the node, as the cases that found it are.  Each check judges its own node
    figures against its own case's bounds, the wider of the partition's pool and its own, and a case
    whose probe moves with its own runs (Intel MPI's all-to-all under a CPU quota: probe 1.30x against
    its own 1.30x, its exchange 4.5x) is judged and failed while twenty others of the run name the
    node.  A clean run finds its node at the node figures' stated rate, and only a failure in such a
    run is held back, never turned into a pass.  A node slow among its peers was judged by nothing
    else: every case on it is inconclusive, passed or failed.  Every case carries the run's peer
    finding (node_peers, JSON)."""
    moved = moved_nodes(cases)
    launches = peer_launches(cases)
    if launches:
        from . import peers  # noqa: PLC0415  SciPy's import, only for a run of several nodes
        slow = peers.slow_nodes(launches)
    else:
        slow = {}
    out = []
    for c in cases:
        nodes = set(str(c.get("node_list") or "").split(","))
        on, among_peers = sorted((moved | set(slow)) & nodes), set(slow) & nodes
        # a failure on a node that moved; any case on one slow among its peers, which no reference judged
        if outcome(c) != INCONCLUSIVE and ((c["result"] == "fail" and on) or (c["result"] == "pass" and among_peers)):
            finding = {"past": {}, "within": {}, **_finding(c), "moved": on}
            c = {**c, "result": "fail", "node_finding": json.dumps(finding),
                 "fail_reason": f"{INCONCLUSIVE}: node first: {', '.join(on)} moved in this run (other cases found it "
                                f"past their node bounds, or slowest among its peers): this case is not judged "
                                f"({c.get('fail_reason') or 'it passed'})"}
        if slow:
            c = {**c, "node_peers": json.dumps(slow)}
        out.append(c)
    return out


# how ReFrame's run report begins (its json.dump, indented): the one file add_attempts replaces
REPORT_HEAD = re.compile(r'\{\s*"session_info"')


def add_attempts(path, again_paths):
    """Records in the run report at path the reports of its checks judged again (the main job's
    second attempt, a ReFrame run of its own): their runs appended as ReFrame's --max-retries
    appends a retry's, each with its own session_info, so that every reader takes a case's last
    attempt (last_attempts) as its verdict.  Written whole or not at all."""
    report = read_report(path)
    for again in again_paths:
        extra = read_report(again)
        for run in extra["runs"]:
            report["runs"].append({**run, "run_index": len(report["runs"]), "session_info": extra["session_info"]})
    files.write_text(path, json.dumps(report, indent=2), own=REPORT_HEAD)


def measured_cases(report_paths):
    """(path, session_info, test case) of every case with performance values of the reports."""
    for path in report_paths:
        info, cases = report_cases(path)
        yield from ((path, info, case) for case in cases if case.get("perfvalues"))


def parameters(case):
    """The test's parameters in declaration order, from its display name
    ('HaloCheck %nodes=1 %pattern=sendrecv'), with their typed values."""
    return {name: case[name] for name in parameter_names(case["display_name"])}


def parameter_names(display_name):
    return re.findall(r"%(\w+)=", display_name)


def system_of(report_paths) -> str:
    """The one system whose cases the run reports hold (for --system's default)."""
    systems = sorted({case["system"] for _, _, case in measured_cases(report_paths)})
    if len(systems) != 1:
        raise RunReportError(f"the reports hold {'no measured case' if not systems else 'the systems ' + ', '.join(systems)}"
                             f": name the one the references are for with --system")
    return systems[0]
