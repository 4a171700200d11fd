"""The jitterbench command: what ReFrame and the C benchmarks do not do themselves."""
from __future__ import annotations

import argparse
import json
import sys

import getpass
import os
from pathlib import Path

from . import __version__, references, results


def write_atomically(path, text):
    """Whole or not at all: a temporary file beside the target, then rename."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise references.ReferenceFileError(f"cannot write {path}: {e.strerror}") from None


def summarize(paths) -> str:
    """One table of MAX, AVG and their ratio over several halo runs."""
    header = ("mpi", "placement", "off-node", "pattern", "size", "MAX us", "AVG us", "MAX/AVG", "p99(MAX)")
    rows = []
    for path in paths:
        doc = results.load(path)
        mpi = results.mpi_name(doc)
        for r in doc["results"]:
            size = r.get("ns_size"), r.get("ew_size")
            rows.append((
                mpi,
                r.get("placement", "-"),
                str(r.get("off_node_per_node", "-")),
                r.get("pattern", "-"),
                str(size[0]) if size[0] == size[1] else f"{size[0]}/{size[1]}",
                f"{r['max_us']:.1f}",
                f"{r['avg_us']:.1f}",
                f"{r['max_us'] / r['avg_us']:.2f}",
                f"{r['p99_us']:.1f}",
            ))
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def format_ref(pv):
    value, ref, lower, upper, unit = pv[:5]
    if lower is None and upper is None:
        return "-"
    pct = lambda x: "inf" if x is None else f"{x * 100:+.0f}%"  # noqa: E731
    return f"{ref:g} ({pct(lower)}/{pct(upper)})"


def table(report_paths) -> str:
    """One row per test case: check, environment, parameters, MAX, AVG, reference of MAX, result."""
    header = ("check", "environ", "parameters", "MAX us", "AVG us", "other", "MAX reference", "result")
    rows = []
    for path in report_paths:
        try:
            report = json.loads(Path(path).read_text())
            cases = [c for run in report["runs"] for c in run["testcases"]]
        except (OSError, ValueError, KeyError) as e:
            raise results.ResultsError(f"{path}: not a ReFrame run report: {e}") from None
        for case in cases:
            if case.get("fixture"):
                continue
            perf = {k.split(":")[-1]: v for k, v in (case.get("perfvalues") or {}).items()}
            if case["result"] == "skip" and not perf:
                continue
            params = " ".join(f"{k}={v}" for k, v in references.parameters(case).items())
            maxv, avgv = perf.pop("max", None), perf.pop("avg", None)
            other = " ".join(f"{k}={v[0]:.4g}" for k, v in perf.items() if v[0] is not None)
            rows.append((case["display_name"].split()[0], case["environ"], params,
                         f"{maxv[0]:.2f}" if maxv else "-", f"{avgv[0]:.2f}" if avgv else "-",
                         other or "-", format_ref(maxv) if maxv else "-",
                         case["result"] + (f" ({case['fail_phase']})" if case.get("fail_phase") else "")))
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jitterbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jitterbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("summarize", help="print MAX, AVG and MAX/AVG of jb-halo JSON files")
    p.add_argument("files", nargs="+", help="JSON files written by jb-halo --json")
    p = sub.add_parser("table", help="one table of a ReFrame run: check, parameters, MAX, AVG, reference, result")
    p.add_argument("reports", nargs="+", help="ReFrame run reports (--report-file)")
    p = sub.add_parser("reference", help="turn ReFrame runs of one system into its reference file")
    p.add_argument("reports", nargs="+", help="ReFrame run reports (--report-file), one per repeat")
    p.add_argument("--system", required=True, help="the ReFrame system the references are for")
    p.add_argument("-o", "--output", required=True, help="the reference file to write, e.g. reference_data/local.yaml")
    p.add_argument("--measured-by", default=f"{getpass.getuser()}@{os.uname().nodename}",
                   help="who measured (default: user@host)")
    p.add_argument("--min-slack", type=float, default=0.5,
                   help="the tightest bound either side, as a fraction of the value (default 0.5)")
    p.add_argument("--spread-factor", type=float, default=2.0,
                   help="bounds admit this many times the measured spread (default 2)")
    args = parser.parse_args(argv)
    try:
        if args.command == "summarize":
            print(summarize(args.files))
        elif args.command == "table":
            print(table(args.reports))
        elif args.command == "reference":
            doc = references.build(args.reports, args.system, args.measured_by, args.min_slack, args.spread_factor)
            write_atomically(args.output, references.dump(doc))
            references.load(args.output)
            print(f"wrote {args.output}: {sum(1 for k in doc if k != 'provenance')} check(s) for system {args.system}")
    except references.ReferenceFileError as e:
        print(f"jitterbench: error: {e}", file=sys.stderr)
        return 2
    except (results.ResultsError, KeyError, TypeError) as e:
        msg = e if isinstance(e, results.ResultsError) else f"a result lacks a field: {e}"
        print(f"jitterbench: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
