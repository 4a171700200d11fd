"""`jitterbench report` and `jitterbench compare`: one self-contained HTML file (figures
embedded), the figures beside it as PNG and SVG, and the tables of their numbers.

report: the runs given, as they are.  compare: the same, plus per performance variable
of every variant the ratio of each label to a baseline with its interval and test
(compare.py), and the values the papers state beside their measured counterparts.
Every string from the inputs reaches the page through Jinja2's autoescaping.
"""
from __future__ import annotations

import base64
import io
import os
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from . import __version__, benchmarks, compare, figures, files, findings, report_figures, transports, verdict_table
from . import history as histories
from .runs import Collection

ENV = jinja2.Environment(loader=jinja2.PackageLoader("jitterbench", "templates"),
                         autoescape=True, undefined=jinja2.StrictUndefined)


def factors(col: Collection, environment=False):
    """What every label ran with (Hoefler and Belli: record every factor): per label and
    environment, what decides the numbers (the MPI library, its transport, the binding, the
    nodes, the eager variables set, placement, versions); with environment, the protocol
    variables the benchmarks saw instead (the raw environment, a page of its own)."""
    rows = defaultdict(lambda: defaultdict(set))
    for c in col.cases:
        if c.kind != "measured":
            continue
        row = rows[(c.label, c.system, c.partition, c.environ)]
        if environment:
            for d in c.documents:
                row["protocol variables"].update(f"{k}={v}" for k, v in d["metadata"].get("environment", {}).items())
            continue
        row["MPI library"].add(c.meta.get("mpi_library", ""))
        row["transport (the MPI's account)"].add(c.meta.get("transport", ""))
        if c.meta.get("binding") or c.meta.get("binding_asked"):
            row["binding (asked, found)"].add(f"{c.meta.get('binding_asked', '-')}, {c.meta.get('binding', '-')}")
        row["nodes used"].add(str(c.meta.get("node_list", c.meta.get("job_nodelist", ""))))
        row["eager variable set"].add(f"{c.meta.get('eager_var') or '(default)'}={c.params.get('eager_limit', '-')}")
        row["network devices"].add(c.meta.get("network", ""))
        for p in ("placement", "distribution", "tasks_per_node"):
            if p in c.params:
                row[p].add(str(c.params[p]))
        for d in c.documents:
            row["jitterbench"].add(d["metadata"].get("benchmark_version", ""))
    return [{"key": k, "factors": {name: ", ".join(sorted(v for v in values if v)) or "-"
                                   for name, values in row.items()}} for k, row in rows.items()]


def transport_differences(col: Collection, baseline: str):
    """Where a label's runs used another transport than the baseline's in the same
    environment (by the MPI's own account, node names aside): {(environ, label):
    (the label's transports, the baseline's)}.  Such a comparison measures the
    transport, not the machine: compare says so."""
    used = defaultdict(set)
    for c in col.cases:
        if c.kind == "measured" and c.meta.get("transport"):
            used[(c.environ, c.label)].update(transports.accounts_of(c.meta["transport"]))
    return {(environ, label): (sorted(mine), sorted(used[(environ, baseline)]))
            for (environ, label), mine in used.items()
            if label != baseline and (environ, baseline) in used and mine != used[(environ, baseline)]}


