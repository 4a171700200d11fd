"""The measured samples the simulators draw from: exchange times (a text file, one a line, or a
jb-alltoall document), a node's interrupt trace, per-task times from a merged histogram; each
checked, a problem one line naming the file and the place (SimulationInputError).

All times are in microseconds.
"""
from __future__ import annotations

import array
import math
from pathlib import Path

import numpy as np

from ..files import loads_json, open_input, parse_number, read_text
from .interrupts import TraceInterrupts


class SimulationInputError(ValueError):
    """A sample the simulator cannot use; the message is one line naming the file and the problem."""


def checked_sample(values, where: str) -> np.ndarray:
    """The sample as a 1-D float array; one line naming `where` if it is empty, not numeric,
    negative or not finite (a time cannot be any of these, and one NaN would poison every max)."""
    numeric = isinstance(values, np.ndarray) and values.dtype.kind in "fiu"
    if not numeric and any(isinstance(v, (bool, np.bool_, str, bytes)) for v in np.ravel(np.asarray(values, dtype=object))):
        raise SimulationInputError(f"{where}: holds a value that is not a number")
    try:
        x = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise SimulationInputError(f"{where}: holds a value that is not a number") from None
    if x.size == 0:
        raise SimulationInputError(f"{where}: no samples")
    bad = np.flatnonzero(~np.isfinite(x) | (x < 0))
    if bad.size:
        raise SimulationInputError(f"{where}: sample {bad[0]} is {x[bad[0]]}, not a finite time >= 0")
    return x


SAMPLE_LINE = 4096  # characters: a line longer than this holds no one number (a value is tens)
_READ = 1 << 20


def load_samples(path, entry: int | None = None) -> np.ndarray:
    """Reads a sample of exchange times (us) from a file.

    Either text, one value per line (blank lines and lines starting with # ignored), or the JSON
    document of jb-alltoall, whose results entries may hold a list "samples_us". A document with
    several such entries needs `entry` (an index into results): their samples are usually for
    different message sizes, and pooling them would describe no real exchange.

    Text is read as a stream, a chunk at a time, and refused at its first bad line: a garbage file
    of 300 MB held 2.7 GB before its line 1 was named (issue 61), and one of 1,000 MB ran out of
    memory first.  What it holds beyond the bad line is never read.
    """
    path = Path(path)
    with open_input(path, SimulationInputError) as f:
        try:
            first = f.read(_READ)
        except OSError as e:
            raise SimulationInputError(f"{path}: cannot read: {e.strerror}") from None
        if first.lstrip().startswith(b"{"):  # a jb-alltoall document: JSON is read whole
            return _json_samples(path, read_text(path, SimulationInputError), entry)
        values = array.array("d")
        lineno, pending, chunk = 0, b"", first
        while chunk:
            *lines, pending = (pending + chunk).split(b"\n")  # pending: the line the next chunk goes on with
            for line in lines:
                lineno += 1
                _sample_line(path, lineno, line, values)
            if len(pending) > SAMPLE_LINE:  # no number is that long, and a comment need not be
                raise SimulationInputError(f"{path}: line {lineno + 1}: longer than {SAMPLE_LINE} characters, "
                                           f"not a number: {pending[:40].decode(errors='replace')!r}")
            try:
                chunk = f.read(_READ)
            except OSError as e:
                raise SimulationInputError(f"{path}: cannot read: {e.strerror}") from None
        if pending:
            _sample_line(path, lineno + 1, pending, values)
    return checked_sample(np.frombuffer(values, dtype=float) if values else [], str(path))


def _sample_line(path, lineno: int, raw: bytes, values) -> None:
    """One line of a samples file: appended to values, skipped (blank, a # comment), or refused."""
    try:
        s = raw.decode().strip()
    except UnicodeDecodeError:
        raise SimulationInputError(f"{path}: line {lineno}: not a number: "
                                   f"{raw[:40].decode(errors='replace')!r}") from None
    if not s or s.startswith("#"):
        return
    try:
        v = float(s)
    except ValueError:
        raise SimulationInputError(f"{path}: line {lineno}: not a number: {s[:40]!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise SimulationInputError(f"{path}: line {lineno}: {s[:40]!r} is not a finite time >= 0")
    values.append(v)


def _json_samples(path: Path, text: str, entry: int | None) -> np.ndarray:
    doc = loads_json(text, path, SimulationInputError)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise SimulationInputError(f"{path}: no 'results' list")
    found = [i for i, r in enumerate(results) if isinstance(r, dict) and "samples_us" in r]
    if entry is None:
        if not found:
            raise SimulationInputError(f"{path}: no results entry holds 'samples_us'")
        if len(found) > 1:
            raise SimulationInputError(f"{path}: results entries {found} all hold 'samples_us'; choose one (entry=)")
        entry = found[0]
    elif entry not in found:
        raise SimulationInputError(f"{path}: results[{entry}] does not exist or holds no 'samples_us'")
    values = results[entry]["samples_us"]
    if not isinstance(values, list):
        raise SimulationInputError(f"{path}: results[{entry}].samples_us is not a list")
    return checked_sample(values, f"{path}: results[{entry}].samples_us")


def load_interrupt_trace(path) -> TraceInterrupts:
    """A trace file: one event per line, 'time_us cost_us'; '# length_us L' sets the period."""
    path = Path(path)
    text = read_text(path, SimulationInputError)
    times, costs, length = [], [], None
    for lineno, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if words[0] == "#":
            if len(words) == 3 and words[1] == "length_us":
                length = parse_number(words[2])
                if length is None:
                    raise SimulationInputError(f"{path}: line {lineno}: length_us is not a finite number")
            continue
        numbers = [parse_number(w) for w in words]
        if len(numbers) != 2 or None in numbers:
            raise SimulationInputError(f"{path}: line {lineno}: expected 'time_us cost_us', got {line.strip()[:40]!r}")
        times.append(numbers[0])
        costs.append(numbers[1])
    try:
        return TraceInterrupts(times, costs, length)
    except ValueError as e:
        raise SimulationInputError(f"{path}: {e}") from None


def per_task_times(bins):
    """Per-task times rebuilt from a merged histogram [[lower_us, upper_us or None, count], ...]:
    each bin's count of its middle (geometric; the bound there is where the other is 0 or
    open).  A merged histogram also counts a task's waits for a delayed neighbour, so from a
    run of more than one task these times are longer than the tasks' own."""
    return np.repeat([np.sqrt(lo * hi) if lo > 0 and hi is not None else (hi or lo) for lo, hi, _ in bins],
                     [n for _, _, n in bins])
