"""The names of performance variables that one run sweeps: `max_isend-recv_4096`.

A benchmark sweeps patterns (or send modes, methods), message sizes, message
counts and distances in one job and prints one summary line for each, so a
check has one performance variable per quantity and line, in the CSCS form
`max_4096`: the quantity, then the swept word (the pattern, send mode or
method, for the checks of WORD: their descriptors' `swept`), then
`_<prefix><value>` per swept number in the order of NUMBERS (the size bare,
the message count after `n`, the distance after `d`):

    max_isend-recv_4096    cycle_send_4096_n1    latency_8_d2    eager_limit_shm

unfold() reads a name back into the quantity and the swept parameters, split()
a test case into the cases it would have been with every swept value a
parameter, and unswept() does so for the cases jitterbench.runs reads, so that a
tool that compares cases by parameter (figures, tables) sees msg_size, pattern
and distance as it sees nodes.  No ReFrame here: the
reporting tools import it without ReFrame.
"""
from __future__ import annotations

import re
from dataclasses import replace

from . import benchmarks, fingerprint

# the parameter of words each check sweeps in one run (patterns, send modes, methods): its descriptor's
WORD = {d.check: d.swept for d in benchmarks.ALL if d.swept}
# prefix in a name -> the swept number it stands for, in the order names use
NUMBERS = {"": "msg_size", "n": "messages", "d": "distance"}
_PREFIX = {param: prefix for prefix, param in NUMBERS.items()}
# the rest (the shortest that leaves only suffixes), then each swept number's suffix, if any
_NUMBERED = re.compile("^(?P<rest>.+?)" + "".join(rf"(?:_{prefix}(?P<{param}>\d+))?"
                                                  for prefix, param in NUMBERS.items()) + "$")


def name(quantity: str, word: str | None = None, **numbers) -> str:
    """The variable of quantity at these swept values: name('cycle', 'send', msg_size=8,
    messages=1) is 'cycle_send_8_n1'.  A word holds no '_'; each number is whole."""
    unknown = set(numbers) - set(_PREFIX)
    if unknown:
        raise ValueError(f"not a swept number: {', '.join(sorted(unknown))}")
    if word is not None and (not word or "_" in word):
        raise ValueError(f"a swept word is not empty and holds no '_': {word!r}")
    head = quantity if word is None else f"{quantity}_{word}"
    return head + "".join(f"_{_PREFIX[p]}{int(numbers[p])}" for p in NUMBERS.values() if p in numbers)


def unfold(check: str, variable: str) -> tuple[str, dict]:
    """The quantity and the swept parameters of one of check's variables:
    unfold('PingPongCheck', 'cycle_send_8_n1') is ('cycle', {'mode': 'send',
    'msg_size': 8, 'messages': 1}); a variable that sweeps nothing
    ('eager_limit_shm') comes back whole with no parameters, as do the node's figures
    (fingerprint.NODE_FIGURES: node_probe_us is no quantity 'node_probe' at a word 'us')."""
    if variable in fingerprint.NODE_FIGURES:  # the node's, of the case: no word or number of a sweep
        return variable, {}
    match = _NUMBERED.match(variable)
    rest, numbers = match["rest"], {p: int(match[p]) for p in NUMBERS.values() if match[p] is not None}
    word = WORD.get(check)
    if word and "_" in rest:
        rest, value = rest.rsplit("_", 1)
        return rest, {word: value, **numbers}
    return rest, numbers


def quantity(check: str, variable: str):
    """The record's Quantity of one of check's variables, or None where its record declares no
    quantities (OSU, perftest, the papers' findings) or none of that name.  A variable that
    sweeps nothing but a suffix of its own (EagerCheck's eager_limit_shm: the limit over shared
    memory) is the quantity with the longest name that prefixes it."""
    record = benchmarks.by_check(check)
    if record is None or not record.quantities:
        return None
    stem = unfold(check, variable)[0]
    named = [q for q in record.quantities if stem == q.name or stem.startswith(q.name + "_")]
    return max(named, key=lambda q: len(q.name), default=None)


def split(check: str, params: dict, perf: dict) -> list[tuple[dict, dict]]:
    """One case of check, its parameters and performance values ({variable: value}), as
    one (parameters, {quantity: value}) per combination of swept values: the cases it
    would have been with each size and pattern a test case of its own.  Variables that
    sweep nothing stay with the case's own parameters."""
    groups: dict = {}
    for variable, value in perf.items():
        quantity, swept = unfold(check, variable)
        groups.setdefault(tuple(swept.items()), {})[quantity] = value
    return [({**params, **dict(swept)}, values) for swept, values in groups.items()]


def unswept(cases):
    """Cases (jitterbench.runs.Case: check, params, perf, documents) of runs that sweep,
    each as the cases split() gives, so that figures and tables group by msg_size and
    pattern as they group by nodes.  The benchmark's documents stay with the first of
    them; a case without values stays whole."""
    out = []
    for case in cases:
        parts = split(case.check, case.params, case.perf) or [(case.params, case.perf)]
        out += [replace(case, params=params, perf=perf, documents=case.documents if i == 0 else [])
                for i, (params, perf) in enumerate(parts)]
    return out
