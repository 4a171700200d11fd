"""Reading the benchmarks' JSON documents, with one clear error for a bad file."""
from __future__ import annotations

from pathlib import Path

from .files import is_number, read_json

TOP_KEYS = ("benchmark", "config", "metadata", "results")

# The fields the Python side reads, by kind.  Others are not checked, so that a benchmark
# may add fields without breaking the reports of its older versions.
METADATA_TEXT = ("benchmark_version", "mpi_library", "finished_utc")
METADATA_COUNTS = ("ranks", "nodes", "tasks_per_node")
RESULT_TEXT = ("placement", "pattern", "mode", "method", "work")
# Whole numbers, never null (the benchmarks write null only for a measured value that is not finite).
RESULT_COUNTS = ("size", "ns_size", "ew_size", "tasks", "nodes", "tasks_per_node", "off_node_per_node", "calls",
                 "cycles", "messages", "total", "pairs", "pairs_off_node", "k", "ndims", "work_bytes")
# Numbers or null: these, and every field named for its unit (*_us, *_mb_s) but the lists below.
RESULT_NUMBERS = ("jitter", "slowdown", "hops")  # hops: a mean, for some patterns
# Lists named for their unit: of numbers (jb-alltoall's exchange times), of [size, us] pairs (jb-eager's probes)
RESULT_LISTS = {"samples_us": 1, "probes_size_us": 2}


class ResultsError(ValueError):
    """A results file that cannot be used; the message names the file and the problem."""


def _numbers_problem(values, width=1):
    """(where in values, what) keeps values from being a list of numbers (width 1) or of
    lists of width numbers, or None."""
    if not isinstance(values, list):
        return "", "is not a list of numbers" if width == 1 else f"is not a list of lists of {width} numbers"
    ok = is_number if width == 1 else lambda v: isinstance(v, list) and len(v) == width and all(map(is_number, v))
    bad = next((i for i, v in enumerate(values) if not ok(v)), None)
    return None if bad is None else (f"[{bad}]", f"is not {'a number' if width == 1 else f'{width} numbers'}: "
                                                 f"{values[bad]!r}")


def _result_field_problem(key, value):
    """(where in the field, what) is wrong with one field of a result, or None (also for a
    field the Python side does not read)."""
    if key in RESULT_COUNTS:
        return _count_problem(value)
    if key in RESULT_LISTS:
        return _numbers_problem(value, RESULT_LISTS[key])
    if key == "series" and not (isinstance(value, dict) and "max_us" in value):
        return "", "is not an object of lists of numbers with max_us"
    if value is None:  # what the benchmarks write for a measured value that is not finite
        return None
    if key in RESULT_TEXT:
        return None if isinstance(value, str) else ("", f"is not a string: {value!r}")
    if key in ("series", "traces"):
        if not isinstance(value, dict):
            return "", "is not an object of lists of numbers"
        for name, values in value.items():
            problem = _numbers_problem(values)
            if problem:
                return f".{name}{problem[0]}", problem[1]
        return None
    if key.endswith("histogram"):
        bins = value.get("bins") if isinstance(value, dict) else None
        ok = isinstance(bins, list) and all(isinstance(b, list) and len(b) == 3 and is_number(b[0]) and is_number(b[2])
                                            and (b[1] is None or is_number(b[1])) for b in bins)
        return None if ok else ("", "is not a histogram ({'bins': [[lower_us, upper_us or null, count], ...]})")
    if key.endswith(("_us", "_mb_s")) or key in RESULT_NUMBERS:
        return None if is_number(value) else ("", f"is not a number: {value!r}")
    return None


def _count_problem(value):
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return "", f"is not a whole number >= 0: {value!r}"


def _check_fields(path, doc):
    """One line naming the file and the field, for the first field of a kind the Python side
    cannot use (a string max_us, a histogram without bins, ...)."""
    def refuse(field, problem):
        raise ResultsError(f"{path}: field {field} {problem}")

    if not isinstance(doc["benchmark"], str):
        refuse("benchmark", f"is not a string: {doc['benchmark']!r}")
    for key in ("config", "metadata"):
        if not isinstance(doc[key], dict):
            refuse(key, "is not an object")
    meta = doc["metadata"]
    for key in METADATA_TEXT:
        if meta.get(key) is not None and not isinstance(meta[key], str):
            refuse(f"metadata.{key}", f"is not a string: {meta[key]!r}")
    for key in METADATA_COUNTS:
        problem = key in meta and _count_problem(meta[key])
        if problem:
            refuse(f"metadata.{key}", problem[1])
    if not isinstance(meta.get("environment", {}), dict):
        refuse("metadata.environment", "is not an object")
    for i, result in enumerate(doc["results"]):
        if not isinstance(result, dict):
            refuse(f"results[{i}]", "is not an object")
        for key, value in result.items():
            problem = _result_field_problem(key, value)
            if problem:
                refuse(f"results[{i}].{key}{problem[0]}", problem[1])


def load(path) -> dict:
    path = Path(path)
    doc = read_json(path, ResultsError)
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a jitterbench results document (top level is not an object)")
    missing = [k for k in TOP_KEYS if k not in doc]
    if missing:
        raise ResultsError(f"{path}: not a jitterbench results document (missing {', '.join(missing)})")
    if not isinstance(doc["results"], list):
        raise ResultsError(f"{path}: field results is not a list")
    _check_fields(path, doc)
    return doc


def mpi_name(doc: dict) -> str:
    """A short name of the MPI library from its version string."""
    lib = doc["metadata"].get("mpi_library", "")
    first = lib.splitlines()[0] if lib else "unknown MPI"
    return first.split(",")[0].replace("\t", " ")
