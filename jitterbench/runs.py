"""Runs to report on and compare: ReFrame run reports and perflogs, the benchmarks'
JSON documents, and reference files (measured, or stated by a paper), read into one
collection of test cases.

A test case is one variant of one check on one system, with its performance values and
the factors it ran with (MPI library, eager-limit variable, node list, placement).  Every
case carries a label: the system's name, or the name given to its input (LABEL=PATH),
so that two runs of one machine can be compared as two.  Cases of one label with the
same parameters are repeats.
"""
from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from . import benchmarks, references, reframe_report, results, sweeps
from .files import parse_number, read_json, read_text


class RunsError(ValueError):
    """An input that cannot be used at all; the message names it."""


@dataclass
class Perf:
    value: float | None
    unit: str
    ref: float | None = None
    lower: float | None = None
    upper: float | None = None


@dataclass
class Case:
    label: str
    system: str
    partition: str
    environ: str
    check: str
    params: dict
    perf: dict                      # variable -> Perf
    result: str = "pass"
    run: str = ""                   # which run (session) it belongs to
    source: str = ""                # the file it was read from
    meta: dict = field(default_factory=dict)       # mpi_library, eager_var, node_list, ...
    documents: list = field(default_factory=list)  # the benchmark's own JSON documents
    kind: str = "measured"          # measured, reference (a reference file's value) or paper

    def value(self, var):
        p = self.perf.get(var)
        return None if p is None else p.value


@dataclass
class Run:
    """One input's provenance, for the report's metadata table."""
    label: str
    kind: str
    path: str
    system: str = ""
    hostname: str = ""
    started: str = ""
    reframe: str = ""
    cmdline: str = ""
    cases: int = 0


@dataclass
class Collection:
    cases: list = field(default_factory=list)
    documents: list = field(default_factory=list)   # (label, path, doc) given on their own
    stated: list = field(default_factory=list)      # (label, path, stated entry) of papers' reference files
    runs: list = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # path -> malformed lines or files passed over

    def labels(self):
        return list(dict.fromkeys([c.label for c in self.cases] + [s[0] for s in self.stated] +
                                  [d[0] for d in self.documents]))

    def measured_labels(self):
        """The labels of measured runs, not of reference files."""
        return list(dict.fromkeys(c.label for c in self.cases if c.kind == "measured"))

    def of(self, check):
        return [c for c in self.cases if c.check == check]


def _typed(text):
    """A perflog field as the value ReFrame logged: int, float, None or the string (also
    for nan, inf or 1e999, which no measurement is: a value so logged is not a number)."""
    if text in ("None", "null", ""):
        return None
    number = parse_number(text)
    return text if number is None else number


def _documents(outputdir, keep_files, skipped):
    """The benchmark's JSON documents a case kept: the files its keep_files name, and those in the
    folders they name (a case of several launches keeps launch-1/, launch-2/, ...: one each)."""
    docs = []
    for name in filter(None, keep_files or []) if outputdir else []:
        for kept in sorted(Path(outputdir).glob(name)):
            for path in sorted(kept.glob("*.json")) if kept.is_dir() else [kept]:
                if path.suffix != ".json":
                    continue
                try:
                    docs.append(results.load(path))
                except results.ResultsError:
                    skipped[str(path)] += 1
    return docs


def _moved(path, old_prefix, new_prefix):
    """A path under a run's output folder, after that folder was moved (CI artifacts)."""
    if not path or not old_prefix or Path(path).exists():
        return path
    try:
        return str(Path(new_prefix) / Path(path).relative_to(old_prefix))
    except ValueError:
        return path


# the factors of a case kept from a report or perflog: transport is the MPI's own account of what it
# used per node (jitterbench.transports), network the devices each node had
META = ("mpi_library", "eager_var", "node_list", "job_nodelist", "num_tasks", "job_completion_time", "transport",
        "network", "worst_node", "binding", "binding_asked", "cpu", "hardware", "references_from", "not_asserted",
        "node_finding", "node_peers")


