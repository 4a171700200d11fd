"""Reference files: reference_data/<system>.yaml, read by ReFrame through `$ref`.

A file starts with its provenance, then holds one entry per check class in
ReFrame's external-reference format:

    provenance:
      system: local
      source: measured            # or: paper
      measured_by: ...            # who (or which paper, section, table)
      date: 2026-11-22
      method: command, ReFrame version, repeats
    HaloCheck:
      $index: [$partition, $environ, nodes, ...]
      local:default:
        openmpi:
          ...
            max: [median, lower, upper, us]

A file made from a paper (source: paper) also holds, in a top-level list
`stated`, every number the paper's text states, with where it states it:

    stated:
      - id: alltoall-throughput-p2          # unique in the file
        quantity: all-to-all throughput per processor, 1 MB messages, 2 processors
        value: 40.991                       # a number, or null where the text gives none
        unit: MB/s                          # null only with a null value
        where: section 3, Table 1
        metric: alltoall_throughput         # optional: the measured counterpart (METRICS)
        at: {tasks: 2, msg_size: 1048576}   # optional: where that counterpart is taken
        note: ...                           # required with a null value; any caveat
        read_off_figure: true               # only for a value read off a figure

ReFrame ignores it (it reads only the entries named after checks).  So it does the list
`not_assertable` of a measured file: the variables whose noise on this system puts their
minimum detectable slowdown above the stated limit (and those with too few repeats), left
unbounded ([value, null, null, unit]), each with its slowdown and why:

    not_assertable:
      - {check: HaloCheck, at: [local:default, mpich, 1, ...], variable: p99_isend-recv_4096,
         detectable_slowdown: 3.41, reason: 'noise: ...'}

Its section `fingerprint` names the machine the numbers are of (jitterbench/fingerprint.py):
a check takes a file's references only where its run matches it.

A bounded entry's minimum detectable slowdown is its threshold: 1 + upper where lower is
better, 1 / (1 + lower) where higher is (detectable_slowdown()).

This module checks a file before ReFrame reads it, so that a malformed one
is one clear line naming the entry, and builds files from ReFrame runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
import copy
import functools
import hashlib
import json
import math
import os
import re
import statistics
import subprocess

import numpy as np
import yaml

from . import benchmarks, bounds, checkout, files, fingerprint, sweeps
from .files import is_number, loads_yaml, read_json, read_text

PROVENANCE_KEYS = ("system", "source", "date", "method")
# the top-level keys of a file that are not checks (ReFrame ignores them)
SECTIONS = ("provenance", "fingerprint", "stated", "not_assertable")

# The measured counterparts a `stated` entry may name: each benchmark's descriptor
# (jitterbench/benchmarks/) computes its own and says where they are taken (`at`).
METRICS = tuple(sorted(benchmarks.METRICS))
STATED_KEYS = ("id", "quantity", "value", "unit", "where", "metric", "at", "note", "read_off_figure")


class ReferenceFileError(ValueError):
    pass


def load(path) -> dict:
    return loads(read_text(path, ReferenceFileError), path)


def loads(text, path) -> dict:
    """A reference file's text, checked; every problem is one line naming path and the entry."""
    return copy.deepcopy(_checked(text, str(path)))


@functools.lru_cache(maxsize=8)
def _checked(text, path) -> dict:
    # Every test case reads its system's files in its setup: parsing local.yaml takes 0.17 s, more
    # than a case's launch, a copy of the parsed one 2 ms.  Keyed by the text, not by the file's
    # time, so a file rewritten between cases is read again.
    doc = loads_yaml(text, path, ReferenceFileError)
    if not isinstance(doc, dict) or not doc:
        raise ReferenceFileError(f"{path}: not a reference file (expected a mapping of check names)")
    if next(iter(doc)) != "provenance" or not isinstance(doc["provenance"], dict):
        raise ReferenceFileError(f"{path}: must start with a 'provenance' mapping")
    missing = [k for k in PROVENANCE_KEYS if not doc["provenance"].get(k)]
    if missing:
        raise ReferenceFileError(f"{path}: provenance lacks {', '.join(missing)}")
    for check, entry in doc.items():
        if check == "provenance":
            continue
        if check == "stated":
            _check_stated(path, entry)
            continue
        if check == "not_assertable":
            _check_not_assertable(path, entry)
            continue
        if check == "fingerprint":
            _check_fingerprint(path, entry)
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("$index"), list):
            raise ReferenceFileError(f"{path}: {check}: expected a mapping with an '$index' list")
        _check_level(path, [check], {k: v for k, v in entry.items() if k != "$index"}, len(entry["$index"]))
    return doc


def stated(doc) -> list:
    """The numbers a paper states (a loaded document's `stated` list; empty if none)."""
    return doc.get("stated", [])


def _check_stated(path, items):
    if not isinstance(items, list):
        raise ReferenceFileError(f"{path}: stated: expected a list of entries")
    ids = set()
    for i, item in enumerate(items):
        problem = _stated_problem(item, ids)
        if problem:
            name = f"stated > {item['id']}" if isinstance(item, dict) and item.get("id") else f"stated[{i}]"
            raise ReferenceFileError(f"{path}: {name}: {problem}")
        ids.add(item["id"])


