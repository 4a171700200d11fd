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

This module reads a file, checked before ReFrame reads it, so that a malformed one is one clear
line naming the entry, and writes one (dump) with the checksum that marks it as the tool's.
The files are made from runs by reference_build.py, checked against the checks and systems by
reference_lint.py, and matched to a machine by reference_machine.py.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import re

import yaml

from . import benchmarks, fingerprint
from .files import is_number, loads_yaml, read_text

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


@functools.lru_cache(maxsize=64)
def _checked(text, path) -> dict:
    # Every test case reads its system's files in its setup: parsing local.yaml takes 0.17 s, more
    # than a case's launch, a copy of the parsed one 2 ms.  Keyed by the text, not by the file's
    # time, so a file rewritten between cases is read again.  Room for more files than a session
    # reads: the unit tests read the committed ones (vcluster.yaml: 1.3 s) among dozens of their own.
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


def detectable_slowdown(entry):
    """The minimum detectable slowdown of a reference tuple [value, lower, upper, unit]: 1 + upper
    where higher is worse, 1 / (1 + lower) where lower is; None for an unbounded variable."""
    lower, upper = entry[1:3]
    if upper is not None:
        return 1 + upper
    return 1 / (1 + lower) if lower is not None and lower > -1 else None


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
