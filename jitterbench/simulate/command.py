"""The `jitterbench simulate` subcommands, each a driver of a model: alltoall and halo of
jitterbench.simulate (resampling measured times), profile of jitterbench.simulate.profile (a
measured step under other networks).  Each driver prints its table and returns what --json
writes; the models compute without printing (simulate.alltoall_results, profile.predict), for
the papers' checks too (reframe_checks/papers.py), which call them in ReFrame's process."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import sys

import numpy as np

from .. import files, results, simulate
from ..console import format_table, subcommand
from . import alltoall as alltoall_model  # named apart from this module's alltoall(), which drives it
from . import profile
from .resampling import CHUNK_ELEMENTS
from .samples import SimulationInputError


# ---- argparse types: each a refusal in one line, naming the value ---------------------------

def whole(minimum):
    """A whole number >= minimum."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return value
    return parse


def counts(minimum):
    """Comma-separated whole numbers >= minimum."""
    def parse(text):
        try:
            values = [int(v) for v in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a comma-separated list of whole numbers") from None
        if any(v < minimum for v in values):
            raise argparse.ArgumentTypeError(f"'{text[:40]}': every value must be at least {minimum}")
        return values
    parse.__name__ = "counts"
    return parse


def number(text):
    """A finite number >= 0."""
    value = files.parse_number(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a finite number >= 0")
    return float(value)


def numbers(text):
    """Comma-separated finite numbers > 0."""
    values = [files.parse_number(v) for v in text.split(",")]
    if not values or any(v is None or v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a comma-separated list of finite numbers > 0")
    return [float(v) for v in values]


def interrupts(text):
    """PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US."""
    try:
        period, tick, rate, rare = (float(v) for v in text.split(":"))
        return simulate.Interrupts(period, tick, rate, rare)
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(f"'{text}' is not PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US ({e})") from None


def add_arguments(sim) -> None:
    """The subcommands of the `simulate` parser sim."""
    simsub = sim.add_subparsers(dest="what", required=True, metavar="WHAT")
    p = subcommand(simsub, "alltoall", "resample pairwise exchange times into all-to-alls (Tabe et al.)",
                   "docs/cli.md")
    p.add_argument("samples", metavar="SAMPLES", help="exchange times: one value in us per line, or a jb-alltoall JSON")
    p.add_argument("--entry", type=whole(0), metavar="N",
                   help="which results entry of a JSON with several samples (default: the only one)")
    p.add_argument("--procs", type=counts(2), default=[2, 4, 8, 16, 32], metavar="P,P,...",
                   help="processor counts (default: 2,4,8,16,32)")
    p.add_argument("--trials", type=whole(1), default=100000, metavar="N",
                   help="all-to-alls per processor count (default: 100000)")
    p.add_argument("--seed", type=whole(0), default=1, metavar="N", help="random seed (default: 1)")
    p.add_argument("--size", type=whole(0), default=1024, metavar="BYTES",
                   help="message bytes, for the throughput (default: 1024)")
    p.add_argument("--interrupts", type=interrupts, metavar="PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US",
                   help="correlated interrupts PERIOD_US:TICK_US:RARE_RATE_PER_US:RARE_US instead of "
                        "independent samples alone (the samples are then the uninterrupted times)")
    p.add_argument("--interrupt-trace", metavar="FILE", help="correlated interrupts replayed from a trace file, one "
                                                             "event per line 'time_us cost_us' ('# length_us L' sets "
                                                             "its period)")
    p.add_argument("--json", metavar="FILE", help="write the results here")
    p.add_argument("--force", action="store_true", help="replace a --json (or --figure) file jitterbench did not write")
    p = subcommand(simsub, "halo", "predict jb-halo's MAX and AVG at larger task counts", "docs/cli.md")
    p.add_argument("halo_json", metavar="HALO_JSON", help="a jb-halo --json document")
    p.add_argument("--entry", type=whole(0), metavar="N", help="which results entry (default: 0)")
    p.add_argument("--tasks", type=counts(1), default=[16, 64, 256, 1024, 4096], metavar="N,N,...",
                   help="task counts (default: 16,64,256,1024,4096)")
    p.add_argument("--seed", type=whole(0), default=1, metavar="N", help="random seed, for the bootstrap (default: 1)")
    p.add_argument("--interrupt-trace", metavar="FILE", help="every task also replays this noise trace (jb-noise "
                                                             "--trace: 'start_us length_us' a line) from its own offset")
    p.add_argument("--json", metavar="FILE", help="write the results here")
    p.add_argument("--force", action="store_true", help="replace a --json (or --figure) file jitterbench did not write")
    p = subcommand(simsub, "profile", "normalized run time under network profiles of latency and bandwidth, with "
                                      "and without overlap (paper 004)", "docs/cli.md")
    p.add_argument("torus", nargs="*", metavar="TORUS_JSON",
                   help="jb-torus --json documents: a run without --work at two sizes or more (the measured "
                        "network's profile) and a run with --work at one of them")
    p.add_argument("--pattern", metavar="PATTERN", help="the jb-torus pattern to read (default: the only one)")
    p.add_argument("--work", type=whole(0), metavar="BYTES",
                   help="the jb-torus work size in bytes to read (default: the only one)")
    p.add_argument("--size", type=whole(0), metavar="BYTES", help="bytes per message (with documents: which size to "
                                                                  "read; default: the only one)")
    p.add_argument("--messages", type=number, metavar="M", help="messages per step, sent one after another "
                                                                "(default: with documents, 2 per dimension)")
    p.add_argument("--compute-us", type=number, metavar="US", help="computation per step, us (default: with "
                   "documents, the time per call with work less the time without)")
    p.add_argument("--overlap-us", type=number, metavar="US", help="independent work per step that messages may hide "
                   "behind, us (default: all the computation with jb-torus work, else 0)")
    p.add_argument("--latencies-us", type=numbers, default=list(profile.LATENCIES_US), metavar="US,US,...",
                   help="network latencies (default: 1,2,4,8)")
    p.add_argument("--bandwidths-mb-s", type=numbers, default=list(profile.BANDWIDTHS_MB_S), metavar="MB_S,MB_S,...",
                   help="network bandwidths, MB/s = 10^6 bytes/s (default: 1,2,5,...,2000,5000)")
    p.add_argument("--statistic", choices=profile.STATISTICS, default="max_us",
                   help="a call's time in the documents: max_us, the mean over calls of the per-call MAX over tasks, "
                        "or p50_us, the median over calls of it (default: max_us)")
    p.add_argument("--json", metavar="FILE", help="write the results here")
    p.add_argument("--force", action="store_true", help="replace a --json (or --figure) file jitterbench did not write")
    p.add_argument("--figure", metavar="FILE", help="draw the normalized times here (SVG)")



# ---- budget ------------------------------------------------------------------------------------
# What one simulate command may take, estimated and refused before it starts: the memory of the
# arrays it keeps, half the machine's; the time at the rates measured on the project's 2-core VM
# (benchmarks/simulate_budget.py prints them), an hour, or JB_SIMULATE_BUDGET_S seconds.
MEMORY_BUDGET = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def memory_budget() -> tuple:
    """(bytes, what bounds them): half the machine's memory, or less where a limit on this
    process's address space (ulimit -v, a batch system's) leaves less room than that: then half of
    what the limit leaves above the address space it holds already (the interpreter, NumPy)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return MEMORY_BUDGET, "half this machine's memory"
    try:
        with open("/proc/self/statm") as f:
            held = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        held = 0
    left = max(0, soft - held) // 2
    return (left, "half what this process's address-space limit leaves") if left < MEMORY_BUDGET else \
        (MEMORY_BUDGET, "half this machine's memory")
NS_PER_EXCHANGE = 3.9   # alltoall: one processor's exchange in one round of one trial (3.85 measured)
NS_PER_DRAW = 4.0       # halo: one task's time in one call, drawn and averaged, uncoupled (3.93 measured)
HALO_BOOTSTRAP = 5      # repeats of the uncoupled limit from resamples: its standard error


def check_budget(what: str, memory_bytes: float, seconds: float, fewer: str) -> None:
    """One line, before any work, where what would need more memory or time than the budget."""
    budget, bound = memory_budget()
    if memory_bytes > budget:
        raise SimulationInputError(f"{what} needs about {memory_bytes / 2**30:.3g} GiB, over the budget of "
                                   f"{budget / 2**30:.3g} GiB ({bound}): {fewer}")
    budget = float(os.environ.get("JB_SIMULATE_BUDGET_S") or 3600)  # checked: settings.py
    if seconds > budget:
        raise SimulationInputError(f"{what} would take about {seconds:.3g} s, over the budget of {budget:g} s "
                                   f"(JB_SIMULATE_BUDGET_S): {fewer}")


PROGRESS_AFTER_S = 3.0  # work estimated longer than this shows its progress on a terminal


@contextlib.contextmanager
def progress(seconds: float, total: int, what: str, unit: str):
    """A function to tell of work done (units of total), which draws a progress bar on standard
    error where that is a terminal and the work is estimated at over PROGRESS_AFTER_S; else it does
    nothing (a log or a pipe gets no bar: one line stays one line)."""
    if seconds <= PROGRESS_AFTER_S or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm  # noqa: PLC0415
    with tqdm(total=total, desc=what, unit=unit, unit_scale=True, file=sys.stderr, leave=False) as bar:
        yield bar.update


WRITTEN_BY = "jitterbench simulate"  # the first field of every --json document: what replaces only its own
# how every --json document begins: what --json replaces, not a file that merely holds the words further in
JSON_HEAD = re.compile(r'\{\n "written_by": "' + re.escape(WRITTEN_BY) + ' ')


def run(args) -> None:
    """The subcommand args.what: its table printed, its results written to args.json if given."""
    # each output checked before the work, so that a refused one costs nothing and prints no table
    for path, own in ((args.json, JSON_HEAD), (getattr(args, "figure", None), profile.SVG_HEAD)):
        if path is not None:
            files.writable(path, own=own, force=args.force)
    out = {"alltoall": alltoall, "halo": halo, "profile": profile_command}[args.what](args)
    if args.json is not None:  # -o '' too: refused by write_text, not taken as no --json
        try:
            text = json.dumps({"written_by": f"{WRITTEN_BY} {args.what}", **out}, indent=1, allow_nan=False) + "\n"
        except ValueError:
            raise SimulationInputError(f"the results hold a number that is not finite; "
                                       f"{args.json} not written") from None
        files.write_text(args.json, text, own=JSON_HEAD, force=args.force)


# ---- alltoall ----------------------------------------------------------------------------------

def alltoall(args) -> dict:
    """jitterbench simulate alltoall: T all-to-alls on each P of --procs."""
    sample = simulate.load_samples(args.samples, args.entry)
    if not sample.all():
        raise SimulationInputError(f"{args.samples}: an exchange time is 0: an all-to-all could take no "
                                   "time, at an infinite throughput")
    if args.interrupts and args.interrupt_trace:
        raise SimulationInputError("give --interrupts or --interrupt-trace, not both")
    interrupts = simulate.load_interrupt_trace(args.interrupt_trace) if args.interrupt_trace else args.interrupts
    # each P keeps every processor's finish and idle time of every trial (16 bytes) and its schedule
    # (8 bytes a processor a round), and replays P exchanges in each of about P rounds of every trial
    exchanges = sum(P * P * args.trials for P in args.procs)
    seconds = float(exchanges) * NS_PER_EXCHANGE * 1e-9 / alltoall_model.WORKERS
    check_budget(f"{args.trials} all-to-alls on up to {max(args.procs)} processors",
                 16.0 * max(args.procs) * args.trials + 8.0 * max(args.procs) ** 2, seconds,
                 "fewer --trials or smaller --procs")
    out = {"samples": str(args.samples), "sample_size": int(sample.size), "sample_mean_us": float(sample.mean()),
           "sample_sd_us": float(sample.std(ddof=1)) if sample.size > 1 else 0.0, "trials": args.trials,
           "seed": args.seed, "message_bytes": args.size,
           "interrupts": vars(args.interrupts) if args.interrupts else args.interrupt_trace}
    with progress(seconds, exchanges, "all-to-alls", "exchange") as done:
        out["procs"] = simulate.alltoall_results(sample, args.procs, args.trials, args.seed, args.size, interrupts,
                                                 progress=done)
    rows = [(str(e["P"]), f"{e['total_mean_us']:.1f}", f"{e['total_p99_us']:.1f}", f"{e['throughput_mean_mb_s']:.3f}",
             f"{e['idle_mean_us']:.1f}", f"{e['idle0_zero_fraction']:.3f}", f"{e['idle0_p99_us']:.1f}")
            for e in out["procs"]]
    header = ("P", "total us", "p99 us", "throughput MB/s", "idle us/proc", "P(idle0=0)", "idle0 p99 us")
    print(f"# {args.trials} simulated all-to-alls per P from {sample.size} exchange times "
          f"(mean {out['sample_mean_us']:.1f} us, sd {out['sample_sd_us']:.1f} us); throughput for "
          f"{args.size}-byte messages, as Table 1 defines it")
    print(format_table(header, rows))
    return out


# ---- halo --------------------------------------------------------------------------------------

def halo(args) -> dict:
    """MAX at larger task counts from a jb-halo run's per-call MAX (run with --series)."""
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
    # the uncoupled limit draws every task's time in every call, once and in each bootstrap
    # repeat: its time grows as the tasks, its memory (a chunk of tasks at a time) does not
    seconds = sum(float(N) for N in tasks) * r["calls"] * (1 + HALO_BOOTSTRAP) * NS_PER_DRAW * 1e-9
    check_budget(f"the halo at {max(tasks)} tasks", 16.0 * CHUNK_ELEMENTS, seconds, "smaller --tasks")
    rng = np.random.default_rng(args.seed)
    pred = simulate.halo_extrapolation(r["series"]["max_us"], measured_tasks, tasks, rng)
    # Without the barrier's coupling tasks drift apart, delays average out within each task,
    # and the run's MAX is the slowest task's mean per call.  Per-task times come from the
    # merged histogram (bin middles), which also counts a task's waits for a delayed
    # neighbour: from a run of more than one task this limit is an overestimate.
    per_task = simulate.per_task_times(bins)
    with progress(seconds, sum(tasks) * (1 + HALO_BOOTSTRAP), "MAX uncoupled", "task") as done:
        uncoupled = simulate.halo_prediction(per_task, tasks, rng, r["calls"], barrier_coupled=False,
                                             n_boot=HALO_BOOTSTRAP, progress=done)
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
    print(format_table(("tasks", "MAX us", "AVG us", "MAX/AVG", "MAX uncoupled", "measured MAX")
                        + (("MAX with trace", "P(detour)") if trace else ()), rows))
    return out


# ---- profile -----------------------------------------------------------------------------------

def profile_command(args) -> dict:
    """jitterbench simulate profile: the table on stdout (and the figure), the results returned."""
    if args.figure and not str(args.figure).endswith(".svg"):
        raise SimulationInputError(f"{args.figure}: the figure is SVG; name a file ending in .svg")
    out = profile.predict(args.torus, statistic=args.statistic, pattern=args.pattern, size=args.size,
                          work=args.work, messages=args.messages, compute_us=args.compute_us,
                          overlap_us=args.overlap_us, latencies_us=args.latencies_us,
                          bandwidths_mb_s=args.bandwidths_mb_s)
    step, lats, bws, rows = profile.Step(**out["step"]), out["latencies_us"], out["bandwidths_mb_s"], out["profiles"]
    if not all(np.isfinite(v) for r in rows for v in r.values() if isinstance(v, float)):
        raise SimulationInputError("the step's times overflow (a time past 1e308): give a smaller --compute-us, "
                                   "--messages, --size or --latencies-us")
    print(f"# step: compute {step.compute_us:.6g} us, {step.messages:g} message(s) of {step.size:g} bytes, "
          f"overlap {step.overlap_us:.6g} us; zero overhead; MB = 10^6 bytes")
    fit = out.get("fit")
    if fit:
        print(f"# the measured network ({out['source']['pattern']}, {len(fit['points'])} sizes without work): "
              f"latency {fit['latency_us']:.4g} us, bandwidth {fit['bandwidth_mb_s']:.4g} MB/s per node "
              f"({fit['messages']:g} messages a call)")
    if "check" in out:
        m, check = out["measured"], out["check"]
        print(f"# the model at that profile: {check['after_us']:.1f} us a call without overlap (measured "
              f"{m['after_us']:.1f}), {check['before_us']:.1f} us with (measured {m['before_us']:.1f})")
    print("# normalized execution time: the step under the profile / the step on an ideal network "
          "(its computation); 'ov': with overlap")
    header = ("MB/s",) + tuple(h for lat in lats for h in (f"{lat:g} us", f"{lat:g} us ov"))
    table = []
    for i, bw in enumerate(bws):
        cells = rows[i * len(lats):(i + 1) * len(lats)]
        table.append((f"{bw:g}",) + tuple(f"{c[k]:.3f}" for c in cells for k in ("normalized", "normalized_overlap")))
    print(format_table(header, table))
    if args.figure is not None:
        title = (f"compute {step.compute_us:.4g} us, {step.messages:g} x {step.size:g} B, overlap "
                 f"{step.overlap_us:.4g} us; zero overhead")
        files.write_text(args.figure, profile.figure_svg(step, rows, lats, title), own=profile.SVG_HEAD,
                         force=args.force)
    return out