def _stated_problem(item, ids):
    """What is wrong with one `stated` entry, or None."""
    if not isinstance(item, dict):
        return "expected a mapping"
    unknown = sorted(map(str, set(item) - set(STATED_KEYS)))
    if unknown:
        return f"unknown key(s) {', '.join(unknown)}"
    missing = [k for k in ("id", "quantity", "value", "unit", "where") if k not in item]
    if missing:
        return f"lacks {', '.join(missing)}"
    for key in ("id", "quantity", "where"):
        if not isinstance(item[key], str) or not item[key].strip():
            return f"{key} must be a non-empty string"
    if item["id"] in ids:
        return "id is not unique in the file"
    value, unit, note = item["value"], item["unit"], item.get("note")
    if value is not None and not is_number(value):
        return f"value must be a number or null, got {value!r}"
    if unit is None and value is not None:
        return "unit may be null only with a null value"
    if unit is not None and not isinstance(unit, str):
        return f"unit must be a string or null, got {unit!r}"
    if note is not None and not isinstance(note, str):
        return f"note must be a string, got {note!r}"
    if value is None and not (note or "").strip():
        return "a null value needs a note saying why"
    if "metric" in item and item["metric"] not in METRICS:
        return f"metric must be one of {', '.join(METRICS)}, got {item['metric']!r}"
    if "at" in item and not isinstance(item["at"], dict):
        return f"at must be a mapping, got {item['at']!r}"
    if "at" in item and "metric" not in item:
        return "at says where a metric is taken: it needs a metric"
    if "read_off_figure" in item and not isinstance(item["read_off_figure"], bool):
        return f"read_off_figure must be true or false, got {item['read_off_figure']!r}"
    return None


NOT_ASSERTABLE_KEYS = ("check", "at", "variable", "detectable_slowdown", "reason")


def _check_not_assertable(path, items):
    """The variables `jitterbench reference` left unbounded on this system, each with why."""
    if not isinstance(items, list):
        raise ReferenceFileError(f"{path}: not_assertable: expected a list of entries")
    for i, item in enumerate(items):
        problem = None
        if not isinstance(item, dict) or sorted(item) != sorted(NOT_ASSERTABLE_KEYS):
            problem = f"expected a mapping of {', '.join(NOT_ASSERTABLE_KEYS)}"
        elif not all(isinstance(item[k], str) and item[k] for k in ("check", "variable", "reason")):
            problem = "check, variable and reason must be non-empty strings"
        elif not isinstance(item["at"], list):
            problem = f"at must be a list (the entry's keys), got {item['at']!r}"
        elif item["detectable_slowdown"] is not None and not (is_number(item["detectable_slowdown"])
                                                              and item["detectable_slowdown"] >= 1):
            problem = f"detectable_slowdown must be a number >= 1 or null, got {item['detectable_slowdown']!r}"
        if problem:
            raise ReferenceFileError(f"{path}: not_assertable[{i}]: {problem}")


def _check_fingerprint(path, fp):
    """The machine the file's numbers are of (jitterbench/fingerprint.py)."""
    def texts(value):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    problem = None
    if not isinstance(fp, dict) or not isinstance(fp.get("system"), str):
        problem = "expected a mapping with the system's name"
    elif not texts(fp.get("cpu", [])) or not texts(fp.get("hosts", [])) or not texts(fp.get("hardware", [])):
        problem = "cpu, hardware and hosts must be lists of strings"
    elif not (isinstance(fp.get("nodes", []), list) and all(isinstance(n, int) for n in fp.get("nodes", []))):
        problem = "nodes must be a list of node counts"
    else:
        problem = next((f"{field} must map each environment to a list of strings" for field in fingerprint.PER_ENVIRON
                        if not (isinstance(fp.get(field, {}), dict) and all(map(texts, fp.get(field, {}).values())))),
                       None)
    made = fp.get("launches", {}) if isinstance(fp, dict) else {}
    if not problem and not (isinstance(made, dict) and all(
            isinstance(v, list) and all(fingerprint.made_problem(m) is None for m in v) for v in made.values())):
        problem = "launches must map each check to a list of launch counts or rounds x launches, as 5 or 5x1"
    if problem:
        raise ReferenceFileError(f"{path}: fingerprint: {problem}")


def _check_level(path, where, node, depth):
    if not isinstance(node, dict):
        raise ReferenceFileError(f"{path}: {' > '.join(map(str, where))}: expected a mapping")
    for key, value in node.items():
        here = where + [key]
        if depth > 0:
            _check_level(path, here, value, depth - 1)
        else:
            _check_tuple(path, here, value)


def _check_tuple(path, where, value):
    name = " > ".join(map(str, where))
    if isinstance(value, list) and value and value[0] == "$xfail":
        if len(value) != 3:
            raise ReferenceFileError(f"{path}: {name}: expected ['$xfail', reason, [value, lower, upper, unit]]")
        value = value[2]
    ok = (isinstance(value, list) and len(value) in (3, 4) and is_number(value[0])
          and all(v is None or is_number(v) for v in value[1:3]) and (len(value) == 3 or isinstance(value[3], str)))
    if not ok:
        raise ReferenceFileError(f"{path}: {name}: expected [value, lower, upper, unit], got {value!r}")
    ref, lower, upper = value[:3]
    if (lower is not None and lower > 0) or (upper is not None and upper < 0):
        raise ReferenceFileError(f"{path}: {name}: thresholds must be a fraction <= 0 and one >= 0, got {lower}, {upper}")


# ---- references from a run -------------------------------------------------------------

def read_report(path) -> dict:
    """A ReFrame run report (--report-file), or one line saying why it is not one."""
    report = read_json(path, ReferenceFileError)
    if not isinstance(report, dict) or "runs" not in report or "session_info" not in report:
        raise ReferenceFileError(f"{path}: not a ReFrame run report (no 'runs' or 'session_info')")
    problem = report_problem(report)
    if problem:
        raise ReferenceFileError(f"{path}: not a ReFrame run report: field {problem}")
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


# the verdict of a case with a launch disturbed through every try (checks.JitterbenchCheck.undisturbed):
# ReFrame fails it, and nothing of it is judged, either way
INCONCLUSIVE = "inconclusive"


