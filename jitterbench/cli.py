"""The jitterbench command: what ReFrame and the C benchmarks do not do themselves."""
from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections import defaultdict

from . import __version__, benchmarks, files, model, profile, references, results, runs, simulate, site
from .tables import format_table as _format_table


def summarize(paths) -> str:
    """A table per benchmark of the documents given, in the descriptors' order: a row per
    result, its MPI and the columns its descriptor names (halo: MAX, AVG, MAX/AVG, p99)."""
    rows = defaultdict(list)
    for path in paths:
        doc = results.load(path)
        described = benchmarks.by_benchmark(doc["benchmark"])
        if described is None:
            raise results.ResultsError(f"{path}: field benchmark names no benchmark jitterbench knows: "
                                       f"{doc['benchmark']!r:.40}")
        mpi = results.mpi_name(doc)
        for i, r in enumerate(doc["results"]):
            try:
                rows[described].append((mpi, *(column.cell(r) for column in described.summary)))
            except KeyError as e:
                raise results.ResultsError(f"{path}: field results[{i}].{e.args[0]} is missing") from None
    tables = [(d, _format_table(("mpi", *(c.header for c in d.summary)), rows[d])) for d in benchmarks.ALL if d in rows]
    return tables[0][1] if len(tables) == 1 else "\n\n".join(f"# jb-{d.benchmark}\n{table}" for d, table in tables)


def format_ref(pv):
    value, ref, lower, upper, unit = pv[:5]
    if ref is None or (lower is None and upper is None):
        return "-"
    pct = lambda x: "inf" if x is None else f"{x * 100:+.0f}%"  # noqa: E731
    return f"{ref:g} ({pct(lower)}/{pct(upper)})"


def table(report_paths) -> str:
    """One row per test case: check, environment, parameters, MAX, AVG, reference of MAX, result."""
    header = ("check", "environ", "parameters", "MAX us", "AVG us", "other", "MAX reference", "result")
    rows = []
    for path in report_paths:
        for case in references.report_cases(path)[1]:
            perf = {k.split(":")[-1]: v for k, v in (case.get("perfvalues") or {}).items()}
            params = " ".join(f"{k}={v}" for k, v in references.parameters(case).items())
            maxv, avgv = perf.pop("max", None), perf.pop("avg", None)
            other = " ".join(f"{k}={v[0]:.4g}" for k, v in perf.items() if v[0] is not None)
            rows.append((case["display_name"].split()[0], case["environ"], params,
                         *(f"{v[0]:.2f}" if v and v[0] is not None else "-" for v in (maxv, avgv)),
                         other or "-", format_ref(maxv) if maxv else "-",
                         case["result"] + (f" ({case['fail_phase']})" if case.get("fail_phase") else "")))
    return _format_table(header, rows)


