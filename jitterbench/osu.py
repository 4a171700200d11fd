"""Parsing of OSU Micro-Benchmarks output (7.x): one table of numbers per run."""
from __future__ import annotations

import os
import re


def program_path(prefix: str, environ: str, folder: str, program: str) -> str:
    """Where an OSU install prefix ({environ} standing for the programming environment) holds a
    program: libexec/osu-micro-benchmarks/mpi/<folder>/<program>, folder pt2pt or collective."""
    return os.path.join(prefix.format(environ=environ), "libexec", "osu-micro-benchmarks", "mpi", folder, program)


class OsuParseError(ValueError):
    pass


def column_key(title: str) -> str:
    """'Avg Latency(us)' -> 'avg_latency_us', 'Bandwidth (MB/s)' -> 'bandwidth_mb_s'."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def _number(text):
    try:
        return float(text)
    except ValueError:
        return text  # e.g. the validation column: Pass / Fail


def parse(text: str) -> list:
    """Rows of the result table as dicts keyed by column_key of the header.

    The header is the last '#' line before the first row of numbers; columns
    are separated by two or more blanks, as OSU prints them.
    """
    header, rows = None, []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if not rows:
                header = stripped.lstrip("#").strip()
            continue
        cells = stripped.split()
        if not re.fullmatch(r"[0-9.]+", cells[0]):
            continue
        if header is None:
            raise OsuParseError("a row of numbers comes before any header line")
        titles = re.split(r"\s{2,}", header)
        if len(titles) != len(cells):
            raise OsuParseError(f"row '{stripped}' has {len(cells)} cells, the header {len(titles)}")
        rows.append({column_key(t): _number(c) for t, c in zip(titles, cells)})
    if not rows:
        raise OsuParseError("no result rows found")
    return rows


def value_at(text: str, column: str, size=None) -> float:
    """The value of one column at one message size (or of the single row)."""
    rows = parse(text)
    if size is None:
        if len(rows) != 1:
            raise OsuParseError(f"{len(rows)} rows but no size given")
        return rows[0][column]
    for row in rows:
        if row.get("size") == size:
            return row[column]
    raise OsuParseError(f"no row for size {size}")


def validation_passed(text: str) -> bool:
    """Whether a run with -c (OSU's data validation) printed rows, each with Validation 'Pass'."""
    try:
        rows = parse(text)
    except OsuParseError:
        return False
    return all(row.get("validation") == "Pass" for row in rows)
