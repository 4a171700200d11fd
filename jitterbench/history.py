"""A machine's history (`jitterbench history`): every run kept, each variable's series, and the
runs where a series stepped.

The store is ReFrame's results database (its `storage` setting, here $JB_OUTPUT/results.db; a
site moves it with ReFrame's own RFM_SQLITE_DB_FILE): every `reframe -r` adds its session whole,
and SQLite's locking keeps two runs writing at once apart.  It is read here read-only, beside
ReFrame run reports given as files (runs older than the store); a run in both counts once.

A series is one performance variable of one test case (system, partition, MPI environment,
check and parameters) in the order its runs started, each run's value (its last attempt).

Change points are apache-otava's (Fleming et al., ICPE 2023, "Hunter"): E-divisive means
(Matteson and James) in sliding windows, each candidate kept where Student's t-test between the
segments it separates gives a p-value below max_pvalue.  Both act on the logarithm of the
values: a step is a ratio, and run-to-run spread is closer to normal on that scale (the test
assumes it; the known-answer script measures what that costs: benchmarks/history_rates.py).
The step is the ratio of the medians of the two segments.  max_pvalue is the false-alarm
rate split over every series read (Bonferroni).  A screen (_may_step) spares otava the series
where it can find nothing.

The verdict: a series alarms when the rules assert its variable (roles.role_of: a maximum
over calls never), its last step (a change point between levels of MIN_RUNS runs or more each)
moved it to the worse side, the newest run lies in that step, and the step is larger than the
minimum detectable slowdown of the variable's bound in the newest run, or than min_step where
no reference bounds it.  A step stays an alarm until the series steps back or the site moves
past it (--since, after accepting the machine as it is now and recording new references).
"""
from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import signal
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import orjson

from . import bounds, checkout, files, references, reframe_report, roles, settings

FALSE_ALARM_RATE = 0.01   # of the whole history's verdict, split over the series
WINDOW = 50               # runs in otava's sliding window (its default)
MIN_RUNS = 3             # runs a new level must hold to be a step: fewer are outliers (a disturbed run)
MIN_STEP = bounds.MAX_DETECTABLE  # the step a variable no reference bounds must exceed to alarm


class HistoryError(ValueError):
    """A store or report that cannot be read, or a bad filter; the message names it."""


def default_store() -> str:
    """Where ReFrame keeps the results: RFM_SQLITE_DB_FILE where a site set it, else the
    configuration's (systems/config.py: $JB_OUTPUT/results.db)."""
    return str(checkout.results_store())


EXTRAS = ("jb_commit", "jb_mode", "jb_cpu", "jb_mpis")  # session_extras' keys
# the sessions oldest first, in the same order in every query, so that a worker meets its
# sessions in the order of the runs and reads one at a time
STORED_SESSIONS = "SELECT uuid, session_start_unix FROM sessions ORDER BY session_start_unix, rowid"
SHARE_OF_SESSIONS = ("SELECT uuid, json_blob FROM sessions WHERE rowid % ? = ? "
                     "ORDER BY session_start_unix, rowid")


def _shares(n):
    """Into how many parts n sessions or series are split: one a core, where there are enough."""
    return (os.cpu_count() or 1) if n > 50 else 1


def _parallel(function, tasks) -> list:
    """function over tasks, in as many processes as the machine has cores (each a task's
    share); in this process where there is one core or one task.  The workers leave Ctrl-C to
    this process, which ends them (Pool's exit) and says so in one line (cli)."""
    workers = min(len(tasks), os.cpu_count() or 1)
    if workers < 2:
        return [function(t) for t in tasks]
    with multiprocessing.get_context("fork").Pool(workers, initializer=_worker_signals) as pool:
        return pool.map(function, tasks)