def write_report(args):
    from . import report  # matplotlib and Jinja2: only for the commands that draw
    folder = args.output or (os.path.join(args.inputs[0], "report") if len(args.inputs) == 1 and os.path.isdir(
        args.inputs[0]) else "report")
    files.check_folder_output(folder)  # before the work: a folder that is not a report is never replaced
    col = runs.collect(args.inputs)
    labels = col.labels()
    if not col.cases and not col.documents:
        raise runs.RunsError(f"no test case and no benchmark document in {', '.join(args.inputs)}")
    baseline = None
    if args.command == "compare":
        baseline = args.baseline or (col.measured_labels() or labels)[0]
        if baseline not in labels:
            raise runs.RunsError(f"no label '{baseline}' among {', '.join(labels)}")
    title = args.title or (f"jitterbench: {' vs '.join(labels)}" if baseline else f"jitterbench report: {', '.join(labels)}")
    if baseline:  # a comparison of two transports is no comparison of two machines: say so where it is run
        for (environ, label), (mine, base) in report.transport_differences(col, baseline).items():
            print(f"warning: {label} and {baseline} used different transports in environment {environ}: "
                  f"{' | '.join(mine)} against {' | '.join(base)}", file=sys.stderr)
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
    if not sample.all():
        raise simulate.SimulationInputError(f"{args.samples}: an exchange time is 0: an all-to-all could take no "
                                            "time, at an infinite throughput")
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

    def need(ok, field, what):
        if not ok:
            raise results.ResultsError(f"{args.halo_json}: field {field} {what}")

    measured_tasks = doc["metadata"].get("ranks")
    need(isinstance(measured_tasks, int) and measured_tasks >= 1, "metadata.ranks", "is not a task count >= 1")
    field = f"results[{entry}]"
    series = r["series"]["max_us"]  # results.load: a list of numbers
    need(series and min(series) >= 0, f"{field}.series.max_us", "is empty or holds a time < 0")
    need(r.get("calls", 0) >= 1, f"{field}.calls", "is missing or 0")
    need(r.get("max_us") is not None, f"{field}.max_us", "is missing")
    need(r.get("avg_us") is not None and r["avg_us"] > 0, f"{field}.avg_us", "is not a time > 0")
    bins = (r.get("histogram") or {}).get("bins")
    need(bins and all(lo >= 0 and (hi is None or hi >= lo) and isinstance(n, int) and n >= 0 for lo, hi, n in bins)
         and sum(n for _, _, n in bins) > 0, f"{field}.histogram.bins", "is not [lower_us >= 0, upper_us, count >= 0] "
         "with a count > 0")
    # upward only: below N0 a task no longer waits for as many neighbours, so AVG changes too
    tasks = sorted({n for n in args.tasks if n >= measured_tasks} | {measured_tasks})
    rng = np.random.default_rng(args.seed)
    pred = simulate.halo_extrapolation(r["series"]["max_us"], measured_tasks, tasks, rng)
    # Without the barrier's coupling tasks drift apart, delays average out within each task,
    # and the run's MAX is the slowest task's mean per call.  Per-task times come from the
    # merged histogram (bin middles), which also counts a task's waits for a delayed
    # neighbour: from a run of more than one task this limit is an overestimate.
    per_task = model.per_task_times(bins)
    uncoupled = simulate.halo_prediction(per_task, tasks, rng, r["calls"], barrier_coupled=False, n_boot=5)
    # every task also replays a noise trace (jb-noise --trace) from its own offset
    trace = simulate.load_interrupt_trace(args.interrupt_trace) if args.interrupt_trace else None
    noisy = simulate.halo_trace_prediction(series, measured_tasks, tasks, trace, rng) if trace else {}
    out = {"source": str(args.halo_json), "pattern": r.get("pattern"), "measured_tasks": measured_tasks,
           "measured_max_us": r["max_us"], "measured_avg_us": r["avg_us"], "interrupt_trace": args.interrupt_trace,
           "predictions": []}
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
        if trace:
            t = noisy[N]
            out["predictions"][-1].update(max_trace_us=t["max_mean"], max_trace_se_us=t["max_se"],
                                          detour_fraction=t["detour_fraction"],
                                          detour_fraction_se=t["detour_fraction_se"])
            rows[-1] += (f"{t['max_mean']:.1f} +- {2 * t['max_se']:.1f}",
                         f"{t['detour_fraction']:.4f} +- {2 * t['detour_fraction_se']:.4f}")
    print(f"# per-call MAX from the {len(r['series']['max_us'])} per-call MAX values of {measured_tasks} tasks in "
          f"{args.halo_json}: CDF G^(N/{measured_tasks}) (barrier-coupled calls, tasks alike and independent; "
          "+- two bootstrap standard errors)")
    if trace:
        print(f"# MAX with trace: every task also replays the {trace.times.size} detours of {args.interrupt_trace} "
              f"({trace.length / 1e6:.6g} s) from its own offset; P(detour): the share of calls in which some task "
              "meets one")
    print(_format_table(("tasks", "MAX us", "AVG us", "MAX/AVG", "MAX uncoupled", "measured MAX")
                        + (("MAX with trace", "P(detour)") if trace else ()), rows))
    return out