def read_report(path, label, skipped):
    info, testcases = reframe_report.report_cases(path)
    cases = []
    for c in testcases:
        perf = {name.split(":")[-1]: Perf(v[0], v[4], v[1], v[2], v[3])
                for name, v in (c.get("perfvalues") or {}).items()}
        # a case run in rounds kept each round's launches in that round's own folder
        outputdirs = [_moved(o, info.get("prefix_output"), Path(path).parent / "output")
                      for o in c.get("round_outputdirs") or [c.get("outputdir")]]
        cases.append(Case(
            label=label or c["system"], system=c["system"], partition=c["partition"], environ=c["environ"],
            check=c["display_name"].split()[0], params=reframe_report.parameters(c), perf=perf,
            result=reframe_report.outcome(c),
            run=info.get("uuid", str(path)), source=str(path),
            meta={k: c.get(k) for k in META if c.get(k) not in (None, "")},
            documents=[d for outputdir in outputdirs for d in _documents(outputdir, c.get("keep_files"), skipped)]))
    systems = sorted({c.system for c in cases})
    return sweeps.unswept(cases), Run(label or ",".join(systems), "ReFrame run report", str(path), ",".join(systems),
                      info.get("hostname", ""), info.get("time_start", ""), info.get("version", ""),
                      info.get("cmdline", ""), len(cases))


def read_perflog(path, label, skipped):
    """Every well-formed line of a perflog; a line that does not fit its header is
    skipped and counted."""
    header, cases = None, []
    for line in read_text(path, RunsError).splitlines():
        fields = line.split("|")
        if fields[:2] == ["job_completion_time", "result"]:
            header = fields
            continue
        if header is None or len(fields) != len(header):
            skipped[str(path)] += 1
            continue
        row = dict(zip(header, fields))
        try:
            names = reframe_report.parameter_names(row["display_name"])
            perf = {k[:-6]: Perf(_typed(row[k]), row[f"{k[:-6]}_unit"], _typed(row[f"{k[:-6]}_ref"]),
                                 _typed(row[f"{k[:-6]}_lower_thres"]), _typed(row[f"{k[:-6]}_upper_thres"]))
                    for k in header if k.endswith("_value") and f"{k[:-6]}_unit" in row}
            if any(p.value is not None and not isinstance(p.value, (int, float)) for p in perf.values()):
                raise ValueError("a performance value is not a number")
            if row["result"] == "pass" and not reframe_report.holds_the_figure(row):
                continue  # an earlier round of a case (harness.rounds.Rounds): its figure is in the last round's row
            cases.append(Case(
                label=label or row["system"], system=row["system"], partition=row["partition"],
                environ=row["environ"], check=row["display_name"].split()[0],
                params={n: _typed(row[n]) for n in names}, perf=perf, result=row["result"],
                run=f"{path}:{row['job_completion_time']}", source=str(path),
                meta={k: row[k] for k in META if row.get(k) not in (None, "", "null")},
                documents=_documents(row.get("outputdir"), row.get("keep_files", "").split(","), skipped)))
        except (KeyError, ValueError):
            skipped[str(path)] += 1
    if header is None:
        raise RunsError(f"{path}: not a ReFrame perflog (no header line)")
    systems = sorted({c.system for c in cases})
    return sweeps.unswept(cases), Run(label or ",".join(systems), "ReFrame perflog", str(path), ",".join(systems), cases=len(cases))


def read_references(path, label):
    """A reference file as cases (its values, one repeat each) and, from a paper's file,
    its stated values."""
    doc = references.load(path)
    prov = doc["provenance"]
    label = label or prov["system"]
    kind = "paper" if prov.get("source") == "paper" else "reference"
    cases = []
    for check, entry in doc.items():
        if check in references.SECTIONS:
            continue
        index = entry["$index"]

        def walk(node, keys):
            if len(keys) == len(index):
                values = dict(zip(index, keys))
                partition = str(values.pop("$partition", f"{prov['system']}:"))
                cases.append(Case(
                    label=label, system=prov["system"], partition=partition.split(":")[-1],
                    environ=str(values.pop("$environ", "*")), check=check, params=values,
                    perf={var: Perf(v[0], v[3] if len(v) > 3 else "") for var, v in node.items()
                          if isinstance(v, list) and not (v and v[0] == "$xfail")},
                    run=str(path), source=str(path), kind=kind))
                return
            for k, v in node.items():
                walk(v, keys + [k])

        walk({k: v for k, v in entry.items() if k != "$index"}, [])
    stated = [(label, str(path), s) for s in references.stated(doc)]
    run = Run(label, f"reference file ({prov.get('source', '?')})", str(path), prov["system"],
              started=str(prov.get("date", "")), cmdline=str(prov.get("measured_by", "")), cases=len(cases))
    return sweeps.unswept(cases), stated, run