def _worker_signals():
    """A worker leaves Ctrl-C to the command and ends quietly on SIGTERM or SIGHUP (the command
    turns those into Ctrl-C: jitterbench/entry.py), as Pool ends its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _stored_sessions(path) -> list:
    """(uuid, start in unix seconds) of every session of a ReFrame results database."""
    if not os.path.isfile(path):
        raise HistoryError(f"{path}: no results store there (ReFrame writes it at the end of a run; "
                           f"RFM_SQLITE_DB_FILE or --store names another)")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60) as db:
            sessions = db.execute(STORED_SESSIONS).fetchall()
    except sqlite3.Error as e:
        raise HistoryError(f"{path}: not a ReFrame results database ({e})") from None
    for uuid, started in sessions:
        if not isinstance(uuid, str) or not files.is_number(started):
            raise HistoryError(f"{path}: session {uuid!r:.40} has no uuid or no start time")
    return sessions


def _decoded(text):
    """A stored report: orjson's decoding, json's where orjson refuses what Python's json writes
    and reads (NaN, a number past 64 bits), which then raises for text that is no JSON at all."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _stored_series(task) -> tuple:
    """A worker's share of the store: the series of its sessions (each session whole, as
    ReFrame stored its report, decoded here: most of a big store's reading) and what each
    session's report says of the run (hostname, session extras)."""
    path, share, shares, order, filters = task
    series, runs = {}, {}
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60) as db:
            for uuid, blob in db.execute(SHARE_OF_SESSIONS, (shares, share)):
                if uuid in order:
                    _add_session(series, runs, path, uuid, order[uuid], blob, filters)
    except (sqlite3.Error, ValueError, TypeError, RecursionError) as e:
        if isinstance(e, HistoryError):
            raise
        raise HistoryError(f"{path}: not a ReFrame results database ({e})") from None
    return series, runs


def _add_session(series, runs, path, uuid, i, blob, filters):
    """A stored session, run i: checked as a run report file is (reframe_report.report_problem)."""
    report = _decoded(blob)
    problem = ("is not a run report" if not isinstance(report, dict) or not {"runs", "session_info"} <= set(report)
               else reframe_report.report_problem(report))
    if problem:
        raise HistoryError(f"{path}: session {uuid}: {problem}")
    runs[uuid] = _said(report)
    _add_run(series, i, report, *filters)


def _said(report) -> tuple:
    """What a run's report says of it: its hostname and session extras."""
    info = report["session_info"]
    return str(info.get("hostname", "")), {k: info[k] for k in EXTRAS if info.get(k) is not None}


def session_extras(mode) -> str:
    """ReFrame's --session-extras for a run of jitterbench: what decides its numbers, kept with
    the session in the store (jb_commit, jb_mode, jb_cpu, jb_mpis).  ReFrame splits the text at
    commas, so none is left in a value."""
    from . import fingerprint, mpi  # noqa: PLC0415
    extras = {"jb_commit": checkout.commit(), "jb_mode": mode, "jb_cpu": fingerprint.this_host(),
              "jb_mpis": "+".join(f.name for f in mpi.available())}
    return ",".join(f"{k}={str(v).replace(',', ';')}" for k, v in extras.items())


def read_reports(paths) -> list:
    """Run reports given as files, each read and checked as every command reads them."""
    return [reframe_report.read_report(p) for p in paths]