def _at_least(minimum):
    """An argparse type: a whole number >= minimum."""
    def whole(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return value
    return whole


def _finite(text):
    """An argparse type: a finite number (a bound of nan or inf would be no bound at all)."""
    value = files.parse_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a finite number")
    return float(value)


def _user_at_host() -> str:
    """Who measured, by default: user@host.  A container may run under a uid with no passwd
    entry, hence no user name: then the uid stands for it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # KeyError up to Python 3.12, OSError from 3.13
        user = f"uid{os.getuid()}"
    return f"{user}@{os.uname().nodename}"


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jitterbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"jitterbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("summarize", help="print the results of benchmarks' JSON files, a table per benchmark")
    p.add_argument("files", nargs="+", help="JSON files written by the benchmarks' --json (jb-halo, ...)")
    p = sub.add_parser("table", help="one table of a ReFrame run: check, parameters, MAX, AVG, reference, result")
    p.add_argument("reports", nargs="+", help="ReFrame run reports (--report-file)")
    p = sub.add_parser("reference", help="turn ReFrame runs of one system into its reference file")
    p.add_argument("reports", nargs="+", help="ReFrame run reports (--report-file), one per repeat")
    p.add_argument("--system", required=True, help="the ReFrame system the references are for")
    p.add_argument("-o", "--output", required=True, help="the reference file to write, e.g. reference_data/local.yaml "
                                                         "(replaced whole, or left as it was)")
    p.add_argument("--measured-by", help="who measured (default: user@host)")
    p.add_argument("--min-slack", type=_finite, default=0.5,
                   help="the tightest bound either side, as a fraction of the value (default 0.5)")
    p.add_argument("--spread-factor", type=_finite, default=2.0,
                   help="bounds admit this many times the measured spread (default 2)")
    for name, what in (("report", "one HTML report (figures as PNG and SVG beside it) of runs"),
                       ("compare", "compare systems or runs: the report, plus each label's ratio to a baseline")):
        p = sub.add_parser(name, help=what)
        p.add_argument("inputs", nargs="+", metavar="[LABEL=]PATH",
                       help="a run's folder (its report.json, else its perflogs), a ReFrame report or perflog, a "
                            "benchmark's JSON document, or a reference file (.yaml: measured, or a paper's); "
                            "LABEL= names what it holds (default: its system)")
        p.add_argument("-o", "--output", help="the report's folder (default: <the one folder given>/report, "
                                              "else ./report); an existing one is replaced only if it is an "
                                              "earlier report")
        p.add_argument("--title", help="the page's title")
        if name == "compare":
            p.add_argument("--baseline", help="the label the others are set against (default: the first measured)")
    # plan has its own parser (jitterbench.plan): listed here for --help, handed its arguments in main
    sub.add_parser("plan", help="what a mode will run on a system and its machine time, before it runs "
                                "(jitterbench plan --help)", add_help=False)
    sim = sub.add_parser("simulate", help="predict all-to-all and halo times at scales not measured")
    simsub = sim.add_subparsers(dest="what", required=True)
    p = simsub.add_parser("alltoall", help="resample pairwise exchange times into all-to-alls (Tabe et al.)")
    p.add_argument("samples", help="exchange times: one value in us per line, or a jb-alltoall JSON")
    p.add_argument("--entry", type=_at_least(0), help="which results entry of a JSON with several samples")
    p.add_argument("--procs", type=_ints, default=[2, 4, 8, 16, 32], help="processor counts [2,4,8,16,32]")
    p.add_argument("--trials", type=_at_least(1), default=100000, help="all-to-alls per processor count [100000]")
    p.add_argument("--seed", type=_at_least(0), default=1, help="random seed [1]")
    p.add_argument("--size", type=_at_least(0), default=1024, help="message bytes, for the throughput [1024]")
    p.add_argument("--interrupts", type=_interrupts,
                   help="correlated interrupts PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US instead of "
                        "independent samples alone (the samples are then the uninterrupted times)")
    p.add_argument("--interrupt-trace", help="correlated interrupts replayed from a trace file, one event per "
                                             "line 'time_us cost_us' ('# length_us L' sets its period)")
    p.add_argument("--json", help="write the results here")
    p = simsub.add_parser("halo", help="predict jb-halo's MAX and AVG at larger task counts")
    p.add_argument("halo_json", help="a jb-halo --json document")
    p.add_argument("--entry", type=_at_least(0), help="which results entry [0]")
    p.add_argument("--tasks", type=_ints, default=[16, 64, 256, 1024, 4096], help="task counts")
    p.add_argument("--seed", type=_at_least(0), default=1, help="random seed, for the bootstrap [1]")
    p.add_argument("--interrupt-trace", help="every task also replays this noise trace (jb-noise --trace: "
                                             "'start_us length_us' a line) from its own offset")
    p.add_argument("--json", help="write the results here")
    profile.add_arguments(simsub.add_parser("profile", help="normalized run time under network profiles of "
                                                            "latency and bandwidth, with and without overlap (paper 004)"))
    site.add_arguments(sub.add_parser("site", help="a site's systems/sites/ files: `jitterbench site new NAME ...` "
                                                   "writes its ReFrame system and its Spack externals"))
    return parser


def run(args) -> None:
    if args.command == "summarize":
        print(summarize(args.files))
    elif args.command == "table":
        print(table(args.reports))
    elif args.command == "simulate":
        out = {"alltoall": simulate_alltoall, "halo": simulate_halo, "profile": profile.command}[args.what](args)
        if args.json:
            try:
                text = json.dumps(out, indent=1, allow_nan=False) + "\n"
            except ValueError:
                raise simulate.SimulationInputError(f"the results hold a number that is not finite; "
                                                    f"{args.json} not written") from None
            files.write_text(args.json, text)
    elif args.command == "site":
        site.command(args)
    elif args.command in ("report", "compare"):
        print(f"wrote {write_report(args)}")
    elif args.command == "reference":
        doc = references.build(args.reports, args.system, args.measured_by or _user_at_host(), args.min_slack,
                               args.spread_factor)
        text = references.dump(doc)
        references.loads(text, args.output)  # the file ReFrame will read: checked before it replaces any
        files.write_text(args.output, text)
        print(f"wrote {args.output}: {sum(1 for k in doc if k != 'provenance')} check(s) for system {args.system}")


# What a bad input or output raises: each one line naming the file, and where it applies the field.
ERRORS = (files.OutputError, references.ReferenceFileError, results.ResultsError, runs.RunsError,
          simulate.SimulationInputError, site.SiteError)


def main(argv=None) -> int:
    """The command: 0 when done, 2 with one line on standard error for a bad input or
    output, 130 on Ctrl-C (with nothing left half-written)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["plan"]:
        from . import plan  # noqa: PLC0415  only plan needs ReFrame's configuration machinery
        try:
            return plan.main(argv[1:])
        except KeyboardInterrupt:
            print("jitterbench: interrupted", file=sys.stderr)
            return 130
    try:
        run(parser().parse_args(argv))
    except ERRORS as e:
        print(f"jitterbench: error: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError) as e:  # a shape no reader checked for: still one line
        print(f"jitterbench: error: an input lacks a field or holds one of the wrong kind ({type(e).__name__}: "
              f"{e})", file=sys.stderr)
        return 2
    except MemoryError as e:  # numpy's says how much it wanted: one line
        print(f"jitterbench: error: not enough memory for this run: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jitterbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of the output (head, less) has gone: nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that Python's exit flush is quiet
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
