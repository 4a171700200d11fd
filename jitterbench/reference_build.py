"""A reference file from k >= 5 runs of one system (`jitterbench reference`; docs/references.md,
the rule): each variable's median over the runs, its worse side bounded at the median times the
larger minimum detectable slowdown (bounds.py) of its pool and of its check's variables in that
pool, at the suite's false-alarm rate split over the variables the rules assert (roles.py).

build reads the runs (_Runs), gives each variable its role, pools the variables' scores
(pool_of), bounds each pool (_Bounds) and writes the document: its provenance (how it was made,
each pool, each run against the others), the machine's fingerprint, an entry per check and the
variables left unbounded for their noise (not_assertable).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
import hashlib
import math
import os
import re
import statistics

import numpy as np

from . import bounds, checkout, fingerprint
from .files import read_text
from .references import MADE_BY, ReferenceFileError
from .reframe_report import RunReportError, measured_cases, parameters, read_report
from .roles import Role, percentile_of, role_of

# the environment of a node figure's pool (pool_of): every MPI's cases of the partition
NODE_POOL = "every environment"


def key_of(case) -> tuple:
    """Where a case's values sit in a reference document, below its check: partition, environment
    and its parameters' values in the check's $index order."""
    return f"{case['system']}:{case['partition']}", case["environ"], *parameters(case).values()


def index_of(case):
    return ["$partition", "$environ", *parameters(case)]


def pool_of(check, key, unit, launches=1, variable=""):
    """The variables whose leave-one-out scores are pooled into one minimum detectable slowdown:
    every timed variable (times, rates, their ratios) of one MPI on one partition, across checks;
    sizes (the eager limits, in bytes) apart, percentiles over calls apart from the central figures,
    and apart by the launches each value is the median of.  The run is the unit of disturbance: a
    moment the cores are taken slows every check of that run under the MPI, so the MPI's checks
    together estimate the tail.  Pooled per check instead, a check whose five runs happened to be
    steady got a tight bound that 8 of 20 later clean runs broke (docs/references.md).  A median of
    5 launches spreads less than one launch does: pooled with a check of one launch (the noise
    probe), Intel MPI's checks of five could detect 2.19x, apart 1.83x.  A percentile over calls is
    a tail of each launch, and spreads from run to run as no mean does: in the first baseline in
    rounds the p99s over 100 calls moved up to 3.6x against the other runs, the central figures at
    most 1.72x (docs/references.md, Launches).  build also pools each check's scores of a pool
    alone and bounds each variable at the larger of the two: under the MPI's pool alone, Open MPI's
    1 KiB torus and all-to-all figures, which move with the run more than its other checks, failed
    5 of 32 clean runs at a stated 1 %; each check's pool alone, 9 of 150 in splits of recorded runs.
    Each node figure (fingerprint.NODE_FIGURES) is a pool of its own over every case of the partition,
    under every MPI: the CPU's speed and its cores' distance are the node's, the same quantity in each
    case, and spread unlike the network's times; build bounds each at the larger of that pool's and its
    check's own under its MPI, as the network's.  Pooled alone, the probe's bound (1.16x over ten clean
    runs of the CI machine type) was too tight for Intel MPI's ping-pong, whose probe moves with its
    runs: 4 of 45 judged runs had a node finding there (docs/references.md, Node first)."""
    if unit == "B":
        return key[0], key[1], "size"
    if variable in fingerprint.NODE_FIGURES:  # one quantity of the node in every case, whatever its MPI
        key, kind = (key[0], NODE_POOL), f"node figure {variable}"
    else:
        kind = "percentile over calls" if variable and percentile_of(check, variable) is not None else "time"
    return key[0], key[1], kind if launches == 1 else f"{kind}, median of {fingerprint.described(launches)}"


def build(report_paths, system, measured_by, false_alarm_rate=bounds.FALSE_ALARM_RATE,
          max_detectable=bounds.MAX_DETECTABLE, attempts=bounds.ATTEMPTS):
    """A reference document from k >= 5 runs of one system (docs/references.md: the rule).

    Per variant and asserted variable: the value is the median of the repeats and the worse
    side is bounded at the median times the larger minimum detectable slowdown (bounds) of its
    pool (pool_of) and of its check's variables in that pool, with
    the suite's false-alarm rate per attempt split over the asserted variables (Bonferroni: every
    bound is checked by ReFrame alone, so each takes rate / m).  A run's verdict takes attempts
    (1 or 2): a check that fails under an MPI is judged again at once (ci/main.sh) and fails only
    if it fails again, so with independent attempts the rate per attempt is the rate's root.  A
    variable not asserted, or whose minimum detectable slowdown is above max_detectable, gets
    [median, null, null, unit] (never fails); the latter are listed in the top-level
    `not_assertable` with it.
    """
    per_attempt = _rate_per_attempt(false_alarm_rate, max_detectable, attempts)
    report_paths = list(_distinct(report_paths))  # each read and checked first: a bad one is named before counting
    if len(report_paths) < bounds.MIN_REPEATS:
        raise ReferenceFileError(f"{len(report_paths)} run report(s) given: a bound needs at least "
                                 f"{bounds.MIN_REPEATS} repeats, each a ReFrame run of its own")
    runs = _Runs.read(report_paths, system)
    roles, not_assertable = _roles(runs)
    # The node figures are judged first and once (a node finding is no failure to judge again): the
    # run's rate over them alone; the network's figures take the rate an attempt over theirs.
    node = [k for k, r in roles.items() if r.asserted and k[2] in fingerprint.NODE_FIGURES]
    asserted = [k for k, r in roles.items() if r.asserted and k[2] not in fingerprint.NODE_FIGURES]
    machine = fingerprint.of_cases(system, runs.cases, runs.facts["hosts"])
    found = _Bounds.of(runs, roles, _groups(runs, asserted + node, machine["launches"]), false_alarm_rate,
                       per_attempt / max(1, len(asserted)), len(asserted), false_alarm_rate / max(1, len(node)),
                       max_detectable)
    doc = {"provenance": _provenance(runs, report_paths, system, measured_by, false_alarm_rate, per_attempt, attempts,
                                     max_detectable, found.pools, {m: roles[m] for m in asserted}),
           "fingerprint": machine}
    if node:
        doc["provenance"]["node_figures"] = {
            "asserted": len(node), "false_alarm_rate": false_alarm_rate, "attempts": 1,
            "rule": ("judged before the network's: a case whose node figure is past its bound is inconclusive, "
                     "its other figures unjudged (docs/references.md, Node first); bounded by the same rule at "
                     f"the run's rate {false_alarm_rate:g} split over the {len(node)} node figures, one attempt")}
    _add_entries(doc, runs, roles, found.slowdown, max_detectable, not_assertable)
    if not_assertable:
        doc["not_assertable"] = [{"check": check, "at": list(key), "variable": var,
                                  "detectable_slowdown": None if mds is None else _significant(mds, 4), "reason": why}
                                 for check, key, var, mds, why in sorted(not_assertable, key=repr)]
    return doc


def _rate_per_attempt(false_alarm_rate, max_detectable, attempts):
    """The false-alarm rate of one attempt of a verdict in `attempts`, the rule's settings checked."""
    if not (0 < false_alarm_rate < 1):
        raise ReferenceFileError(f"the false-alarm rate must be between 0 and 1, got {false_alarm_rate}")
    if attempts not in (1, 2):
        raise ReferenceFileError(f"a verdict takes 1 or 2 attempts (the main job judges a failed check once "
                                 f"more), got {attempts}")
    per_attempt = false_alarm_rate ** (1 / attempts)
    if not max_detectable > 1:
        raise ReferenceFileError(f"the largest detectable slowdown must be above 1, got {max_detectable}")
    return per_attempt