def comparisons(col: Collection, baseline: str):
    """One row per variant and variable that the baseline and at least one other label have.
    A reference file's value (kind reference or paper) counts for every measured variant
    whose parameters include those of its index."""
    samples = defaultdict(lambda: defaultdict(list))
    units = {}

    def add(key, label, var, p):
        if p.value is not None:
            samples[(*key, var)][label].append(p.value)
            units[var] = p.unit

    measured = {}
    for c in col.cases:
        if c.kind == "measured":
            key = (c.check, c.environ, tuple(sorted(c.params.items())))
            measured[key] = dict(c.params)
            for var, p in c.perf.items():
                add(key, c.label, var, p)
    for c in col.cases:
        if c.kind != "measured":
            for key, params in measured.items():
                if key[0] == c.check and c.environ in ("*", key[1]) and c.params.items() <= params.items():
                    for var, p in c.perf.items():
                        add(key, c.label, var, p)
    differs = transport_differences(col, baseline)
    out, pairs = [], []
    for (check, environ, params, var), by_label in sorted(samples.items(), key=lambda kv: repr(kv[0])):
        base = by_label.get(baseline)
        if not base or len(by_label) < 2:
            continue
        for label, values in by_label.items():
            if label != baseline:
                out.append({"check": check, "environ": environ, "params": " ".join(f"{k}={v}" for k, v in params),
                            "var": var, "unit": units[var], "label": label,
                            "result": compare.compare(values, base, units[var], check, var),
                            "transport": differs.get((environ, label))})
                pairs.append((values, base))
    compare.decide([r["result"] for r in out], pairs)  # Holm: over every variable compared at once
    return out


def counterpart(col: Collection, label: str, metric: str, at: dict):
    """The measured value of a label that a paper's stated value is set beside (its
    reference file names the metric, a benchmark's descriptor measures it), or None where
    the runs hold none."""
    measure = benchmarks.counterpart(metric)
    return measure([c for c in col.cases if c.label == label and c.kind == "measured"], at) if measure else None


def beside_papers(col: Collection):
    measured = col.measured_labels()
    rows = []
    for paper, path, s in col.stated:
        values = {lab: counterpart(col, lab, s["metric"], s.get("at") or {}) for lab in measured} if s.get(
            "metric") else {}
        rows.append({"paper": paper, "file": os.path.basename(path), "stated": s, "measured": values})
    return measured, rows


def _embed(fig: figures.Figure, folder: Path):
    """Writes the figure as PNG and SVG; returns the PNG as a data URI for the page and
    the files written."""
    if fig.figure is None:
        return None, []
    fig.figure.savefig(folder / f"{fig.name}.svg")
    png = io.BytesIO()
    fig.figure.savefig(png, format="png", dpi=110)
    (folder / f"{fig.name}.png").write_bytes(png.getvalue())
    return "data:image/png;base64," + base64.b64encode(png.getvalue()).decode(), [
        f"{folder.name}/{fig.name}.svg", f"{folder.name}/{fig.name}.png"]


def write(col: Collection, out: Path, title: str, baseline: str | None = None, history=None) -> Path:
    """The report in folder out: index.html, figures/*.png and *.svg.  Made beside out and
    swapped in whole (files.write_folder), and only over a report written earlier: any
    other folder or file at out is left alone, and the error says so."""
    def fill(folder: Path):
        (folder / "figures").mkdir()
        figs = report_figures.all_figures(col, baseline)
        history_figs = histories.figures(history) if history else []
        images, written = {}, ["index.html"]
        for f in [*figs, *history_figs]:
            images[f.name], files_of_figure = _embed(f, folder / "figures")
            written += files_of_figure
        measured, papers = beside_papers(col)
        common = {"title": title, "version": __version__, "col": col,
                  "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
        html = ENV.get_template("report.html.j2").render(
            **common, figures=figs, images=images, factors=factors(col),
            verdicts=verdict_table.summarize([c for c in col.cases if c.kind == "measured"]),
            node_findings=verdict_table.node_findings([c for c in col.cases if c.kind == "measured"]),
            baseline=baseline, comparisons=comparisons(col, baseline) if baseline else None,
            measured=measured, papers=papers, findings=findings.rows(col), fmt=figures.fmt, alpha=compare.ALPHA,
            history=history, history_figures=history_figs,
            history_text=histories.text(history).split("\n\n")[0] if history else "")
        (folder / "index.html").write_text(html)
        (folder / "environment.html").write_text(ENV.get_template("environment.html.j2").render(
            **common, factors=factors(col, environment=True)))
        return [*written, "environment.html"]

    files.write_folder(out, fill, f"jitterbench {__version__} report")
    return Path(out) / "index.html"
