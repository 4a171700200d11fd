"""Reading the benchmarks' JSON documents, with one clear error for a bad file."""
from __future__ import annotations

import json
from pathlib import Path

from .files import read_text

TOP_KEYS = ("benchmark", "config", "metadata", "results")


class ResultsError(ValueError):
    """A results file that cannot be used; the message names the file and the problem."""


def load(path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(read_text(path, ResultsError))
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a jitterbench results document (top level is not an object)")
    missing = [k for k in TOP_KEYS if k not in doc]
    if missing:
        raise ResultsError(f"{path}: not a jitterbench results document (missing {', '.join(missing)})")
    if not isinstance(doc["results"], list):
        raise ResultsError(f"{path}: 'results' is not a list")
    return doc


def mpi_name(doc: dict) -> str:
    """A short name of the MPI library from its version string."""
    lib = doc["metadata"].get("mpi_library", "")
    first = lib.splitlines()[0] if lib else "unknown MPI"
    return first.split(",")[0].replace("\t", " ")
