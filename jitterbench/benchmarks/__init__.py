"""One record per benchmark: all that the Python and ReFrame sides know of it, in one place.

A benchmark is its C folder (src/<name>/, with its own CMakeLists.txt) and its record, a
module of this package that defines DESCRIPTOR; a ReFrame check of its own
(reframe_checks/<name>.py) only where it needs logic the record cannot state
(reframe_checks/records.py makes the check of every other record).  Nothing else
names a benchmark; every consumer reads the records from ALL:

    the check       Descriptor.quantities: its performance variables; .parameters: what
                    each mode sets (the quick mode's -S options: quick_options)
    runs            Descriptor.cases: a benchmark's JSON document as test cases
    figures         Descriptor.figures, .distribution: the report's figures, in page order
    report          Descriptor.counterparts: the values set beside the papers' stated ones
    references      Descriptor.counterparts: the metrics a paper's stated value may name
    cli             Descriptor.summary: `jitterbench summarize`'s columns
    sweeps          Descriptor.swept: the word a run sweeps in its variables' names
    plan            Descriptor.cost: the modelled seconds of one run
    tests, fuzzer   Descriptor.small, .option_values, .long_options: a short valid run, the
                    valid values of its own options
    README, docs    Descriptor.study, .about: the table of benchmarks (tests/test_records.py)

A document's results hold only the fields its record declares (parameters, quantities,
context): tests/test_records.py runs every binary and compares.

This package imports nothing that draws (figures imports matplotlib only to draw), so
that the ReFrame side may read it.
"""
from __future__ import annotations

import importlib
import pkgutil
import statistics
from dataclasses import dataclass, field, replace
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


# What a quantity's role is in a verdict (docs/references.md):
ASSERTED = "asserted"    # a performance variable that a reference bounds
REPORTED = "reported"    # a performance variable shown and plotted, never bounded (a maximum over calls)
RECORDED = "recorded"    # in the benchmark's JSON document only


@dataclass(frozen=True)
class Quantity:
    """One output quantity of a benchmark: the check's performance variable `name` (before the
    swept values, sweeps.name) read from the result field `field`."""
    name: str
    field: str
    unit: str
    over: str                       # how it is aggregated: over tasks, over calls, over nodes
    better: str = "lower"           # or "higher"
    role: str = ASSERTED

    def __post_init__(self):
        if self.better not in ("lower", "higher") or self.role not in (ASSERTED, REPORTED, RECORDED):
            raise ValueError(f"quantity {self.name}: better is lower or higher, role {ASSERTED}, {REPORTED} "
                             f"or {RECORDED}")

    def with_role(self, role) -> Quantity:
        return replace(self, role=role)


# The per-call statistics of every benchmark that times calls (src/core/calls.c: one line
# per swept variant); "per-call MAX" is the maximum over tasks of one call's time
PER_CALL_STATISTICS = (
    Quantity("max", "max_us", "us", "mean over calls of the per-call MAX over tasks"),
    Quantity("avg", "avg_us", "us", "mean over calls of the per-call mean over tasks"),
    Quantity("min", "min_us", "us", "mean over calls of the per-call MIN over tasks", role=RECORDED),
    Quantity("jitter", "jitter", "MAX/AVG", "max over avg, both means over calls", role=RECORDED),
    Quantity("t_max", "t_max_us", "us", "largest over tasks of each task's mean over calls (IMB's t_max)"),
    Quantity("t_min", "t_min_us", "us", "smallest over tasks of each task's mean over calls", role=RECORDED),
    Quantity("p50", "p50_us", "us", "median over calls of the per-call MAX", role=RECORDED),
    Quantity("p90", "p90_us", "us", "90th percentile over calls of the per-call MAX", role=RECORDED),
    Quantity("p99", "p99_us", "us", "99th percentile over calls of the per-call MAX"),
    Quantity("p999", "p999_us", "us", "99.9th percentile over calls of the per-call MAX", role=RECORDED),
    Quantity("worst", "worst_us", "us", "largest per-call MAX over calls", role=RECORDED),
    Quantity("all_p50", "all_p50_us", "us", "median over tasks and calls of one task's time", role=RECORDED),
    Quantity("all_p99", "all_p99_us", "us", "99th percentile over tasks and calls of one task's time",
             role=RECORDED),
)
# the per-call statistics' context: how the calls were counted, started and binned
# and whose per-call maximum it was (src/core/calls.c: "slowest" always, "latest" where a benchmark times it)
PER_CALL_CONTEXT = ("calls", "histogram", "sync", "slowest", "latest")
# the start of each call: the skew over tasks on synchronised clocks, and the clocks' error
START_SKEW = (
    Quantity("start_skew", "start_skew_us", "us", "mean over calls of the spread of start times over tasks",
             role=RECORDED),
    Quantity("start_skew_max", "start_skew_max_us", "us", "largest spread of start times over calls", role=RECORDED),
    Quantity("clock_error", "clock_error_us", "us", "the clock synchronisation's error bound", role=RECORDED),
)


