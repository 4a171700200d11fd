"""The jitterbench command: what ReFrame and the C benchmarks do not do themselves."""
from __future__ import annotations

import argparse
import json
import sys

import getpass
import os

from . import __version__, references, results, runs, simulate


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
        cases = [c for run in references.read_report(path)["runs"] for c in run.get("testcases", [])]
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


def write_report(args):
    from . import report  # matplotlib and Jinja2: only for the commands that draw
    col = runs.collect(args.inputs)
    labels = col.labels()
    if not col.cases and not col.documents:
        raise runs.RunsError(f"no test case and no benchmark document in {', '.join(args.inputs)}")
    baseline = None
    if args.command == "compare":
        baseline = args.baseline or (col.measured_labels() or labels)[0]
        if baseline not in labels:
            raise runs.RunsError(f"no label '{baseline}' among {', '.join(labels)}")
    folder = args.output or (os.path.join(args.inputs[0], "report") if len(args.inputs) == 1 and os.path.isdir(
        args.inputs[0]) else "report")
    title = args.title or (f"jitterbench: {' vs '.join(labels)}" if baseline else f"jitterbench report: {', '.join(labels)}")
    return report.write(col, folder, title, baseline)


def _ints(text):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of whole numbers") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"'{text}': every value must be at least 1")
    return values


def _interrupts(text):
    try:
        period, tick, rate, rare = (float(v) for v in text.split(":"))
        return simulate.Interrupts(period, tick, rate, rare)
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(f"'{text}' is not PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US ({e})") from None


def simulate_alltoall(args) -> dict:
    """The SP2 study's resampling simulator: T all-to-alls on each P of --procs."""
    import numpy as np
    sample = simulate.load_samples(args.samples, args.entry)
    if args.interrupts and args.interrupt_trace:
        raise simulate.SimulationInputError("give --interrupts or --interrupt-trace, not both")
    interrupts = simulate.load_interrupt_trace(args.interrupt_trace) if args.interrupt_trace else args.interrupts
    rng = np.random.default_rng(args.seed)
    out = {"samples": str(args.samples), "sample_size": int(sample.size), "sample_mean_us": float(sample.mean()),
           "sample_sd_us": float(sample.std(ddof=1)) if sample.size > 1 else 0.0, "trials": args.trials,
           "seed": args.seed, "message_bytes": args.size,
           "interrupts": vars(args.interrupts) if args.interrupts else args.interrupt_trace, "procs": []}
    rows = []
    for P in args.procs:
        r = simulate.simulate_alltoall(sample, P, args.trials, rng, interrupts)
        total, idle0 = r["total_us"], r["idle_us"][:, 0]
        thr = simulate.throughput_mb_s(total, P, args.size)
        entry = {"P": P, "total_mean_us": float(total.mean()), "total_p50_us": float(np.percentile(total, 50)),
                 "total_p99_us": float(np.percentile(total, 99)), "throughput_mean_mb_s": float(thr.mean()),
                 "idle_mean_us": float(r["idle_us"].mean()), "idle0_zero_fraction": float((idle0 == 0).mean()),
                 "idle0_p50_us": float(np.percentile(idle0, 50)), "idle0_p99_us": float(np.percentile(idle0, 99)),
                 "idle0_max_us": float(idle0.max())}
        out["procs"].append(entry)
        rows.append((str(P), f"{entry['total_mean_us']:.1f}", f"{entry['total_p99_us']:.1f}",
                     f"{entry['throughput_mean_mb_s']:.3f}", f"{entry['idle_mean_us']:.1f}",
                     f"{entry['idle0_zero_fraction']:.3f}", f"{entry['idle0_p99_us']:.1f}"))
    header = ("P", "total us", "p99 us", "throughput MB/s", "idle us/proc", "P(idle0=0)", "idle0 p99 us")
    print(f"# {args.trials} simulated all-to-alls per P from {sample.size} exchange times "
          f"(mean {out['sample_mean_us']:.1f} us, sd {out['sample_sd_us']:.1f} us); throughput for "
          f"{args.size}-byte messages, as Table 1 defines it")
    print(_format_table(header, rows))
    return out


