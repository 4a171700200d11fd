"""What the rules do with each performance variable (its role): which side of it is worse, and
whether a reference bounds it (a maximum over calls never; a percentile over calls only where the
run's calls hold a bound for it).  The references' builder, the checks (asserted_only: a file's
entry with the rest unbounded), history and compare all judge a variable by it.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import benchmarks, bounds, fingerprint, sweeps

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
    p = percentile_of(check, variable)
    if p is not None and not (calls and 1 - p ** calls >= bounds.PERCENTILE_CONFIDENCE):
        return Role(better, False, f"a percentile p{p * 100:g} over {calls or 'an unknown number of'} calls: "
                                   f"needs {bounds.calls_needed(p)} calls")
    return Role(better, True)


def percentile_of(check, variable):
    """The percentile over calls one of check's variables is (p99_isend-recv_4096: 0.99), by its
    record's quantity, else by its name; None for any other figure."""
    quantity = sweeps.quantity(check, variable)
    return bounds.percentile_of(quantity.name if quantity else sweeps.unfold(check, variable)[0])


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