def outcome(case):
    """A report case's verdict: its result (pass, fail, skip, ...), or inconclusive where it failed
    naming a launch disturbed through every try."""
    inconclusive = case["result"] == "fail" and f"{INCONCLUSIVE}: " in str(case.get("fail_reason") or "")
    return INCONCLUSIVE if inconclusive else case["result"]


# the parameter ReFrame's --repeat gives each round of a case (harness.checks.Rounds), in its name
ROUND = ".repeat_no"
_ROUND_IN_NAME = re.compile(rf" %{re.escape(ROUND)}=(\d+)")


def case_name(display_name):
    """A test case's name without its round: the name of the case its rounds make."""
    return _ROUND_IN_NAME.sub("", display_name)


def holds_the_figure(case):
    """Whether a case's values are its figure: not an earlier round of a case run in rounds, whose
    values are its own round's (harness.checks.Rounds: rounds_pooled below rounds)."""
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
    rounds (harness.checks.Rounds) as one: a round that failed, else one that was inconclusive, else
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
    """The nodes a run's node findings name (harness.checks: a case past its node bounds, inconclusive)."""
    return {f.get("node") for c in cases if outcome(c) == INCONCLUSIVE
            for f in (_finding(c).get("past") or {}).values() if isinstance(f, dict)} - {None, "?"}


def node_first(cases) -> list:
    """Node first over a whole run (docs/references.md, "Node first"): a node is one thing, so where
    some case of the run found its node past the node bounds, no failure of a case that ran on that
    node is the network's: such a case is inconclusive, naming the node, as the cases that found it
    are.  Each check judges its own node figures against its own case's bounds, the wider of the
    partition's pool and its own, and a case whose probe moves with its own runs (Intel MPI's
    all-to-all under a CPU quota: probe 1.30x against its own 1.30x, its exchange 4.5x) is judged
    and failed while twenty others of the run name the node.  A clean run finds its node at the
    node figures' stated rate, and only a failure in such a run is held back: never a pass."""
    moved = moved_nodes(cases)
    out = []
    for c in cases:
        on = sorted(moved & set(str(c.get("node_list") or "").split(",")))
        if c["result"] == "fail" and outcome(c) != INCONCLUSIVE and on:
            finding = {"past": {}, "within": {}, **_finding(c), "moved": on}
            c = {**c, "node_finding": json.dumps(finding),
                 "fail_reason": f"{INCONCLUSIVE}: node first: {', '.join(on)} moved in this run (other cases found it "
                                f"past their node bounds): this case's failure is not judged ({c.get('fail_reason')})"}
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


def _measured(report_paths):
    """(path, session_info, test case) of every case with performance values."""
    for path in report_paths:
        info, cases = report_cases(path)
        yield from ((path, info, case) for case in cases if case.get("perfvalues"))


def parameters(case):
    """The test's parameters in declaration order, from its display name
    ('HaloCheck %nodes=1 %pattern=sendrecv'), with their typed values."""
    return {name: case[name] for name in parameter_names(case["display_name"])}


def key_of(case) -> tuple:
    """Where a case's values sit in a reference document, below its check: partition, environment
    and its parameters' values in the check's $index order."""
    return f"{case['system']}:{case['partition']}", case["environ"], *parameters(case).values()


def parameter_names(display_name):
    return re.findall(r"%(\w+)=", display_name)


def index_of(case):
    return ["$partition", "$environ", *parameters(case)]


# Which way is better, by unit, for the variables whose record declares no quantities (OSU,
# perftest, the papers' findings): references bound only the worse side, so that a machine
# faster than its baseline never fails acceptance for it.  A unit not here has no worse side
# known, and its variables are not bounded.
BETTER = {"us": "lower", "MAX/AVG": "lower", "MB/s": "higher"}


@dataclass(frozen=True)
class Role:
    """What the bound rule does with one performance variable: its better side and whether it is
    asserted (else why not)."""
    better: str | None
    asserted: bool
    why_not: str = ""


def role_of(check, variable, unit, calls=None) -> Role:
    """The record's say on one variable (sweeps.quantity), else by unit (BETTER): a maximum over
    calls is reported, never bounded; a percentile over calls is asserted only where the calls
    hold a distribution-free bound for it (bounds.calls_needed); calls 0 or unknown: not."""
    if variable in fingerprint.NODE_FIGURES:  # the node's own figures: a slower or farther node is worse
        return Role("lower", True)
    quantity = sweeps.quantity(check, variable)
    better = quantity.better if quantity else BETTER.get(unit)
    if quantity is not None and quantity.role != benchmarks.ASSERTED:
        return Role(better, False, f"{quantity.role}, never bounded")
    if better is None:
        return Role(None, False, f"no better side known for unit {unit!r}")
    p = bounds.percentile_of(quantity.name if quantity else sweeps.unfold(check, variable)[0])
    if p is not None and not (calls and 1 - p ** calls >= bounds.PERCENTILE_CONFIDENCE):
        return Role(better, False, f"a percentile p{p * 100:g} over {calls or 'an unknown number of'} calls: "
                                   f"needs {bounds.calls_needed(p)} calls")
    return Role(better, True)