def network_summary(meta):
    """A document's network devices as its '# network:' line shows them: 'n1,n2: eth0 up ...'."""
    groups = meta.get("network")
    if not isinstance(groups, list):
        return ""
    return " | ".join(f"{','.join(map(str, g.get('nodes', [])))}: {g.get('devices', '')}"
                      for g in groups if isinstance(g, dict))


def document_cases(label, path, doc):
    """A benchmark's JSON document given on its own, as cases: those its descriptor reads
    from it (jitterbench.benchmarks), named as the benchmark's ReFrame check names them."""
    meta = doc["metadata"]
    described = benchmarks.by_benchmark(doc["benchmark"])
    try:
        variants = list(described.cases(doc)) if described else []
    except KeyError as e:
        raise RunsError(f"{path}: a result of jb-{doc['benchmark']} lacks the field {e.args[0]}") from None
    shape = {"nodes": meta.get("nodes"), "tasks_per_node": meta.get("tasks_per_node")}
    lib = meta.get("mpi_library", "")
    return [Case(label=label, system=label, partition="", environ=results.mpi_name(doc), check=described.check,
                 params={**shape, **params}, perf={var: Perf(*value) for var, value in perf.items()}, run=str(path),
                 source=str(path), documents=[doc], kind="measured",
                 meta={"mpi_library": lib.splitlines()[0] if lib else "", "node_list": meta.get("node_list", ""),
                       "network": network_summary(meta)})
            for params, perf in variants]


def _is_perflog(path) -> bool:
    """Whether a file opens with the header line of jitterbench's perflogs (systems/config.py's
    handlers_perflog format): ReFrame's own log, reframe.log, and any other *.log do not."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline(200).startswith(PERFLOG_HEADER)
    except OSError:
        return False


PERFLOG_HEADER = "job_completion_time|result|"


def _inputs(spec):
    """LABEL=PATH or PATH -> (label or None, the files it stands for)."""
    label, _, name = spec.rpartition("=") if "=" in spec and not Path(spec).exists() else ("", "", spec)
    path = Path(name)
    if not path.exists():
        raise RunsError(f"{name}: no such file or folder")
    if path.is_dir():
        reports = sorted(p for p in path.rglob("report.json") if p.parent.name != "build")
        logs = sorted(path.rglob("perflogs/**/*.log")) or sorted(path.rglob("*.log"))
        files = reports or [p for p in logs if _is_perflog(p)]  # never reframe.log, ReFrame's own
        if not files:
            raise RunsError(f"{name}: holds no ReFrame run report (report.json) and no perflog: a listing "
                            f"(reframe -l) writes neither; run the checks (reframe ... -r) first")
        return label or None, files
    return label or None, [path]


def collect(specs, progress=True) -> Collection:
    """Reads every input: a run's folder (its report.json, else its perflogs), a ReFrame
    run report, a perflog, a benchmark's JSON document or a reference file (.yaml)."""
    out = Collection()
    files = [(label, f) for spec in specs for label, fs in [_inputs(spec)] for f in fs]
    seen = {}
    for label, path in files:  # one run read twice would be listed twice, its repeats counted twice
        key = (label, os.path.realpath(path))
        if key in seen:
            raise RunsError(f"{path} is given twice{' under label ' + label if label else ''} "
                            f"({seen[key]} and {path}): give each run once")
        seen[key] = path
    # a progress bar on a terminal only: in a log or a pipe its carriage returns are lines of their own
    quiet = not progress or len(files) < 4 or not sys.stderr.isatty()
    for label, path in tqdm(files, desc="reading runs", unit="file", disable=quiet,
                            leave=False):
        if path.suffix in (".yaml", ".yml"):
            cases, stated, run = read_references(path, label)
            out.cases += cases
            out.stated += stated
        elif path.suffix == ".json":
            doc = read_json(path, RunsError)
            if isinstance(doc, dict) and "session_info" in doc:
                cases, run = read_report(path, label, out.skipped)
                out.cases += cases
            else:
                doc = results.load(path)
                name = label or results.mpi_name(doc)
                out.documents.append((name, str(path), doc))
                out.cases += document_cases(name, path, doc)
                run = Run(name, f"jb-{doc['benchmark']} document", str(path), started=doc["metadata"].get(
                    "finished_utc", ""), cmdline=doc["metadata"].get("command_line", ""), cases=len(doc["results"]))
        else:
            cases, run = read_perflog(path, label, out.skipped)
            out.cases += cases
        out.runs.append(run)
    return out