@dataclass
class _Runs:
    """What the runs measured of one system, each variable by (check, key_of its case, its name):
    its values (one a run), the runs they came from (their index in the reports), its unit (by
    check and name), the fewest timed calls of its cases; each check's $index, the measured cases,
    and the facts of the provenance (ReFrame versions, dates, commands, hosts, modes, calls)."""
    samples: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)
    units: dict = field(default_factory=dict)
    calls: dict = field(default_factory=dict)
    index: dict = field(default_factory=dict)
    cases: list = field(default_factory=list)
    facts: dict = field(default_factory=lambda: {k: set() for k in (
        "versions", "dates", "commands", "hosts", "modes", "calls")})

    @classmethod
    def read(cls, report_paths, system):
        runs = cls()
        for path, info, case in measured_cases(report_paths):
            if case.get("system") != system:
                continue
            runs.cases.append(case)
            runs.add_session(path, info)
            runs.add_case(case, report_paths.index(path))
        if not runs.samples:
            raise ReferenceFileError(f"no performance values for system '{system}' in "
                                     f"{', '.join(map(str, report_paths))}")
        return runs

    def add_session(self, path, info):
        facts = self.facts
        try:
            facts["dates"].add(datetime.fromtimestamp(info["time_start_unix"], timezone.utc).date().isoformat())
        except (KeyError, TypeError, ValueError, OverflowError, OSError):
            raise ReferenceFileError(f"{path}: field session_info.time_start_unix is not a time: "
                                     f"{info.get('time_start_unix')!r}") from None
        command = str(info.get("cmdline", ""))
        facts["versions"].add(str(info.get("version", "?")))
        facts["commands"].add(_no_paths(command))
        facts["hosts"].add(str(info.get("hostname", "?")))
        mode = re.search(r"--mode[= ](\S+)", command)
        facts["modes"].add(mode[1] if mode else "(none)")

    def add_case(self, case, run):
        check = case["display_name"].split()[0]
        self.index.setdefault(check, index_of(case))
        key = key_of(case)
        case_calls = case.get("calls") if isinstance(case.get("calls"), int) else None
        if case_calls:
            self.facts["calls"].add(case_calls)
        for name, pv in case["perfvalues"].items():
            var = name.split(":")[-1]
            if pv[0] is not None:
                self.samples.setdefault((check, key, var), []).append(pv[0])
                self.origins.setdefault((check, key, var), []).append(run)
                self.units[(check, var)] = pv[4]
                self.calls[(check, key, var)] = min(self.calls.get((check, key, var), case_calls or 0), case_calls or 0)