def asserted_only(doc, check, calls=None):
    """doc's entry of check as a reference file of its own, every variable the rules do not
    assert in a run of calls timed calls (role_of: a maximum over calls; a percentile that so
    few calls cannot bound) left unbounded, ReFrame's [value, null, null, unit]; and the names of
    the variables so left.  A check runs against it, so that a file made by another rule, or a
    run of fewer calls than its references', never asserts what the rules do not."""
    entry = doc.get(check)
    if not isinstance(entry, dict):
        return {"provenance": doc["provenance"]}, []
    released = set()

    def walk(node, depth):
        if depth:
            return {k: walk(v, depth - 1) for k, v in node.items()}
        out = {}
        for var, value in node.items():
            tuple_ = value[2] if value and value[0] == "$xfail" else value
            unit = tuple_[3] if len(tuple_) > 3 else ""
            if (tuple_[1] is not None or tuple_[2] is not None) and not role_of(check, var, unit, calls).asserted:
                released.add(var)
                tuple_ = [tuple_[0], None, None, *tuple_[3:]]
                value = [*value[:2], tuple_] if value[0] == "$xfail" else tuple_
            out[var] = value
        return out

    index = entry["$index"]
    filtered = {"$index": index, **walk({k: v for k, v in entry.items() if k != "$index"}, len(index))}
    return {"provenance": doc["provenance"], check: filtered}, sorted(released)


def detectable_slowdown(entry):
    """The minimum detectable slowdown of a reference tuple [value, lower, upper, unit]: 1 + upper
    where higher is worse, 1 / (1 + lower) where lower is; None for an unbounded variable."""
    lower, upper = entry[1:3]
    if upper is not None:
        return 1 + upper
    return 1 / (1 + lower) if lower is not None and lower > -1 else None


def _distinct(report_paths):
    """The reports, each read once; the same run given twice (same session uuid or the same
    bytes) is refused: a repeat counted twice would make the bounds claim more than they hold."""
    seen = {}
    for path in report_paths:
        text = read_text(path, ReferenceFileError)
        info = read_report(path)["session_info"]
        for key in (("uuid", info.get("uuid")), ("content", hashlib.sha256(text.encode()).hexdigest())):
            if key[1] is not None and key in seen:
                raise ReferenceFileError(f"{path}: the same run as {seen[key]} (same session {key[0]}): each "
                                         f"repeat must be a run of its own")
            seen.setdefault(key, path)
    return report_paths


def _no_paths(command):
    """A command line without machine paths: an absolute path is its last part."""
    return " ".join(os.path.basename(word) if word.startswith("/") else word for word in command.split())


