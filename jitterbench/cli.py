"""The jitterbench command: what ReFrame and the C benchmarks do not do themselves."""
from __future__ import annotations

import argparse
import sys

from . import __version__, results


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jitterbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jitterbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("summarize", help="print MAX, AVG and MAX/AVG of jb-halo JSON files")
    p.add_argument("files", nargs="+", help="JSON files written by jb-halo --json")
    args = parser.parse_args(argv)
    try:
        if args.command == "summarize":
            print(summarize(args.files))
    except (results.ResultsError, KeyError, TypeError) as e:
        msg = e if isinstance(e, results.ResultsError) else f"a result lacks a field: {e}"
        print(f"jitterbench: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