def _roles(runs):
    """Each variable's role (roles.role_of), and the ones the rules would assert that these runs
    cannot bound (too few repeats, a value <= 0): (check, key, variable, None, why)."""
    roles, not_assertable = {}, []
    for (check, key, var), values in runs.samples.items():
        role = role_of(check, var, runs.units[(check, var)], runs.calls[(check, key, var)])
        if role.asserted and len(values) < bounds.MIN_REPEATS:
            role = Role(role.better, False, f"{len(values)} repeat(s), fewer than {bounds.MIN_REPEATS}")
            not_assertable.append((check, key, var, None, role.why_not))
        elif role.asserted and min(values) <= 0:
            role = Role(role.better, False, "a value <= 0: no log scale")
            not_assertable.append((check, key, var, None, role.why_not))
        roles[(check, key, var)] = role
    return roles, not_assertable


def _groups(runs, asserted, made):
    """The pools of scores: {(partition, environ, kind): its variables} for each pool (pool_of), and
    {(partition, environ, kind, check): ...} for each check's own part of it (a node figure's under its
    MPI: a case whose probe moves with its MPI's runs).  made: each check's launches (fingerprint), one
    way for all of its cases."""
    mixed = {check: counts for check, counts in made.items() if len(counts) > 1}
    if mixed:
        check, counts = sorted(mixed.items())[0]
        raise ReferenceFileError(f"the runs' {check} cases were medians of {' and of '.join(map(fingerprint.described, counts))}: "
                                 f"a bound takes runs made one way (JB_ROUNDS, JB_LAUNCHES), as a judged run will be")
    groups = {}
    for check, key, var in asserted:
        pool = pool_of(check, key, runs.units[(check, var)], made[check][0], var)
        groups.setdefault(pool, []).append((check, key, var))
        own = (*pool[:1], key[1], *pool[2:]) if var in fingerprint.NODE_FIGURES else pool
        groups.setdefault((*own, check), []).append((check, key, var))
    return groups


