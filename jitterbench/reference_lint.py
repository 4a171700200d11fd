"""A reference file's mistakes that ReFrame would meet only in the run it judges, hours later
(`jitterbench reference --lint`): its checks, $index names, variables and units against the
checks' records, its partitions and environments against the system's ReFrame entry.
"""
from __future__ import annotations

import re

from . import benchmarks, fingerprint, references, sweeps


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
    doc = references.load(path)
    system = system or doc["provenance"]["system"]
    problems = []
    quiet = []  # a site file that does not load is named by ReFrame's configuration, not here again
    entries = {s.SYSTEM["name"]: s for s in systems.load_systems(say=quiet.append)}
    entry = entries.get(system)
    if entry is None and any(k not in references.SECTIONS for k in doc):  # a paper's stated values need no system
        problems.append(f"{path}: system '{system}' is no system of systems/ (known: {', '.join(sorted(entries))})")
    partitions = {f"{system}:{p['name']}": p["environs"] for p in entry.SYSTEM["partitions"]} if entry else {}
    checks = [d.check for d in benchmarks.ALL]
    for check, node in doc.items():
        if check in references.SECTIONS:
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
