"""Whether a machine matches reference files (`jitterbench reference --check`): the facts of the
machine, taken from run reports or this host, against each file's fingerprint (fingerprint.py).
"""
from __future__ import annotations

from . import checkout, fingerprint, references
from .references import ReferenceFileError
from .reframe_report import measured_cases, system_of


def check_machine(paths, system=None):
    """Whether a machine matches reference files' fingerprints: (matched, one line per file).
    paths: reference files (.yaml) and run reports; the machine is the reports' (each measured
    case's CPU, MPI library and transport under its environment), else this host's CPU; the
    files are those given, else the ones the reports' system is judged by (checkout.reference_files)."""
    files_given = [p for p in paths if str(p).endswith((".yaml", ".yml"))]
    reports = [p for p in paths if p not in files_given]
    cases = [case for _, _, case in measured_cases(reports)]
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
        doc = references.load(path)
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