@dataclass
class _Bounds:
    """Each asserted variable's minimum detectable slowdown (slowdown), the larger of its pool's and
    its check's own part of it; and each pool as the provenance states it (pools)."""
    slowdown: dict
    pools: list

    @classmethod
    def of(cls, runs, roles, groups, false_alarm_rate, rate, asserted, node_rate, max_detectable):
        """rate: each network figure's false-alarm rate (of asserted), node_rate each node figure's."""
        slowdown, pools = {}, {}
        for (partition, environ, kind, *check), members in sorted(groups.items()):
            scores = np.concatenate([bounds.loo_scores(bounds.worse_logs(runs.samples[m], roles[m].better)[None, :])
                                     for m in members])
            its_rate = node_rate if members[0][2] in fingerprint.NODE_FIGURES else rate
            try:  # a rate so small that its bound is beyond a float: said of the rate, not of the file it would be in
                with np.errstate(all="raise"):
                    mds = float(bounds.detectable_slowdown(max(0.0, bounds.threshold(scores, its_rate))))
            except (OverflowError, FloatingPointError, ZeroDivisionError):
                mds = math.inf
            if not math.isfinite(mds):
                raise ReferenceFileError(f"a false-alarm rate of {false_alarm_rate:.3g} ({rate:.3g} an attempt for each "
                                         f"of the {asserted} asserted variables) puts the bound beyond any number "
                                         f"with {scores.size} scores: give a larger --false-alarm-rate")
            # each variable's bound is the larger of its environment's and its check's (the rate holds under either)
            slowdown.update({m: max(mds, slowdown.get(m, 0.0)) for m in members})
            if not check:
                pools[partition, environ, kind] = {"partition": partition, "environ": environ, "variables": kind,
                                                   "asserted": len(members),
                                                   "detectable_slowdown": _significant(mds, 4), "checks": {}}
            else:
                of_node = kind.startswith("node figure")  # a node figure's pool holds every MPI: its checks per MPI
                pools[partition, NODE_POOL if of_node else environ, kind]["checks"][
                    f"{check[0]} {environ}" if of_node else check[0]] = _significant(mds, 4)
        for pool in pools.values():
            members = groups[pool["partition"], pool["environ"], pool["variables"]]
            pool["bounded"] = sum(slowdown[m] <= max_detectable for m in members)
        return cls(slowdown, list(pools.values()))


def _provenance(runs, report_paths, system, measured_by, false_alarm_rate, per_attempt, attempts, max_detectable,
                pools, asserted) -> dict:
    """How the file was made: from which runs, by which rule, at which rates; asserted: the network
    figures the rules assert, with their roles."""
    k = sorted({len(v) for v in runs.samples.values()})
    calls_used = sorted(runs.facts["calls"])
    return {
        "system": system,
        "source": "measured",
        "measured_by": measured_by,
        "date": max(runs.facts["dates"]),
        "method": (f"{MADE_BY}: per variable the median of k repeats; the worse side bounded at the "
                   f"median times the minimum detectable slowdown, each repeat a case's median over its launches "
                   f"(fingerprint: launches), a one-sided prediction bound for one new run "
                   f"on the log scale at the suite's false-alarm rate {per_attempt:.3g} an attempt split over "
                   f"{len(asserted)} asserted variables (Bonferroni), from the pooled leave-one-out scores of "
                   f"the timed variables of each environment and of each check, the larger; "
                   + ("a check failed under an MPI is judged again and fails only if it fails again (ci/main.sh), "
                      f"so {false_alarm_rate:g} a run (docs/references.md)" if attempts == 2 else
                      "a run is one attempt (docs/references.md)")),
        "repeats": k[0] if len(k) == 1 else f"{k[0]}-{k[-1]}",
        "false_alarm_rate": false_alarm_rate,  # a run's, of its verdict over all its attempts
        "attempts": attempts,
        "false_alarm_rate_per_attempt": _significant(per_attempt, 4),
        "asserted": len(asserted),  # m, the rate's divisor: those the rules assert, before the noise limit
        "max_detectable": max_detectable,
        "jitterbench_commit": checkout.commit(),
        "reframe": ", ".join(sorted(runs.facts["versions"])),
        "modes": sorted(runs.facts["modes"]),
        "calls": calls_used if calls_used else "the benchmarks' defaults",
        "commands": sorted(runs.facts["commands"]),
        # per pool of scores (pool_of): its asserted variables, their minimum detectable slowdown, each
        # check's own (its variables' scores alone), and how many of them, each bounded at the larger
        # of the two, are within max_detectable (bounded; the others not assertable here)
        "pools": pools,
        "runs": run_factors(report_paths, runs.samples, runs.origins, asserted),
    }


def _add_entries(doc, runs, roles, slowdown, max_detectable, not_assertable):
    """Each variable's [median, lower, upper, unit] into doc, under its check and key; a variable
    whose bound would be past max_detectable added to not_assertable instead, unbounded."""
    for (check, key, var), values in sorted(runs.samples.items(), key=lambda kv: repr(kv[0])):
        node = doc.setdefault(check, {"$index": runs.index[check]})
        for part in key:
            node = node.setdefault(part, {})
        role = roles[(check, key, var)]
        value = _significant(float(np.exp(np.median(np.log(values)))) if min(values) > 0 else statistics.median(values))
        lower = upper = None
        mds = slowdown.get((check, key, var))
        if mds is not None and mds > max_detectable:
            not_assertable.append((check, key, var, mds, f"noise: the bound would be {mds:.3g} x the median, above "
                                                         f"{max_detectable:g}"))
        elif mds is not None and role.better == "lower":
            upper = math.ceil((mds - 1) * 1e4) / 1e4
        elif mds is not None:
            lower = math.floor((1 / mds - 1) * 1e4) / 1e4
        node[var] = [value, lower, upper, runs.units[(check, var)]]
        doc["provenance"]["bounded"] = doc["provenance"].get("bounded", 0) + (lower is not None or upper is not None)


