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
        where: 003_1fe4774c09b49939.txt, section 3, Table 1
        metric: alltoall_throughput         # optional: the measured counterpart (METRICS)
        at: {tasks: 2, msg_size: 1048576}   # optional: where that counterpart is taken
        note: ...                           # required with a null value; any caveat
        read_off_figure: true               # only for a value read off a figure

ReFrame ignores it (it reads only the entries named after checks).

This module checks a file before ReFrame reads it, so that a malformed one
is one clear line naming the entry, and builds files from ReFrame runs.
"""
from __future__ import annotations

from datetime import datetime, timezone
import re
import statistics

import yaml

from . import benchmarks
from .files import is_number, loads_yaml, read_json, read_text

PROVENANCE_KEYS = ("system", "source", "date", "method")

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
    problem = _report_problem(report)
    if problem:
        raise ReferenceFileError(f"{path}: not a ReFrame run report: field {problem}")
    return report


CASE_TEXT = ("display_name", "result", "system", "partition", "environ")


def _report_problem(report):
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
    if not isinstance(case.get("outputdir") or "", str):
        return f".outputdir is not a string: {case['outputdir']!r}"
    keep = case.get("keep_files") or []
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        return f".keep_files is not a list of file names: {keep!r}"
    return None


def report_cases(path):
    """(session_info, test cases) of a ReFrame run report: the cases that ran, without the
    fixtures (the build) and the cases skipped before they measured anything.  Every
    command reads run reports through it: table, reference, report and compare."""
    report = read_report(path)
    return report["session_info"], [c for run in report["runs"] for c in run.get("testcases", [])
                                    if not c.get("fixture") and (c["result"] != "skip" or c.get("perfvalues"))]


def _measured(report_paths):
    """(path, session_info, test case) of every case with performance values."""
    for path in report_paths:
        info, cases = report_cases(path)
        yield from ((path, info, case) for case in cases if case.get("perfvalues"))


def parameters(case):
    """The test's parameters in declaration order, from its display name
    ('HaloCheck %nodes=1 %pattern=sendrecv'), with their typed values."""
    return {name: case[name] for name in parameter_names(case["display_name"])}


def parameter_names(display_name):
    return re.findall(r"%(\w+)=", display_name)


def index_of(case):
    return ["$partition", "$environ", *parameters(case)]


# Which way is better, by unit: references bound only the worse side, so that a
# machine faster than its baseline never fails acceptance for it.
BETTER = {"us": "lower", "MAX/AVG": "lower", "MB/s": "higher"}


def build(report_paths, system, measured_by, min_slack=0.5, spread_factor=2.0):
    """A reference document from the test cases of one system in several runs.

    Per test variant and performance variable: the median of the repeats as
    the value, and bounds that admit spread_factor times the measured spread,
    never tighter than min_slack (a fraction of the median) on either side.
    The better side (BETTER, by unit) is left unbounded (null).
    """
    samples, units, index, versions, dates, commands = {}, {}, {}, set(), set(), set()
    for path, info, case in _measured(report_paths):
        if case.get("system") != system:
            continue
        try:
            dates.add(datetime.fromtimestamp(info["time_start_unix"], timezone.utc).date().isoformat())
        except (KeyError, TypeError, ValueError, OverflowError, OSError):
            raise ReferenceFileError(f"{path}: field session_info.time_start_unix is not a time: "
                                     f"{info.get('time_start_unix')!r}") from None
        versions.add(str(info.get("version", "?")))
        commands.add(str(info.get("cmdline", "")))
        check = case["display_name"].split()[0]
        index.setdefault(check, index_of(case))
        key = (f"{case['system']}:{case['partition']}", case["environ"], *parameters(case).values())
        for name, pv in case["perfvalues"].items():
            var = name.split(":")[-1]
            if pv[0] is not None:
                samples.setdefault((check, key, var), []).append(pv[0])
                units[(check, var)] = pv[4]
    if not samples:
        raise ReferenceFileError(f"no performance values for system '{system}' in "
                                 f"{', '.join(map(str, report_paths))}")
    repeats = max(len(v) for v in samples.values())
    doc = {"provenance": {
        "system": system,
        "source": "measured",
        "measured_by": measured_by,
        "date": max(dates),
        "method": (f"`jitterbench reference` over {len(report_paths)} ReFrame run report(s), "
                   f"up to {repeats} repeat(s) per variant, ReFrame {', '.join(sorted(versions))}; "
                   f"value = median of the repeats; bounds = {spread_factor} x the measured spread, "
                   f"at least {min_slack:.0%}, on the worse side only (times: above, bandwidths: below)"),
        "commands": sorted(commands),
    }}
    for (check, key, var), values in sorted(samples.items(), key=lambda kv: repr(kv[0])):
        node = doc.setdefault(check, {"$index": index[check]})
        for k in key:
            node = node.setdefault(k, {})
        med = statistics.median(values)
        below = 1 - min(values) / med if med else 0.0
        above = max(values) / med - 1 if med else 0.0
        lower = round(-min(0.99, max(min_slack, below * spread_factor)), 3)
        upper = round(max(min_slack, above * spread_factor), 3)
        unit = units[(check, var)]
        if BETTER.get(unit) == "lower":
            lower = None
        elif BETTER.get(unit) == "higher":
            upper = None
        node[var] = [round(med, 4), lower, upper, unit]
    return doc


def dump(doc) -> str:
    head = (f"# References for system '{doc['provenance']['system']}'.\n"
            "# Read by ReFrame through $ref; format in jitterbench/references.py.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)