def simulate_halo(args) -> dict:
    """MAX at larger task counts from a jb-halo run's per-call MAX (run with --series)."""
    import numpy as np
    doc = results.load(args.halo_json)
    entry = args.entry or 0
    if doc["benchmark"] != "halo" or len(doc["results"]) <= entry:
        raise results.ResultsError(f"{args.halo_json}: not a jb-halo document with result {entry}")
    r = doc["results"][entry]
    if "series" not in r:
        raise results.ResultsError(f"{args.halo_json}: result {entry} has no per-call series (run jb-halo with --series)")
    measured_tasks = doc["metadata"]["ranks"]
    # upward only: below N0 a task no longer waits for as many neighbours, so AVG changes too
    tasks = sorted({n for n in args.tasks if n >= measured_tasks} | {measured_tasks})
    rng = np.random.default_rng(args.seed)
    pred = simulate.halo_extrapolation(r["series"]["max_us"], measured_tasks, tasks, rng)
    # Without the barrier's coupling tasks drift apart, delays average out within each task,
    # and the run's MAX is the slowest task's mean per call.  Per-task times come from the
    # merged histogram (bin middles), which also counts a task's waits for a delayed
    # neighbour: from a run of more than one task this limit is an overestimate.
    bins = r["histogram"]["bins"]
    per_task = np.repeat([np.sqrt(lo * hi) if lo > 0 and hi is not None else (hi or lo) for lo, hi, _ in bins],
                         [n for _, _, n in bins])
    uncoupled = simulate.halo_prediction(per_task, tasks, rng, r["calls"], barrier_coupled=False, n_boot=5)
    out = {"source": str(args.halo_json), "pattern": r.get("pattern"), "measured_tasks": measured_tasks,
           "measured_max_us": r["max_us"], "measured_avg_us": r["avg_us"], "predictions": []}
    rows = []
    for N in tasks:
        p = pred[N]
        # AVG is the per-task mean, which does not depend on N when tasks are alike
        out["predictions"].append({"tasks": N, "max_us": p["max_mean"], "max_se_us": p["max_se"],
                                   "avg_us": r["avg_us"], "ratio": p["max_mean"] / r["avg_us"],
                                   "max_uncoupled_us": uncoupled[N]["max_mean"]})
        rows.append((str(N), f"{p['max_mean']:.1f} +- {2 * p['max_se']:.1f}", f"{r['avg_us']:.1f}",
                     f"{p['max_mean'] / r['avg_us']:.2f}", f"{uncoupled[N]['max_mean']:.1f}",
                     f"{r['max_us']:.1f}" if N == measured_tasks else ""))
    print(f"# per-call MAX from the {len(r['series']['max_us'])} per-call MAX values of {measured_tasks} tasks in "
          f"{args.halo_json}: CDF G^(N/{measured_tasks}) (barrier-coupled calls, tasks alike and independent; "
          "+- two bootstrap standard errors)")
    print(_format_table(("tasks", "MAX us", "AVG us", "MAX/AVG", "MAX uncoupled", "measured MAX"), rows))
    return out


def _format_table(header, rows) -> str:
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
    for name, what in (("report", "one HTML report (figures as PNG and SVG beside it) of runs"),
                       ("compare", "compare systems or runs: the report, plus each label's ratio to a baseline")):
        p = sub.add_parser(name, help=what)
        p.add_argument("inputs", nargs="+", metavar="[LABEL=]PATH",
                       help="a run's folder (its report.json, else its perflogs), a ReFrame report or perflog, a "
                            "benchmark's JSON document, or a reference file (.yaml: measured, or a paper's); "
                            "LABEL= names what it holds (default: its system)")
        p.add_argument("-o", "--output", help="the report's folder (default: <the one folder given>/report, "
                                              "else ./report)")
        p.add_argument("--title", help="the page's title")
        if name == "compare":
            p.add_argument("--baseline", help="the label the others are set against (default: the first measured)")
    sim = sub.add_parser("simulate", help="predict all-to-all and halo times at scales not measured")
    simsub = sim.add_subparsers(dest="what", required=True)
    p = simsub.add_parser("alltoall", help="resample pairwise exchange times into all-to-alls (Tabe et al.)")
    p.add_argument("samples", help="exchange times: one value in us per line, or a jb-alltoall JSON")
    p.add_argument("--entry", type=int, help="which results entry of a JSON with several samples")
    p.add_argument("--procs", type=_ints, default=[2, 4, 8, 16, 32], help="processor counts [2,4,8,16,32]")
    p.add_argument("--trials", type=int, default=100000, help="all-to-alls per processor count [100000]")
    p.add_argument("--seed", type=int, default=1, help="random seed [1]")
    p.add_argument("--size", type=int, default=1024, help="message bytes, for the throughput [1024]")
    p.add_argument("--interrupts", type=_interrupts,
                   help="correlated interrupts PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US instead of "
                        "independent samples alone (the samples are then the uninterrupted times)")
    p.add_argument("--interrupt-trace", help="correlated interrupts replayed from a trace file, one event per "
                                             "line 'time_us cost_us' ('# length_us L' sets its period)")
    p.add_argument("--json", help="write the results here")
    p = simsub.add_parser("halo", help="predict jb-halo's MAX and AVG at larger task counts")
    p.add_argument("halo_json", help="a jb-halo --json document")
    p.add_argument("--entry", type=int, help="which results entry [0]")
    p.add_argument("--tasks", type=_ints, default=[16, 64, 256, 1024, 4096], help="task counts")
    p.add_argument("--seed", type=int, default=1, help="random seed, for the bootstrap [1]")
    p.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    try:
        if args.command == "summarize":
            print(summarize(args.files))
        elif args.command == "table":
            print(table(args.reports))
        elif args.command == "simulate":
            out = simulate_alltoall(args) if args.what == "alltoall" else simulate_halo(args)
            if args.json:
                write_atomically(args.json, json.dumps(out, indent=1) + "\n")
        elif args.command in ("report", "compare"):
            print(f"wrote {write_report(args)}")
        elif args.command == "reference":
            doc = references.build(args.reports, args.system, args.measured_by, args.min_slack, args.spread_factor)
            write_atomically(args.output, references.dump(doc))
            references.load(args.output)
            print(f"wrote {args.output}: {sum(1 for k in doc if k != 'provenance')} check(s) for system {args.system}")
    except (references.ReferenceFileError, simulate.SimulationInputError, runs.RunsError) as e:
        print(f"jitterbench: error: {e}", file=sys.stderr)
        return 2
    except (results.ResultsError, KeyError, TypeError) as e:
        msg = e if isinstance(e, results.ResultsError) else f"a result lacks a field: {e}"
        print(f"jitterbench: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