def since(text) -> float:
    """--since: a date or a date and time (ISO 8601, UTC unless it says otherwise), as seconds."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise HistoryError(f"--since {text[:40]!r}: not a date like 2026-11-25 or 2026-11-25T14:00") from None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


@dataclass(frozen=True)
class Run:
    uuid: str
    started: float      # unix seconds
    hostname: str
    extras: dict = field(default_factory=dict, hash=False, compare=False)  # session_extras' where it was given

    @property
    def date(self):
        return datetime.fromtimestamp(self.started, timezone.utc).strftime("%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class ChangePoint:
    index: int          # the first run of the new step (0-based in the series)
    step: float         # median after / median before
    pvalue: float
    worse: bool | None  # None: no side is bounded, so none is worse


@dataclass
class Series:
    system: str
    environ: str
    case: str           # the test case: its display name (check and parameters)
    variable: str
    unit: str
    better: str | None          # which side is better: the record's (roles.role_of)
    asserted: bool              # whether the rules assert it (a maximum over calls: never)
    min_step: float             # the step it must exceed to alarm: its bound's, else History.min_step
    runs: list = field(default_factory=list)     # indices into History.runs
    values: list = field(default_factory=list)
    bound: list | None = None   # the newest run's [reference, lower, upper], where a bound holds
    change_points: list = field(default_factory=list)

    @property
    def detectable(self):
        """The smallest step that alarms: the minimum detectable slowdown of the newest run's bound,
        else min_step (a variable no reference bounds here: too noisy to judge one run by)."""
        return (references.detectable_slowdown(self.bound) if self.bound else None) or self.min_step

    def steps(self) -> list:
        """The change points between two levels the series held for MIN_RUNS runs or more each: the
        others open or close an outlier (a run or two: a disturbed run, not a step)."""
        edges = [0, *(cp.index for cp in self.change_points), len(self.values)]
        return [cp for k, cp in enumerate(self.change_points, start=1)
                if edges[k] - edges[k - 1] >= MIN_RUNS and edges[k + 1] - edges[k] >= MIN_RUNS]

    def alarm(self) -> ChangePoint | None:
        """The step that makes this series fail the history (module doc), or None."""
        steps = self.steps()
        if not steps or not self.asserted:
            return None
        last = steps[-1]
        slowdown = last.step if self.better == "lower" else 1 / last.step
        return last if last.worse and slowdown > self.detectable else None


@dataclass
class History:
    runs: list
    series: list
    max_pvalue: float
    rate: float


def _add_run(series, i, report, check_re, var_re, system, min_step):
    """Adds the values of run i (its report's last attempts) to series, {key: Series}: a
    variable of a test case per system and MPI, as the filters take it."""
    for c in reframe_report.last_attempts(report):
        if not check_re.search(c["display_name"].split()[0]) or system not in (None, c["system"]):
            continue
        for name, pv in (c.get("perfvalues") or {}).items():
            var = name.split(":")[-1]
            value = pv[0]
            if not var_re.search(var) or value is None or not value > 0 or not math.isfinite(value):
                continue  # a log scale has no place for 0; a variable not measured this run is a gap
            key = (c["system"] + ":" + c["partition"], c["environ"], c["display_name"], var)
            if key not in series:
                role = roles.role_of(c["display_name"].split()[0], var, pv[4] or "", c.get("calls"))
                series[key] = Series(*key, pv[4] or "", role.better, role.asserted, min_step)
            s = series[key]
            s.runs.append(i)
            s.values.append(float(value))
            bounded = pv[1] and (pv[2] is not None or pv[3] is not None)
            s.bound = [pv[1], pv[2], pv[3]] if bounded else None


def _merge(parts) -> dict:
    """The series of parts that each hold some of the runs, each series' runs in order: its unit
    and role from its oldest run, its bound from its newest."""
    merged = {}
    for part in parts:
        for key, s in part.items():
            m = merged.setdefault(key, s)
            if m is s:
                continue
            older = m if m.runs[0] < s.runs[0] else s
            bound = (m if m.runs[-1] > s.runs[-1] else s).bound
            pairs = sorted(zip(m.runs + s.runs, m.values + s.values))
            older.runs, older.values, older.bound = [r for r, _ in pairs], [v for _, v in pairs], bound
            merged[key] = older
    return merged


def read(reports=(), start=0.0, check=None, variable=None, rate=FALSE_ALARM_RATE, min_step=MIN_STEP,
         system=None, store=None) -> History:
    """The series of every variable of the runs of a store and of run reports (filtered by
    regular expressions on the check's name and the variable's, and by the system's name), with
    their change points.  A run in both counts once, as the store holds it."""
    try:
        filters = (re.compile(check or ""), re.compile(variable or ""), system, min_step)
    except re.error as e:
        raise HistoryError(f"--check/--var: not a regular expression: {e}") from None
    if not 0 < rate < 1:
        raise HistoryError(f"--false-alarm-rate must be between 0 and 1, not {rate:g}")
    if not (min_step > 1 and math.isfinite(min_step)):
        raise HistoryError(f"--min-step must be a finite number above 1 (a slowdown), not {min_step:g}")
    stored = _stored_sessions(store) if store else []
    seen = {}  # uuid (or the whole session_info) -> (started, report or None where the store has it)
    for uuid, started in stored:
        seen.setdefault(uuid, (float(started), None))
    for report in reports:
        info = report["session_info"]
        key = info.get("uuid") or json.dumps(info, sort_keys=True)
        if info.get("time_start_unix") is None:
            raise HistoryError(f"run {key}: its report has no session_info.time_start_unix")
        seen.setdefault(str(key), (float(info["time_start_unix"]), report))
    kept = sorted(((started, key, report) for key, (started, report) in seen.items() if started >= start),
                  key=lambda run: run[0])
    order = {key: i for i, (_, key, _) in enumerate(kept)}
    in_store = {key: i for key, i in order.items() if kept[i][2] is None}
    shares = _shares(len(in_store)) if in_store else 0
    parts = _parallel(_stored_series, [(store, k, shares, in_store, filters) for k in range(shares)])
    said = {uuid: run for _, runs in parts for uuid, run in runs.items()}
    mine = {}
    for i, (_, key, report) in enumerate(kept):
        if report is not None:
            said[key] = _said(report)
            _add_run(mine, i, report, *filters)
    runs = [Run(key, started, *said.get(key, ("", {}))) for started, key, _ in kept]
    series = list(_merge([*(part for part, _ in parts), mine]).values())
    max_pvalue = rate / max(1, len(series))
    found_parts = [series[k::_shares(len(series))] for k in range(_shares(len(series)))]
    for part, found in zip(found_parts, _parallel(_change_points, [([s.values for s in part], [s.better for s in part],
                                                                    max_pvalue) for part in found_parts])):
        for s, cps in zip(part, found):
            s.change_points = cps
    return History(runs, sorted(series, key=lambda s: (s.system, s.case, s.environ, s.variable)), max_pvalue, rate)


def _change_points(task):
    values, betters, max_pvalue = task
    may_step = _may_step(values, max_pvalue)
    return [change_points(v, max_pvalue, b) if step else [] for v, b, step in zip(values, betters, may_step)]


# otava's first pass keeps a window's candidate at p <= FIRST_PASS x max_pvalue, at most
# (compute_change_points: 10x below 0.05, 2x below 0.5, else 1x); the screen's margin over it
# covers the rounding of another way of summing
FIRST_PASS = 10 * 1.01


def _may_step(values, max_pvalue) -> list:
    """For each series, whether otava may find a change point in it; where not, it finds none,
    and is not run (the screen makes the history of a big store some 5x faster).

    otava's split step slides windows of WINDOW runs, WINDOW // 2 apart, over the series; it
    keeps a window's best candidate (the split that maximises the energy distance) if Student's
    t-test between the window's two sides gives p <= FIRST_PASS x max_pvalue, and looks for
    more only then.  With no candidate kept, its windows are those at 0, WINDOW // 2, ... and
    it returns no change point.  No split of a window can give a smaller p than the one whose
    |t| is largest; so where even that one's p is above the first pass's threshold in every
    window, no candidate is kept anywhere.  The t-test is otava's: sample variances of the
    population standard deviations (its compare), pooled, n - 2 degrees of freedom."""
    from scipy.stats import t as student  # noqa: PLC0415
    may = [len(v) >= 3 for v in values]
    by_length = {}
    for k, v in enumerate(values):
        if may[k]:
            by_length.setdefault(len(v), []).append(k)
    for length, members in by_length.items():
        logs = np.log(np.array([values[k] for k in members]))
        smallest = np.ones(len(members))
        for begin in range(0, length, WINDOW // 2):
            x = logs[:, begin:begin + WINDOW]
            n = x.shape[1]
            if n < 3:
                continue  # otava's t-test of one run against one gives p = 1
            x = x - x.mean(axis=1, keepdims=True)  # sums of squares about 0, without cancellation
            left_sum, left_squares = np.cumsum(x, axis=1)[:, :-1], np.cumsum(x * x, axis=1)[:, :-1]
            total, squares = x.sum(axis=1, keepdims=True), (x * x).sum(axis=1, keepdims=True)
            n_left = np.arange(1, n)
            n_right = n - n_left
            mean_left, mean_right = left_sum / n_left, (total - left_sum) / n_right
            var_left = np.maximum(left_squares / n_left - mean_left ** 2, 0)
            var_right = np.maximum((squares - left_squares) / n_right - mean_right ** 2, 0)
            pooled = ((n_left - 1) * var_left + (n_right - 1) * var_right) / (n - 2)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.abs(mean_left - mean_right) / np.sqrt(pooled * (1 / n_left + 1 / n_right))
            t = np.where(np.isnan(t), np.inf, t)  # 0/0 (a flat window): let otava judge it
            smallest = np.minimum(smallest, 2 * student.sf(t.max(axis=1), n - 2))
        for k, p in zip(members, smallest):
            may[k] = bool(p <= FIRST_PASS * max_pvalue)
    return may


def change_points(values, max_pvalue, better=None) -> list:
    """otava's change points of a series (module doc), each with its step: the ratio of the
    medians of the segments either side of it."""
    from otava.analysis import compute_change_points  # noqa: PLC0415  otava imports SciPy: only here
    if len(values) < 3:
        return []
    logs = np.log(values)
    # a list: otava 0.8.0's detector slices its window out of a list but takes a NumPy array whole
    # (each window then searches the whole series, and its change points land past the series' end)
    found, _ = compute_change_points(logs.tolist(), window_len=WINDOW, max_pvalue=max_pvalue)
    edges = [0, *(int(cp.index) for cp in found), len(values)]
    out = []
    for k, cp in enumerate(found, start=1):
        step = math.exp(np.median(logs[edges[k]:edges[k + 1]]) - np.median(logs[edges[k - 1]:edges[k]]))
        worse = None if better is None else (step > 1) == (better == "lower")
        out.append(ChangePoint(int(cp.index), step, float(cp.stats.pvalue), worse))
    return out


def _cp_text(history, s, cp):
    run = history.runs[s.runs[cp.index]]
    return f"run {s.runs[cp.index] + 1} ({run.date}) x{cp.step:.3g} p={cp.pvalue:.1e}"


def text(history, every=False) -> str:
    """The history for the terminal: the alarms first, then per test case the series that
    stepped (every series with every=True), a line each."""
    if not history.runs:
        return "no runs in the store or the reports (after --since)"
    first, last = history.runs[0].date, history.runs[-1].date
    lines = [f"History of {len(history.runs)} run(s), {first} to {last}: {len(history.series)} series.",
             f"Change points: E-divisive means (apache-otava) on the log of the values, each at p < "
             f"{history.max_pvalue:.2g}",
             f"(a false-alarm rate of {history.rate:g} over the series, Bonferroni); a step: the ratio of the medians "
             f"of levels of {MIN_RUNS}+ runs."]
    alarms = [(s, s.alarm()) for s in history.series if s.alarm()]
    for s, cp in alarms:
        lines.append(f"WORSE {s.case} @{s.system}+{s.environ} {s.variable}: {_cp_text(history, s, cp)}, past the "
                     f"smallest slowdown its reference detects (x{s.detectable:.3g})")
    if not alarms:
        lines.append("No series stepped to its worse side past what its reference detects.")
    shown = [s for s in history.series if every or s.change_points]
    case = None
    for s in shown:
        if (s.case, s.system, s.environ) != case:
            case = (s.case, s.system, s.environ)
            lines.append(f"\n{s.case} @{s.system}+{s.environ}")
        steps = "; ".join(_cp_text(history, s, cp) for cp in s.change_points) or "no change point"
        lines.append(f"  {s.variable}: {len(s.values)} runs, newest {s.values[-1]:.4g} {s.unit}; {steps}")
    if not every:
        lines.append(f"\n{len(history.series) - len(shown)} other series: no change point (--all lists them)")
    return "\n".join(lines)


def as_json(history) -> dict:
    def point(s, cp):
        return {"run": s.runs[cp.index] + 1, "uuid": history.runs[s.runs[cp.index]].uuid, "step": cp.step,
                "pvalue": cp.pvalue, "worse": cp.worse}
    return {
        "runs": [{"run": i + 1, "uuid": r.uuid, "started": r.started, "hostname": r.hostname, **r.extras}
                 for i, r in enumerate(history.runs)],
        "method": {"change_points": "apache-otava compute_change_points (E-divisive means, t-test merge) on "
                                    "log values", "window": WINDOW, "max_pvalue": history.max_pvalue,
                   "false_alarm_rate": history.rate, "split": "Bonferroni over the series"},
        "series": [{"system": s.system, "environ": s.environ, "case": s.case, "variable": s.variable, "unit": s.unit,
                    "runs": [r + 1 for r in s.runs], "values": s.values, "bound": s.bound,
                    "detectable_slowdown": s.detectable,
                    "change_points": [point(s, cp) for cp in s.change_points],
                    "alarm": point(s, s.alarm()) if s.alarm() else None} for s in history.series],
    }


def command(args) -> int:
    """`jitterbench history`: 1 where a series alarms (module doc), else 0."""
    if args.session_extras:
        print(session_extras(args.session_extras))
        return 0
    reports = read_reports(args.reports)
    store = args.store or default_store()
    if args.reports and args.store is None and not os.path.exists(store):
        store = None  # a store named, or there: read; else the reports alone
    history = read(reports, since(args.since) if args.since else 0.0, args.check, args.var, args.false_alarm_rate,
                   args.min_step, args.system, store)
    read_from = f"the results store {store}" if store else "the reports alone"
    if args.json:
        print(json.dumps({"read": read_from, **as_json(history)}, indent=1))
    else:
        print(f"jitterbench history: {read_from}{', ' + str(len(reports)) + ' report(s)' if store and reports else ''}")
        print(text(history, args.all))
    return 1 if any(s.alarm() for s in history.series) else 0


def add_arguments(p):
    p.add_argument("reports", nargs="*", metavar="REPORT", help="ReFrame run reports (--report-file) of runs the "
                                                                "store does not hold, e.g. older ones")
    p.add_argument("--store", metavar="DB", help="ReFrame's results database (default: $RFM_SQLITE_DB_FILE, else "
                                                 "$JB_OUTPUT/results.db)")
    p.add_argument("--since", metavar="DATE",
                   help="only runs started at or after this date (2026-11-25 or 2026-11-25T14:00, UTC)")
    p.add_argument("--system", metavar="SYSTEM", help="only the runs of this ReFrame system (a store may hold several)")
    p.add_argument("--check", metavar="REGEX", help="only checks whose name this regular expression finds (e.g. Halo)")
    p.add_argument("--var", metavar="REGEX", help="only variables whose name this regular expression finds (e.g. ^max_)")
    p.add_argument("--false-alarm-rate", type=float, default=FALSE_ALARM_RATE, metavar="RATE",
                   help=f"of the whole history, split over its series (default: {FALSE_ALARM_RATE:g})")
    p.add_argument("--min-step", type=float, default=MIN_STEP, metavar="SLOWDOWN",
                   help="the step, as a slowdown, that a variable no reference bounds must exceed to fail the "
                        f"history; a bounded one: its bound's minimum detectable slowdown (default: {MIN_STEP:g})")
    p.add_argument("--all", action="store_true", help="list every series, not only those that stepped")
    p.add_argument("--json", action="store_true", help="the series, change points and alarms as JSON")
    p.add_argument("--session-extras", metavar="MODE", choices=settings.MODES, help="print ReFrame's --session-extras for a run of MODE, "
                   f"{' or '.join(settings.MODES)} (commit, mode, CPU, MPIs), and nothing else")


FIGURES = 24  # figures in a report's History section: alarms first, then the largest steps


def figures(history) -> list:
    """The report's History section: a figure per series that stepped (at most FIGURES; alarms
    first, then by the size of the largest step), each its values by run, the bound of its
    newest reference and its change points, with the numbers as the figure's table."""
    from matplotlib.figure import Figure as Canvas  # noqa: PLC0415  only to draw
    from .figures import Figure, text  # noqa: PLC0415
    stepped = [s for s in history.series if s.change_points]
    stepped.sort(key=lambda s: (s.alarm() is None, -max(abs(math.log(cp.step)) for cp in s.change_points)))
    out = []
    for k, s in enumerate(stepped[:FIGURES]):
        fig = Canvas(figsize=(7, 3.2), layout="constrained")
        ax = fig.subplots()
        runs = [r + 1 for r in s.runs]
        ax.plot(runs, s.values, "o-", ms=3, lw=1, label=text(s.variable))
        if s.bound:
            ref, lower, upper = s.bound
            bound = ref * (1 + upper) if upper is not None else ref * (1 + lower)
            ax.axhline(ref, ls=":", c="grey", lw=1, label="reference")
            ax.axhline(bound, ls="--", c="grey", lw=1, label="its bound")
        alarm = s.alarm()
        for cp in s.change_points:
            ax.axvline(runs[cp.index] - 0.5, c="red" if cp is alarm else "orange", lw=1)
            ax.annotate(f"x{cp.step:.3g}", (runs[cp.index] - 0.5, 1), xycoords=("data", "axes fraction"),
                        fontsize=8, va="top", ha="left")
        ax.set_yscale("log")
        ax.set_xlabel("run")
        ax.set_ylabel(text(s.unit))
        ax.legend(fontsize=7, loc="best")
        title = f"{s.variable}: {s.case} @{s.system}+{s.environ}"
        steps = "; ".join(_cp_text(history, s, cp) for cp in s.change_points)
        caption = (f"{'WORSE: ' if alarm else ''}{len(s.values)} runs, one value each (the check's own statistic "
                   f"of that run); change points (vertical lines, red: the alarm): {steps}")
        rows = [(r, history.runs[i].date, f"{v:.4g}") for r, i, v in zip(runs, s.runs, s.values)]
        out.append(Figure(f"history-{k + 1}", title, caption, ("run", "started (UTC)", s.unit), rows, fig))
    return out