def central_bounded(doc) -> dict:
    """{environment: the share of its central figures (times, not sizes or the node's) that a
    reference file's rule bounded within its largest detectable slowdown}, over its partitions."""
    counts = {}
    for pool in doc["provenance"]["pools"]:
        if pool["variables"].startswith("time") and pool["asserted"]:
            bounded, asserted = counts.get(pool["environ"], (0, 0))
            counts[pool["environ"]] = (bounded + pool["bounded"], asserted + pool["asserted"])
    return {environ: bounded / asserted for environ, (bounded, asserted) in counts.items()}


def run_factors(report_paths, samples, origins, asserted) -> list:
    """Per run and environment, how the run's asserted figures sat against the other runs': the
    median over its variables of their leave-one-out scores (each its value against the median of
    the other runs', turned so that above 1 is worse), as a factor.  Where the noise is the run's
    (the machine slower for minutes, every case with it), one run's factor stands apart and sets
    the bound; where it is the variables' own, every run's is near 1 (docs/references.md).  Beside
    them, probe: the run's compute probe against the other runs' (probe_of), where they took it: a
    run whose figures and CPU were slower together was the machine's."""
    scores = {}
    for m, role in asserted.items():
        for run, score in zip(origins[m], bounds.loo_scores(bounds.worse_logs(samples[m], role.better)[None, :])):
            scores.setdefault(run, {}).setdefault(m[1][1], []).append(score)  # m[1]: partition, environ, ...
    probes = [probe_of(path) for path in report_paths]
    return [{"report": name, "factors": {environ: _significant(float(np.exp(np.median(s))), 3)
                                                               for environ, s in sorted(scores.get(run, {}).items())},
             **({"probe": _significant(probe / float(np.median(others)), 3)}
                if probe and (others := [p for i, p in enumerate(probes) if p and i != run]) else {})}
            for run, (name, probe) in enumerate(zip(_names(report_paths), probes))]


def _names(paths) -> list:
    """Each run report's file name, or where two share one (run-1/report.json, run-2/report.json: as
    verdict_rates.py leaves them) its path from the folder the reports have in common."""
    names = [os.path.basename(str(p)) for p in paths]
    if len(set(names)) == len(names):
        return names
    common = os.path.commonpath([os.path.abspath(str(p)) for p in paths])
    return [os.path.relpath(os.path.abspath(str(p)), common) for p in paths]


_PROBE = re.compile(r"\bprobe_us=([0-9.]+)")


def probe_of(report_path):
    """The run's machine speed: the median over its cases' launches of the compute probe each took
    before it ran (the '# load:' line's before_probe_us, src/core/load.c, logged as load_before), in
    us; None for a run whose benchmarks did not take it."""
    taken = [float(v) for _, _, case in measured_cases([report_path]) for v in _PROBE.findall(str(case.get("load_before", "")))]
    return statistics.median(taken) if taken else None


def _distinct(report_paths):
    """The reports, each read once; the same run given twice (same session uuid or the same
    bytes) is refused: a repeat counted twice would make the bounds claim more than they hold."""
    seen = {}
    for path in report_paths:
        text = read_text(path, RunReportError)
        info = read_report(path)["session_info"]
        for key in (("uuid", info.get("uuid")), ("content", hashlib.sha256(text.encode()).hexdigest())):
            if key[1] is not None and key in seen:
                raise ReferenceFileError(f"{path}: the same run as {seen[key]} (same session {key[0]}): each "
                                         f"repeat must be a run of its own")
            seen.setdefault(key, path)
    return report_paths


def _no_paths(command):
    """A command line without machine paths: an absolute path is its last part."""
    return " ".join(os.path.basename(word) if word.startswith("/") else word for word in command.split())


def _significant(x, digits=6):
    return float(f"{x:.{digits}g}")