def commit() -> str:
    """The jitterbench commit that builds the bounds (git, where the checkout is a clone)."""
    try:
        out = subprocess.run(["git", "-C", str(checkout.root()), "rev-parse", "--short=12",
                              "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError, checkout.CheckoutError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def _significant(x, digits=6):
    return float(f"{x:.{digits}g}")


def pool_of(check, key, unit, launches=1, variable=""):
    """The variables whose leave-one-out scores are pooled into one minimum detectable slowdown:
    every timed variable (times, rates, their ratios) of one MPI on one partition, across checks;
    sizes (the eager limits, in bytes) apart, percentiles over calls apart from the central figures,
    and apart by the launches each value is the median of.  The run is the unit of disturbance: a
    moment the cores are taken slows every check of that run under the MPI, so the MPI's checks
    together estimate the tail.  Pooled per check instead, a check whose five runs happened to be
    steady got a tight bound that 8 of 20 later clean runs broke (docs/references.md).  A median of
    5 launches spreads less than one launch does: pooled with a check of one launch (the noise
    probe), Intel MPI's checks of five could detect 2.19x, apart 1.83x.  A percentile over calls is
    a tail of each launch, and spreads from run to run as no mean does: in the first baseline in
    rounds the p99s over 100 calls moved up to 3.6x against the other runs, the central figures at
    most 1.72x (docs/references.md, Launches).  build also pools each check's scores of a pool
    alone and bounds each variable at the larger of the two: under the MPI's pool alone, Open MPI's
    1 KiB torus and all-to-all figures, which move with the run more than its other checks, failed
    5 of 32 clean runs at a stated 1 %; each check's pool alone, 9 of 150 in splits of recorded runs.
    Each node figure (fingerprint.NODE_FIGURES) is a pool of its own over every case of the partition,
    under every MPI: the CPU's speed and its cores' distance are the node's, the same quantity in each
    case, and spread unlike the network's times; build bounds each at the larger of that pool's and its
    check's own under its MPI, as the network's.  Pooled alone, the probe's bound (1.16x over ten clean
    runs of the CI machine type) was too tight for Intel MPI's ping-pong, whose probe moves with its
    runs: 4 of 45 judged runs had a node finding there (docs/references.md, Node first)."""
    if unit == "B":
        return key[0], key[1], "size"
    if variable in fingerprint.NODE_FIGURES:  # one quantity of the node in every case, whatever its MPI
        key, kind = (key[0], NODE_POOL), f"node figure {variable}"
    else:
        kind = "percentile over calls" if variable and _is_percentile(check, variable) else "time"
    return key[0], key[1], kind if launches == 1 else f"{kind}, median of {fingerprint.described(launches)}"


# the environment of a node figure's pool (pool_of): every MPI's cases of the partition
NODE_POOL = "every environment"


def _is_percentile(check, variable):
    quantity = sweeps.quantity(check, variable)
    return bounds.percentile_of(quantity.name if quantity else sweeps.unfold(check, variable)[0]) is not None


def build(report_paths, system, measured_by, false_alarm_rate=bounds.FALSE_ALARM_RATE,
          max_detectable=bounds.MAX_DETECTABLE, attempts=bounds.ATTEMPTS):
    """A reference document from k >= 5 runs of one system (docs/references.md: the rule).

    Per variant and asserted variable: the value is the median of the repeats and the worse
    side is bounded at the median times the larger minimum detectable slowdown (bounds) of its
    pool (pool_of) and of its check's variables in that pool, with
    the suite's false-alarm rate per attempt split over the asserted variables (Bonferroni: every
    bound is checked by ReFrame alone, so each takes rate / m).  A run's verdict takes attempts
    (1 or 2): a check that fails under an MPI is judged again at once (ci/main.sh) and fails only
    if it fails again, so with independent attempts the rate per attempt is the rate's root.  A
    variable not asserted, or whose minimum detectable slowdown is above max_detectable, gets
    [median, null, null, unit] (never fails); the latter are listed in the top-level
    `not_assertable` with it.
    """
    if not (0 < false_alarm_rate < 1):
        raise ReferenceFileError(f"the false-alarm rate must be between 0 and 1, got {false_alarm_rate}")
    if attempts not in (1, 2):
        raise ReferenceFileError(f"a verdict takes 1 or 2 attempts (the main job judges a failed check once "
                                 f"more), got {attempts}")
    per_attempt = false_alarm_rate ** (1 / attempts)
    if not max_detectable > 1:
        raise ReferenceFileError(f"the largest detectable slowdown must be above 1, got {max_detectable}")
    report_paths = list(_distinct(report_paths))  # each read and checked first: a bad one is named before counting
    if len(report_paths) < bounds.MIN_REPEATS:
        raise ReferenceFileError(f"{len(report_paths)} run report(s) given: a bound needs at least "
                                 f"{bounds.MIN_REPEATS} repeats, each a ReFrame run of its own")
    samples, origins, units, index, calls, facts, cases = {}, {}, {}, {}, {}, {k: set() for k in (
        "versions", "dates", "commands", "hosts", "modes", "calls")}, []
    for path, info, case in _measured(report_paths):
        if case.get("system") != system:
            continue
        cases.append(case)
        try:
            facts["dates"].add(datetime.fromtimestamp(info["time_start_unix"], timezone.utc).date().isoformat())
        except (KeyError, TypeError, ValueError, OverflowError, OSError):
            raise ReferenceFileError(f"{path}: field session_info.time_start_unix is not a time: "
                                     f"{info.get('time_start_unix')!r}") from None
        command = str(info.get("cmdline", ""))
        facts["versions"].add(str(info.get("version", "?")))
        facts["commands"].add(_no_paths(command))
        facts["hosts"].add(str(info.get("hostname", "?")))
        mode = re.search(r"--mode[= ](\S+)", command)
        facts["modes"].add(mode[1] if mode else "(none)")
        check = case["display_name"].split()[0]
        index.setdefault(check, index_of(case))
        key = key_of(case)
        case_calls = case.get("calls") if isinstance(case.get("calls"), int) else None
        if case_calls:
            facts["calls"].add(case_calls)
        for name, pv in case["perfvalues"].items():
            var = name.split(":")[-1]
            if pv[0] is not None:
                samples.setdefault((check, key, var), []).append(pv[0])
                origins.setdefault((check, key, var), []).append(report_paths.index(path))
                units[(check, var)] = pv[4]
                calls[(check, key, var)] = min(calls.get((check, key, var), case_calls or 0), case_calls or 0)
    if not samples:
        raise ReferenceFileError(f"no performance values for system '{system}' in "
                                 f"{', '.join(map(str, report_paths))}")

    roles, not_assertable = {}, []
    for (check, key, var), values in samples.items():
        role = role_of(check, var, units[(check, var)], calls[(check, key, var)])
        if role.asserted and len(values) < bounds.MIN_REPEATS:
            role = Role(role.better, False, f"{len(values)} repeat(s), fewer than {bounds.MIN_REPEATS}")
            not_assertable.append((check, key, var, None, role.why_not))
        elif role.asserted and min(values) <= 0:
            role = Role(role.better, False, "a value <= 0: no log scale")
            not_assertable.append((check, key, var, None, role.why_not))
        roles[(check, key, var)] = role
    # The node figures are judged first and once (a node finding is no failure to judge again): the
    # run's rate over them alone; the network's figures take the rate an attempt over theirs.
    node = [k for k, r in roles.items() if r.asserted and k[2] in fingerprint.NODE_FIGURES]
    asserted = [k for k, r in roles.items() if r.asserted and k[2] not in fingerprint.NODE_FIGURES]
    rate = per_attempt / max(1, len(asserted))
    node_rate = false_alarm_rate / max(1, len(node))
    groups = {}  # the pool of each variable's scores (pool_of) -> its variables' keys
    machine = fingerprint.of_cases(system, cases, facts["hosts"])
    made = machine["launches"]
    mixed = {check: counts for check, counts in made.items() if len(counts) > 1}
    if mixed:
        check, counts = sorted(mixed.items())[0]
        raise ReferenceFileError(f"the runs' {check} cases were medians of {' and of '.join(map(fingerprint.described, counts))}: "
                                 f"a bound takes runs made one way (JB_ROUNDS, JB_LAUNCHES), as a judged run will be")
    for check, key, var in asserted + node:
        pool = pool_of(check, key, units[(check, var)], made[check][0], var)
        groups.setdefault(pool, []).append((check, key, var))
        # and each check's own (a node figure's under its MPI: a case whose probe moves with its MPI's runs)
        own = (*pool[:1], key[1], *pool[2:]) if var in fingerprint.NODE_FIGURES else pool
        groups.setdefault((*own, check), []).append((check, key, var))
    slowdown, pools = {}, {}
    for (partition, environ, kind, *check), members in sorted(groups.items()):
        scores = np.concatenate([bounds.loo_scores(bounds.worse_logs(samples[m], roles[m].better)[None, :])
                                 for m in members])
        its_rate = node_rate if members[0][2] in fingerprint.NODE_FIGURES else rate
        try:  # a rate so small that its bound is beyond a float: said of the rate, not of the file it would be in
            with np.errstate(all="raise"):
                mds = float(bounds.detectable_slowdown(max(0.0, bounds.threshold(scores, its_rate))))
        except (OverflowError, FloatingPointError, ZeroDivisionError):
            mds = math.inf
        if not math.isfinite(mds):
            raise ReferenceFileError(f"a false-alarm rate of {false_alarm_rate:.3g} ({rate:.3g} an attempt for each of the "
                                     f"{len(asserted)} asserted variables) puts the bound beyond any number with "
                                     f"{scores.size} scores: give a larger --false-alarm-rate")
        # each variable's bound is the larger of its environment's and its check's (the rate holds under either)
        slowdown.update({m: max(mds, slowdown.get(m, 0.0)) for m in members})
        if not check:
            pools[partition, environ, kind] = {"partition": partition, "environ": environ, "variables": kind,
                                               "asserted": len(members), "detectable_slowdown": _significant(mds, 4),
                                               "checks": {}}
        else:
            of_node = kind.startswith("node figure")  # a node figure's pool holds every MPI: its checks per MPI
            pools[partition, NODE_POOL if of_node else environ, kind]["checks"][
                f"{check[0]} {environ}" if of_node else check[0]] = _significant(mds, 4)
    for pool in pools.values():
        members = groups[pool["partition"], pool["environ"], pool["variables"]]
        pool["bounded"] = sum(slowdown[m] <= max_detectable for m in members)

    k = sorted({len(v) for v in samples.values()})
    calls_used = sorted(facts["calls"])
    doc = {"provenance": {
        "system": system,
        "source": "measured",
        "measured_by": measured_by,
        "date": max(facts["dates"]),
        "method": (f"{MADE_BY}: per variable the median of k repeats; the worse side bounded at the "
                   f"median times the minimum detectable slowdown, each repeat a case's median over its launches "
                   f"(fingerprint: launches), a one-sided prediction bound for one new run "
                   f"on the log scale at the suite's false-alarm rate {per_attempt:.3g} an attempt split over "
                   f"{len(asserted)} asserted variables (Bonferroni), from the pooled leave-one-out scores of "
                   f"the timed variables of each environment and of each check, the larger; "
                   + ("a check failed under an MPI is judged again and fails only if it fails again (ci/main.sh), "
                      f"so {false_alarm_rate:g} a run (docs/references.md)" if attempts == 2 else
                      "a run is one attempt (docs/references.md)")),
        "repeats": k[0] if len(k) == 1 else f"{k[0]}-{k[-1]}",
        "false_alarm_rate": false_alarm_rate,  # a run's, of its verdict over all its attempts
        "attempts": attempts,
        "false_alarm_rate_per_attempt": _significant(per_attempt, 4),
        "asserted": len(asserted),  # m, the rate's divisor: those the rules assert, before the noise limit
        "max_detectable": max_detectable,
        "jitterbench_commit": commit(),
        "reframe": ", ".join(sorted(facts["versions"])),
        "modes": sorted(facts["modes"]),
        "calls": calls_used if calls_used else "the benchmarks' defaults",
        "commands": sorted(facts["commands"]),
        # per pool of scores (pool_of): its asserted variables, their minimum detectable slowdown, each
        # check's own (its variables' scores alone), and how many of them, each bounded at the larger
        # of the two, are within max_detectable (bounded; the others not assertable here)
        "pools": list(pools.values()),
        "runs": run_factors(report_paths, samples, origins, {m: roles[m] for m in asserted}),
    }, "fingerprint": machine}
    if node:
        doc["provenance"]["node_figures"] = {
            "asserted": len(node), "false_alarm_rate": false_alarm_rate, "attempts": 1,
            "rule": ("judged before the network's: a case whose node figure is past its bound is inconclusive, "
                     "its other figures unjudged (docs/references.md, Node first); bounded by the same rule at "
                     f"the run's rate {false_alarm_rate:g} split over the {len(node)} node figures, one attempt")}
    for (check, key, var), values in sorted(samples.items(), key=lambda kv: repr(kv[0])):
        node = doc.setdefault(check, {"$index": index[check]})
        for part in key:
            node = node.setdefault(part, {})
        role = roles[(check, key, var)]
        value = _significant(float(np.exp(np.median(np.log(values)))) if min(values) > 0 else statistics.median(values))
        lower = upper = None
        mds = slowdown.get((check, key, var))
        if mds is not None and mds > max_detectable:
            not_assertable.append((check, key, var, mds, f"noise: the bound would be {mds:.3g} x the median, above "
                                                         f"{max_detectable:g}"))
        elif mds is not None and role.better == "lower":
            upper = math.ceil((mds - 1) * 1e4) / 1e4
        elif mds is not None:
            lower = math.floor((1 / mds - 1) * 1e4) / 1e4
        node[var] = [value, lower, upper, units[(check, var)]]
        doc["provenance"]["bounded"] = doc["provenance"].get("bounded", 0) + (lower is not None or upper is not None)
    if not_assertable:
        doc["not_assertable"] = [{"check": check, "at": list(key), "variable": var,
                                  "detectable_slowdown": None if mds is None else _significant(mds, 4), "reason": why}
                                 for check, key, var, mds, why in sorted(not_assertable, key=repr)]
    return doc


def central_bounded(doc) -> dict:
    """{environment: the share of its central figures (times, not sizes or the node's) that a
    reference file's rule bounded within its largest detectable slowdown}, over its partitions."""
    counts = {}
    for pool in doc["provenance"]["pools"]:
        if pool["variables"].startswith("time") and pool["asserted"]:
            bounded, asserted = counts.get(pool["environ"], (0, 0))
            counts[pool["environ"]] = (bounded + pool["bounded"], asserted + pool["asserted"])
    return {environ: bounded / asserted for environ, (bounded, asserted) in counts.items()}


def run_factors(report_paths, samples, origins, asserted) -> list:
    """Per run and environment, how the run's asserted figures sat against the other runs': the
    median over its variables of their leave-one-out scores (each its value against the median of
    the other runs', turned so that above 1 is worse), as a factor.  Where the noise is the run's
    (the machine slower for minutes, every case with it), one run's factor stands apart and sets
    the bound; where it is the variables' own, every run's is near 1 (docs/references.md).  Beside
    them, probe: the run's compute probe against the other runs' (probe_of), where they took it: a
    run whose figures and CPU were slower together was the machine's."""
    scores = {}
    for m, role in asserted.items():
        for run, score in zip(origins[m], bounds.loo_scores(bounds.worse_logs(samples[m], role.better)[None, :])):
            scores.setdefault(run, {}).setdefault(m[1][1], []).append(score)  # m[1]: partition, environ, ...
    probes = [probe_of(path) for path in report_paths]
    return [{"report": name, "factors": {environ: _significant(float(np.exp(np.median(s))), 3)
                                                               for environ, s in sorted(scores.get(run, {}).items())},
             **({"probe": _significant(probe / float(np.median(others)), 3)}
                if probe and (others := [p for i, p in enumerate(probes) if p and i != run]) else {})}
            for run, (name, probe) in enumerate(zip(_names(report_paths), probes))]


def _names(paths) -> list:
    """Each run report's file name, or where two share one (run-1/report.json, run-2/report.json: as
    verdict_rates.py leaves them) its path from the folder the reports have in common."""
    names = [os.path.basename(str(p)) for p in paths]
    if len(set(names)) == len(names):
        return names
    common = os.path.commonpath([os.path.abspath(str(p)) for p in paths])
    return [os.path.relpath(os.path.abspath(str(p)), common) for p in paths]


_PROBE = re.compile(r"\bprobe_us=([0-9.]+)")


def probe_of(report_path):
    """The run's machine speed: the median over its cases' launches of the compute probe each took
    before it ran (the '# load:' line's before_probe_us, src/core/load.c, logged as load_before), in
    us; None for a run whose benchmarks did not take it."""
    taken = [float(v) for _, _, case in _measured([report_path]) for v in _PROBE.findall(str(case.get("load_before", "")))]
    return statistics.median(taken) if taken else None


def system_of(report_paths) -> str:
    """The one system whose cases the run reports hold (for --system's default)."""
    systems = sorted({case["system"] for _, _, case in _measured(report_paths)})
    if len(systems) != 1:
        raise ReferenceFileError(f"the reports hold {'no measured case' if not systems else 'the systems ' + ', '.join(systems)}"
                                 f": name the one the references are for with --system")
    return systems[0]


def check_machine(paths, system=None):
    """Whether a machine matches reference files' fingerprints: (matched, one line per file).
    paths: reference files (.yaml) and run reports; the machine is the reports' (each measured
    case's CPU, MPI library and transport under its environment), else this host's CPU; the
    files are those given, else the ones the reports' system is judged by (checkout.reference_files)."""
    files_given = [p for p in paths if str(p).endswith((".yaml", ".yml"))]
    reports = [p for p in paths if p not in files_given]
    cases = [case for _, _, case in _measured(reports)]
    if reports and not cases:
        raise ReferenceFileError(f"{', '.join(map(str, reports))}: no measured case to take the machine from")
    system = system or (system_of(reports) if reports else None)
    cases = [c for c in cases if system is None or c["system"] == system]
    facts = [({**{f: c.get(f) for f in fingerprint.MATCHED}, "check": c["display_name"].split()[0],
               "launches": fingerprint.launches_of(c)}, c["environ"]) for c in cases] or \
        [({"cpu": fingerprint.this_host()}, None)]
    if not files_given and not system:
        raise ReferenceFileError("name a reference file, or a run report whose system's files to check")
    candidates = files_given or checkout.reference_files(system)
    if not candidates:
        return False, [f"no reference file for system '{system}' in {' or '.join(map(str, checkout.reference_dirs()))}"]
    matched, lines = False, []
    for path in candidates:
        doc = load(path)
        fp = doc.get("fingerprint")
        differ = sorted({d for f, environ in facts for d in fingerprint.differences(fp, f, environ)})
        matched = matched or not differ
        what = "the run's machine" if reports else f"this host (cpu '{facts[0][0]['cpu']}')"
        lacking = fingerprint.lacks(fp, doc)
        lines.append(f"{path}: not of {what}: {'; '.join(differ)}" if differ else
                     f"{path}: {what} matches" + ("" if fp else " (the file names no machine)")
                     + (f"; the file lacks {' and '.join(lacking)}: remake it with `jitterbench reference` "
                        f"(docs/references.md)" if lacking else ""))
    return matched, lines


# the attributes of a test ReFrame's $index names with a '$' (reframe/core/pipeline.py,
# RegressionTestDict: $system, $partition, $environ, $processor.<attr>, $dev.<devtype>.<attr>)
INDEX_SPECIALS = ("$system", "$partition", "$environ")


def _near(word, known) -> str:
    import difflib  # noqa: PLC0415
    found = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return f" (did you mean '{found[0]}'?)" if found else ""


def _admits(key, names) -> bool:
    """Whether a level's key stands for a name ReFrame would look up: the name itself, or a
    pattern that matches one (a key missing from a level is tried as an anchored regular
    expression, RegressionTestDict)."""
    try:
        return str(key) in names or any(re.fullmatch(str(key), n) for n in names)
    except re.error:
        return False


def lint(path, system=None) -> list:
    """A reference file's mistakes that ReFrame would meet only in the run it judges, hours later,
    as a reference never found or a variable never bounded: one line each, naming the entry.
    Against the checks' records, a check's name, its $index's special names, its variables
    and their units; against the system's ReFrame entry (systems/), its partitions and
    environments.  A paper's file (stated values only) has no entry to check."""
    from .harness import systems  # noqa: PLC0415  the systems, as ReFrame's configuration loads them
    doc = load(path)
    system = system or doc["provenance"]["system"]
    problems = []
    quiet = []  # a site file that does not load is named by ReFrame's configuration, not here again
    entries = {s.SYSTEM["name"]: s for s in systems.load_systems(say=quiet.append)}
    entry = entries.get(system)
    if entry is None and any(k not in SECTIONS for k in doc):  # a paper's stated values need no system
        problems.append(f"{path}: system '{system}' is no system of systems/ (known: {', '.join(sorted(entries))})")
    partitions = {f"{system}:{p['name']}": p["environs"] for p in entry.SYSTEM["partitions"]} if entry else {}
    checks = [d.check for d in benchmarks.ALL]
    for check, node in doc.items():
        if check in SECTIONS:
            continue
        where = f"{path}: {check}"
        if check not in checks:
            problems.append(f"{where}: no check of that name{_near(check, checks)}")
            continue
        index = node["$index"]
        bad = [n for n in index if str(n).startswith("$") and n not in INDEX_SPECIALS
               and not str(n).startswith(("$processor.", "$dev."))]
        for name in bad:
            problems.append(f"{where}: $index names '{name}', which ReFrame does not know{_near(name, INDEX_SPECIALS)}")
        if bad:
            continue
        record = benchmarks.by_check(check)

        def walk(level, keys, depth, partition=None):
            for key, value in level.items():
                here = [*keys, str(key)]
                name = index[depth] if depth < len(index) else None
                if name == "$partition" and entry and not _admits(key, partitions):
                    problems.append(f"{where} > {' > '.join(here)}: no partition of system '{system}' "
                                    f"(known: {', '.join(partitions)}){_near(key, partitions)}")
                    continue
                if name == "$environ":
                    environs = partitions.get(partition) if partition else sorted({e for es in partitions.values()
                                                                                   for e in es})
                    if environs is not None and entry and not _admits(key, environs):
                        problems.append(f"{where} > {' > '.join(here)}: no environment of "
                                        f"{partition or system} (known: {', '.join(environs)}){_near(key, environs)}")
                        continue
                if depth < len(index):
                    walk(value, here, depth + 1, str(key) if name == "$partition" and key in partitions else partition)
                elif str(key) in fingerprint.NODE_FIGURES:
                    unit = (value[2] if value[0] == "$xfail" else value)[3:4]
                    if unit and unit[0] != fingerprint.NODE_FIGURES[str(key)][1]:
                        problems.append(f"{where} > {' > '.join(here)}: unit '{unit[0]}', but the node figure {key} "
                                        f"is in '{fingerprint.NODE_FIGURES[str(key)][1]}'")
                elif record is not None and record.quantities:
                    quantity = sweeps.quantity(check, str(key))
                    unit = (value[2] if value[0] == "$xfail" else value)[3:4]
                    word = sweeps.unfold(check, str(key))[1].get(record.swept)
                    words = next((p.values for p in record.parameters if record.swept and p.name == record.swept + "s"
                                  and isinstance(p.values, tuple)), None)
                    if quantity is None:
                        problems.append(f"{where} > {' > '.join(keys)}: no variable '{key}' of {check} "
                                        f"(its quantities: {', '.join(q.name for q in record.quantities)})")
                    elif word is not None and words and word not in words:
                        problems.append(f"{where} > {' > '.join(keys)}: variable '{key}': no {record.swept} "
                                        f"'{word}' (known: {', '.join(words)}){_near(word, words)}")
                    elif unit and unit[0] != quantity.unit:
                        problems.append(f"{where} > {' > '.join(here)}: unit '{unit[0]}', but {check} reports "
                                        f"{quantity.name} in '{quantity.unit}'")

        walk({k: v for k, v in node.items() if k != "$index"}, [], 0)
    return problems


HEAD = "# References for system '"
# how every file dump writes begins, its first line whole: a file that merely holds the words
# further in is the user's
OWN = re.compile(re.escape(HEAD) + r"[^'\n]*'\.\n")
# and how it ends: the checksum of everything above this line, so that a file is known for the
# tool's by its whole content, not by a header line anyone may begin their notes with (issue 61)
CHECKSUM = re.compile(r"# jitterbench sha256:([0-9a-f]{64})\n\Z")
MADE_BY = "`jitterbench reference`"  # how the provenance's method of every file build makes begins


def dump(doc) -> str:
    text = (f"{HEAD}{doc['provenance']['system']}'.\n"
            "# Read by ReFrame through $ref; format in jitterbench/references.py.\n"
            + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120))
    return text + f"# jitterbench sha256:{hashlib.sha256(text.encode()).hexdigest()}\n"


def written_by_jitterbench(path) -> bool:
    """Whether the file at path is, whole, one `jitterbench reference` wrote (files.write_text's own):
    it ends with the checksum of all above it; or, from a version before the checksum line, it has
    none, begins with the header line and is a reference file whose provenance says the command made
    it.  A file edited since it was written is the user's: replaced only with --force."""
    try:
        text = read_text(path, ReferenceFileError)
    except ReferenceFileError:
        return False
    body, sep, last = text[:-1].rpartition("\n")
    found = CHECKSUM.match(last + "\n") if sep and text.endswith("\n") else None
    if found:
        return hashlib.sha256((body + "\n").encode()).hexdigest() == found.group(1)
    if "# jitterbench sha256:" in text or not OWN.match(text):  # a checksum line moved or mangled: edited
        return False
    try:
        method = loads(text, path)["provenance"]["method"]
    except ReferenceFileError:
        return False
    return isinstance(method, str) and method.startswith(MADE_BY)
