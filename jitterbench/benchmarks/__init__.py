"""One descriptor per benchmark: all that the Python side knows of it, in one place.

A benchmark is its C folder (src/<name>/), its ReFrame check (reframe_checks/<name>.py)
and its descriptor, a module of this package that defines DESCRIPTOR.  The reports,
comparisons, summaries, references and sweep names read every descriptor from ALL and
never name a benchmark themselves:

    runs        Descriptor.cases: a benchmark's JSON document as test cases
    figures     Descriptor.figures, .distribution: the report's figures, in page order
    report      Descriptor.counterparts: the values set beside the papers' stated ones
    references  Descriptor.counterparts: the metrics a paper's stated value may name
    cli         Descriptor.summary: `jitterbench summarize`'s columns
    sweeps      Descriptor.swept: the word a run sweeps in its variables' names
    plan        Descriptor.cost: the modelled seconds of one run

This package imports nothing that draws (figures imports matplotlib only to draw), so
that the ReFrame side (sweeps) may read it.
"""
from __future__ import annotations

import importlib
import pkgutil
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable


def no_cases(doc) -> Iterable:
    return ()


@dataclass(frozen=True)
class Column:
    """A column of `jitterbench summarize`: its header and the text of one result's cell.
    A cell raises KeyError naming the field it needs and the result lacks."""
    header: str
    cell: Callable[[dict], str]

    @staticmethod
    def number(header, name, digits=1, required=True) -> Column:
        """A number of the result to digits: one it must hold, or else may lack ('-')."""
        return Column(header, lambda r: "-" if r.get(name) is None and not required
                      else f"{_field(r, name):.{digits}f}")

    @staticmethod
    def text(header, name) -> Column:
        """A field the result may lack ('-')."""
        return Column(header, lambda r: "-" if r.get(name) is None else str(r[name]))

    @staticmethod
    def ratio(header, top, bottom, digits=2) -> Column:
        """top over bottom, both of which the result must hold ('-' where bottom is 0)."""
        return Column(header, lambda r: f"{_field(r, top) / _field(r, bottom):.{digits}f}" if _field(r, bottom)
                      else "-")


def _field(r, name):
    """A result's field, or KeyError(name) where it lacks it or holds null."""
    if r.get(name) is None:
        raise KeyError(name)
    return r[name]


@dataclass(frozen=True, eq=False)  # one of each: told apart by identity
class Descriptor:
    check: str                    # the ReFrame check's class name, as test cases and reference files name it
    benchmark: str | None         # jb-<benchmark>, its src/ folder and its JSON's "benchmark"; None: not ours (OSU)
    order: int                    # where it stands among the benchmarks: report figures, summarize tables
    # a JSON document -> (parameters, {variable: (value, unit)}) for each case it holds, named
    # as the check names them; the job's nodes and tasks_per_node are added by the reader
    cases: Callable[[dict], Iterable[tuple[dict, dict]]] = no_cases
    swept: str | None = None      # the parameter of the words one run sweeps (patterns, modes): sweeps.name's word
    figures: tuple = ()           # functions (runs.Collection) -> figures.Figure, in page order
    distribution: tuple = ()      # the result fields that name its per-call histograms in the figure
                                  # `distributions` (none: its histograms are not drawn there)
    # a metric that a paper's stated value may name (reference files' `metric:`) -> function
    # (one label's measured cases, the stated entry's `at`) -> the measured value, or None
    counterparts: dict = field(default_factory=dict)
    summary: tuple = ()           # Columns of one result in `jitterbench summarize`, after its MPI
    # `jitterbench plan`'s model of one run's seconds, launch aside, from a variant (a ReFrame
    # --describe record); built from jitterbench.benchmarks._cost
    cost: Callable[[dict], float] = lambda v: 0.0


# ---- what the descriptors share ------------------------------------------------------------

def values(*triples) -> dict:
    """{variable: (value, unit)} of (variable, value, unit) triples."""
    return {var: (value, unit) for var, value, unit in triples}


def median(numbers):
    numbers = list(numbers)
    return statistics.median(numbers) if numbers else None


def of(cases, check):
    """The cases of one check."""
    return [c for c in cases if c.check == check]


def results_of(cases, benchmark):
    """Every result of the benchmark's documents that the cases hold."""
    return [r for c in cases for d in c.documents if d["benchmark"] == benchmark for r in d["results"]]


# ---- the registry --------------------------------------------------------------------------

def _discover() -> tuple:
    # every module a descriptor, but the helpers they share (_cost)
    found = [importlib.import_module(f"{__name__}.{m.name}").DESCRIPTOR for m in pkgutil.iter_modules(__path__)
             if not m.name.startswith("_")]
    for key in ("check", "benchmark"):
        names = [getattr(d, key) for d in found if getattr(d, key)]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ImportError(f"two benchmark descriptors share the {key} {', '.join(twice)}")
    return tuple(sorted(found, key=lambda d: (d.order, d.check)))


ALL = _discover()
_BY_CHECK = {d.check: d for d in ALL}
_BY_BENCHMARK = {d.benchmark: d for d in ALL if d.benchmark}


def by_check(name) -> Descriptor | None:
    return _BY_CHECK.get(name)


def by_benchmark(name) -> Descriptor | None:
    return _BY_BENCHMARK.get(name)


def counterpart(metric):
    """The function that measures a paper's metric (Descriptor.counterparts), or None."""
    return next((d.counterparts[metric] for d in ALL if metric in d.counterparts), None)


METRICS = tuple(metric for d in ALL for metric in d.counterparts)