def per_call(*performance) -> tuple:
    """The per-call statistics, those named performance variables (asserted), the rest recorded."""
    unknown = set(performance) - {q.name for q in PER_CALL_STATISTICS}
    if unknown:
        raise ValueError(f"not a per-call statistic: {', '.join(sorted(unknown))}")
    return tuple(q.with_role(ASSERTED) if q.name in performance else q.with_role(RECORDED)
                 for q in PER_CALL_STATISTICS)


@dataclass(frozen=True)
class Parameter:
    """A variable of the check that one run takes (what it sweeps in the run, its trials, its
    calls): values, the check's default, which the acceptance mode runs (a tuple for a list, or
    one value); quick, the quick mode's, given as -S <Check>.<name>=... (quick_options).  The
    job's own factors (nodes, tasks per node, placement, eager limit) are ReFrame parameters of
    the check, from the partitions."""
    name: str
    values: object
    quick: object = None

    def text(self, value) -> str:
        return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


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
    # --- the record of its binary (none for OSU and perftest, which are not ours) ---
    study: str = ""               # the README's table: whose study, what it measures
    about: str = ""
    quantities: tuple = ()        # Quantity: every output quantity of a result
    result_fields: tuple = ()     # the other fields of a result: its swept values and context
    parameters: tuple = ()        # Parameter: what the modes set
    size_field: str = "size"      # the result field of the message size a run sweeps
    small: tuple = ()             # the options of a short valid run on any tasks (tests, the fuzzer's base)
    pair_options: tuple = ()      # and what a run on two tasks of one node needs besides (tests)
    option_values: dict = field(default_factory=dict)  # its own options' valid values, for the fuzzer
    long_options: tuple = ()      # options any valid value of which but a small one runs long
    own_check: bool = True        # reframe_checks/<benchmark>.py holds its check; else records.py makes it
    features: tuple = ("mpi",)    # the partition features its check runs on (ReFrame's valid_systems)
    min_nodes: int = 1            # the fewest nodes its check runs on (one task a node: pairs, congestion)

    def value(self, name):
        """The check's default of a parameter: a list for a tuple of values, else the value."""
        found = [p for p in self.parameters if p.name == name]
        if not found:
            raise KeyError(f"{self.check} declares no parameter {name}")
        return list(found[0].values) if isinstance(found[0].values, tuple) else found[0].values

    def quantity(self, name) -> Quantity:
        found = [q for q in self.quantities if q.name == name]
        if not found:
            raise KeyError(f"{self.check} declares no quantity {name}")
        return found[0]

    def performance(self, *names) -> dict:
        """{name: (field, unit)} of the named quantities, or of every performance variable
        (asserted or reported) without names: what a check reads from its summary lines."""
        chosen = [self.quantity(n) for n in names] if names else [q for q in self.quantities if q.role != RECORDED]
        return {q.name: (q.field, q.unit) for q in chosen}

    def values_of(self, result, *names) -> dict:
        """{name: (value, unit)} of a result's performance quantities (or the named ones): the
        values of its test case.  An asserted quantity the result lacks raises KeyError naming
        its field; one only reported is left out."""
        chosen = [self.quantity(n) for n in names] if names else [q for q in self.quantities if q.role != RECORDED]
        return {q.name: (result[q.field], q.unit) for q in chosen if q.role == ASSERTED or q.field in result}

    def declared_fields(self) -> set:
        return {q.field for q in self.quantities} | set(self.result_fields)


# ---- what the descriptors share ------------------------------------------------------------

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


def calls_options(calls) -> list:
    """-S CHECK.calls=N for each check of a jb-* benchmark (a JitterbenchCheck, which has `calls`):
    ReFrame's -S TEST.VAR sets a variable in the tests of that class name only
    (reframe/core/decorators.py, TestRegistry.setvars), and a plain `-S calls=N` warned "variables
    were not set: 'calls'" for each test without it (the build, OSU, perftest) in every quick run."""
    return [o for d in ALL if d.benchmark for o in ("-S", f"{d.check}.calls={calls}")]


def quick_options() -> list:
    """The quick mode's -S options of every record's parameters: -S HaloCheck.patterns=isend-recv."""
    return [o for d in ALL for p in d.parameters if p.quick is not None
            for o in ("-S", f"{d.check}.{p.name}={p.text(p.quick)}")]


def readme_table() -> str:
    """The README's table of benchmarks, one row a record of a jb-* binary."""
    rows = [f"| `jb-{d.benchmark}` | {d.study}: {d.about} | [src/{d.benchmark}/README.md](src/{d.benchmark}/README.md) |"
            for d in ALL if d.benchmark]
    return "\n".join(["| binary | study | manual |", "|---|---|---|", *rows])
