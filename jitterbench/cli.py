"""The jitterbench command: what ReFrame and the C benchmarks do not do themselves."""
from __future__ import annotations

import argparse
import errno
import functools
import getpass
import os
import sys
from collections import defaultdict

from . import (__version__, again, benchmarks, bounds, checkout, files, history, plan, reference_build, reference_lint,
               reference_machine, references, reframe_report, results, runs, settings, signals, simulate, site,
               verdict_table)
from .console import DOCS, OneLineParser, say, subcommand
from .console import format_table as _format_table
from .simulate import command as simulate_command


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


def write_report(args):
    from . import report  # matplotlib and Jinja2: only for the commands that draw
    # -o '' is refused (check_folder_output), not taken for no -o
    folder = args.output if args.output is not None else (os.path.join(args.inputs[0], "report") if len(
        args.inputs) == 1 and os.path.isdir(args.inputs[0]) else "report")
    files.check_folder_output(folder)  # before the work: a folder that is not a report is never replaced
    col = runs.collect(args.inputs)
    labels = col.labels()
    if not col.cases and not col.documents:
        raise runs.RunsError(f"no test case and no benchmark document in {', '.join(args.inputs)}")
    baseline = None
    if args.command == "compare":
        labels_of = defaultdict(set)
        for c in col.cases:
            if c.kind == "measured":
                labels_of[c.run].add(c.label)
        twice = next(((run, sorted(ls)) for run, ls in labels_of.items() if len(ls) > 1), None)
        if twice:  # one run under two labels would be compared with itself, its repeats counted twice
            raise runs.RunsError(f"labels {' and '.join(twice[1])} hold the same run ({twice[0]}): compare "
                                 f"needs a run of its own for each")
        baseline = args.baseline or (col.measured_labels() or labels)[0]
        if baseline not in labels:
            raise runs.RunsError(f"no label '{baseline}' among {', '.join(labels)}")
        if len(labels) < 2:  # else a page with nothing set against the baseline
            raise runs.RunsError(f"compare needs two runs or more, one label each (A=PATH B=PATH); "
                                 f"{', '.join(args.inputs)} hold(s) one, {labels[0]} (one run: jitterbench report)")
    title = args.title or (f"jitterbench: {' vs '.join(labels)}" if baseline else f"jitterbench report: {', '.join(labels)}")
    if baseline:  # a comparison of two transports is no comparison of two machines: say so where it is run
        for (environ, label), (mine, base) in report.transport_differences(col, baseline).items():
            print(f"warning: {label} and {baseline} used different transports in environment {environ}: "
                  f"{' | '.join(mine)} against {' | '.join(base)}", file=sys.stderr)
    store = args.history or (os.path.join(args.inputs[0], "results.db") if len(args.inputs) == 1 else None)
    kept = history.read(store=store) if args.history or (store and os.path.isfile(store)) else None
    return report.write(col, folder, title, baseline, kept)


def _finite(text):
    """An argparse type: a finite number (a bound of nan or inf would be no bound at all)."""
    value = files.parse_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a finite number")
    return float(value)


def _share(text):
    """An argparse type: a share between 0 and 1."""
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a share between 0 and 1")
    return value


def _user_at_host() -> str:
    """Who measured, by default: user@host.  A container may run under a uid with no passwd
    entry, hence no user name: then the uid stands for it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # KeyError up to Python 3.12, OSError from 3.13
        user = f"uid{os.getuid()}"
    return f"{user}@{os.uname().nodename}"




@functools.cache  # built once a process: its ~300 options' help cost ~6 ms a build (the unit tier calls main 300x)
def parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jitterbench", description=__doc__, epilog=DOCS.format("docs/cli.md"))
    parser.add_argument("--version", action="version", version=f"jitterbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = subcommand(sub, "summarize", "print the results of benchmarks' JSON files, a table per benchmark", "docs/cli.md")
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON files written by the benchmarks' --json (jb-halo, ...)")
    p = subcommand(sub, "table", "the verdicts of a ReFrame run: per check and MPI, the worst asserted variable "
                                 "against its reference", "docs/cli.md")
    p.add_argument("reports", nargs="+", metavar="REPORT", help="ReFrame run reports (--report-file)")
    p.add_argument("--all", action="store_true", help="one line per test case and swept value instead: its "
                                                      "parameters, MAX, AVG, other values, reference and result")
    p.add_argument("--failed", action="store_true", help="print only each check that failed under an MPI, as "
                   "'CHECK MPI' lines: what the main job judges again")
    again.add_arguments(subcommand(sub, "again", again.WHAT, "docs/references.md (Two attempts)"))
    p = subcommand(sub, "reference", "turn ReFrame runs of one system into its reference file; --check: whether a "
                                     "file is of this machine; --lint: whether it names what exists", "docs/references.md")
    p.add_argument("reports", nargs="+", metavar="REPORT",
                   help="ReFrame run reports (--report-file), one per repeat; with --check, reference files (.yaml) "
                        "and/or run reports; with --lint, reference files")
    p.add_argument("--check", action="store_true",
                   help="whether the machine matches a reference file's fingerprint: the machine a run report "
                        "describes (CPU, MPIs, transports), else this host (CPU); without a file, the files its "
                        "system would be judged by. Exit 0: one matches; 1: none")
    p.add_argument("--lint", action="store_true",
                   help="whether reference files name only known checks, $index names, partitions and environments "
                        "of their system, variables and units (--check does this first). Exit 0: none unknown; 1: "
                        "each unknown one named")
    p.add_argument("--system", metavar="SYSTEM",
                   help="the ReFrame system the references are for (default: the reports' one system)")
    p.add_argument("-o", "--output", metavar="FILE", help="the reference file to write, e.g. "
                   "reference_data/local.yaml, or a folder to write <system>.yaml in (replaced whole, or left as it was)")
    p.add_argument("--measured-by", metavar="WHO", help="who measured (default: user@host)")
    p.add_argument("--force", action="store_true", help="replace the -o file even if it is not a reference file "
                                                       "jitterbench wrote (or is a symbolic link)")
    p.add_argument("--false-alarm-rate", type=_finite, default=bounds.FALSE_ALARM_RATE, metavar="RATE",
                   help="the suite's false-alarm rate per run on a clean machine, split over the asserted variables "
                        f"(default: {bounds.FALSE_ALARM_RATE:g})")
    p.add_argument("--attempts", type=int, choices=(1, 2), default=bounds.ATTEMPTS,
                   help="the attempts a run's verdict takes: 2, a check failed under an MPI judged again and failing "
                        "only if it fails again (ci/main.sh), each attempt at the rate's square root; 1, a run "
                        f"judged once (plain reframe -r) (default: {bounds.ATTEMPTS})")
    p.add_argument("--want-bounded", type=_share, metavar="SHARE",
                   help="exit 4 (the file written) where some environment's central figures (its times) are "
                        "bounded within --max-detectable at a share below this, e.g. 0.8: the baseline wants more "
                        "runs (ci/main.sh)")
    p.add_argument("--max-detectable", type=_finite, default=bounds.MAX_DETECTABLE, metavar="SLOWDOWN",
                   help="a variable whose minimum detectable slowdown is above this is not asserted on this system "
                        f"(default: {bounds.MAX_DETECTABLE:g})")
    for name, what in (("report", "one HTML report (figures as PNG and SVG beside it) of runs"),
                       ("compare", "compare systems or runs: the report, plus each label's ratio to a baseline")):
        p = subcommand(sub, name, what, "docs/reports.md")
        p.add_argument("inputs", nargs="+", metavar="[LABEL=]PATH",
                       help="a run's folder (its report.json, else its perflogs), a ReFrame report or perflog, a "
                            "benchmark's JSON document, or a reference file (.yaml: measured, or a paper's); "
                            "LABEL= names what it holds (default: its system)")
        p.add_argument("-o", "--output", metavar="FOLDER",
                       help="the report's folder (default: <the one folder given>/report, else ./report); an "
                            "existing one is replaced only if it is an earlier report")
        p.add_argument("--title", metavar="TEXT", help="the page's title (default: the labels)")
        p.add_argument("--history", metavar="DB", help="a History section from this results store (default: the "
                                                       "results.db of the one folder given, where there is one)")
        if name == "compare":
            p.add_argument("--baseline", metavar="LABEL",
                           help="the label the others are set against (default: the first measured)")
    history.add_arguments(subcommand(sub, "history", "every run kept: per variable its series and change points; "
                                                     "exit 1 when the newest runs stepped to the worse side",
                                     "docs/history.md"))
    plan.add_arguments(subcommand(sub, "plan", plan.WHAT, "docs/cli.md"))
    simulate_command.add_arguments(subcommand(sub, "simulate", "predict all-to-all and halo times at scales not "
                                                               "measured", "docs/cli.md"))
    site.add_arguments(subcommand(sub, "site", "a site's systems/sites/ files: `jitterbench site new NAME ...` "
                                               "writes its ReFrame system and its Spack externals",
                                  "README.md (How to add a site)"))
    return parser


def _reference_path(output, system):
    """The file `reference -o` writes: SYSTEM.yaml in a folder (one that exists, or a path ending
    in /, made here), else the file named, which must end in .yaml as ReFrame's lookup does."""
    if not output:  # -o '' is no file, not "no -o"
        raise files.OutputError("the output is named '': name a file to write")
    if os.path.isdir(output) or output.endswith(os.sep):
        # the system's name is a run report's text: '../x' must not take the file out of the folder,
        # which is made only once the name is known to stay in it
        path = files.within(output, f"{system}.yaml")
        os.makedirs(output, exist_ok=True)
        return str(path)
    if not output.endswith((".yaml", ".yml")):
        raise references.ReferenceFileError(f"{output}: neither a folder nor a .yaml file: name a folder (an "
                                            f"existing one, or end it with /) or FILE.yaml")
    return output


def run(args) -> int:
    if args.command == "summarize":
        print(summarize(args.files))
    elif args.command == "table":
        if args.failed:
            print("\n".join(f"{check} {environ}" for check, environ in verdict_table.failed(args.reports)))
            return 0
        print(verdict_table.table(args.reports, every=args.all))
        return 3 if verdict_table.inconclusive_only(args.reports) else 0
    elif args.command == "again":
        return again.command(args)
    elif args.command == "simulate":
        simulate_command.run(args)
    elif args.command == "history":
        return history.command(args)
    elif args.command == "plan":
        return plan.command(args)
    elif args.command == "site":
        site.command(args)
    elif args.command in ("report", "compare"):
        print(f"wrote {write_report(args)}")
    elif args.command == "reference" and (args.check or args.lint):
        given = [p for p in args.reports if str(p).endswith((".yaml", ".yml"))]
        if args.lint and not given:
            raise references.ReferenceFileError("--lint takes reference files (.yaml)")
        mistakes = [line for path in given for line in reference_lint.lint(path, args.system)]
        if mistakes:  # a file that names what does not exist would not judge as meant: before the machine
            print("\n".join(mistakes))
            return 1
        if args.lint:
            print("\n".join(f"{p}: its checks, partitions, environments, variables and units are known" for p in given))
        if not args.check:
            return 0
        matched, lines = reference_machine.check_machine(args.reports, args.system)
        print("\n".join(lines))
        return 0 if matched else 1
    elif args.command == "reference":
        if args.output is None:
            raise references.ReferenceFileError("name the reference file to write with -o FILE (or a folder)")
        system = args.system or reframe_report.system_of(args.reports)
        output = _reference_path(args.output, system)
        files.writable(output, own=references.written_by_jitterbench, force=args.force)  # before the work
        doc = reference_build.build(args.reports, system, args.measured_by or _user_at_host(),
                                    args.false_alarm_rate, args.max_detectable, args.attempts)
        text, prov = references.dump(doc), doc["provenance"]
        references.loads(text, output)  # the file ReFrame will read: checked before it replaces any
        files.write_text(output, text, own=references.written_by_jitterbench, force=args.force)
        print(f"wrote {output}: {sum(1 for k in doc if k not in references.SECTIONS)} check(s) "
              f"for system {system}: {prov.get('bounded', 0)} variable(s) bounded, "
              f"{len(doc.get('not_assertable', []))} not assertable (at {prov['false_alarm_rate_per_attempt']:g} "
              f"an attempt split over {prov['asserted']}; {prov['false_alarm_rate']:g} a run of "
              f"{prov['attempts']} attempt(s))")
        for pool in doc["provenance"]["pools"]:  # what a site wants to know first: can it fail on speed?
            by_check = (", by check " + ", ".join(f"{check} {mds:g}x" for check, mds in pool["checks"].items())
                        + " (each variable's the larger)") if pool["checks"] else ""  # a node figure: one pool
            print(f"  {pool['partition']} {pool['environ']}: {pool['asserted']} {pool['variables']} variable(s) "
                  f"the rules assert, minimum detectable slowdown {pool['detectable_slowdown']:g}x{by_check}: "
                  f"{pool['bounded']} bounded within {args.max_detectable:g}x")
        # where the noise lives: a run whose figures all moved together was the machine's that run
        print("  each run against the others (per environment, the median over its figures of value / the "
              "others' median, above 1 worse; the compute probe's likewise, where taken):")
        for run in doc["provenance"]["runs"]:
            print(f"    {run['report']}: " + ", ".join([*(f"{environ} {factor:g}x" for environ, factor in run["factors"].items()),
                                                        *([f"compute probe {run['probe']:g}x"] if "probe" in run else [])]))
        if args.want_bounded is not None:
            short = [f"{environ} {share:.0%}" for environ, share in reference_build.central_bounded(doc).items()
                     if share < args.want_bounded]
            if short:
                print(f"  too few central figures bounded within {args.max_detectable:g}x (wanted "
                      f"{args.want_bounded:.0%}): {', '.join(short)}: more runs would bound more")
                return 4
    return 0


# What a bad input or output raises: each one line naming the file, and where it applies the field.
ERRORS = (again.AgainError, checkout.CheckoutError, files.OutputError, history.HistoryError, references.ReferenceFileError,
          reframe_report.RunReportError, results.ResultsError, runs.RunsError, simulate.SimulationInputError, site.SiteError)


def main(argv=None) -> int:
    """The command: 0 when done, 2 with one line on standard error for a bad input or
    output, 130 on Ctrl-C (with nothing left half-written).  A standard output that takes nothing
    (a full disk, /dev/full) is one line and exit 2 too, whenever it fails (--help's text
    included), never Python's "Exception ignored" at exit; a reader that has gone (head, less: a
    broken pipe) ends it quietly with exit 1."""
    stdout, sys.stdout = sys.stdout, _Stdout(sys.stdout)
    try:
        try:
            code = _command(argv)
        finally:  # here, not at exit (a SystemExit's too: --help, --version): where it fails, it is said
            sys.stdout.flush()
        return code
    except _StdoutLost as e:
        _drop_stdout(stdout)
        if e.errno == errno.EPIPE:
            return 1
        say(f"jitterbench: error: cannot write standard output: {e}")
        return 2
    finally:
        sys.stdout = stdout


class _StdoutLost(Exception):
    """Standard output refused what was printed (an OSError's errno and text)."""

    def __init__(self, error: OSError):
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


class _Stdout:
    """sys.stdout, whose failures to write are _StdoutLost: told apart from a file's, and never
    swallowed on the way (argparse's printing of --help drops an OSError)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as e:
            raise _StdoutLost(e) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            raise _StdoutLost(e) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _drop_stdout(stream):
    """Standard output pointed at /dev/null, what is still buffered for it with it: Python's own
    flush at exit is then quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stream with no descriptor (a test's capture)
        pass


def _command(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        settings.check()
    except settings.SettingError as e:
        say(f"jitterbench: error: {e}")
        return 2
    try:
        return run(parser().parse_args(argv))
    except ERRORS as e:
        say(f"jitterbench: error: {e}")
        return 2
    except (KeyError, TypeError) as e:  # a shape no reader checked for: still one line
        say(f"jitterbench: error: an input lacks a field or holds one of the wrong kind ({type(e).__name__}: {e})")
        return 2
    except MemoryError as e:  # numpy's says how much it wanted; Python's own says nothing
        what = " ".join(argv[:2] if argv[:1] in (["simulate"], ["site"]) else argv[:1])  # the subcommand
        say(f"jitterbench: error: not enough memory for jitterbench {what}"
            f"{': ' + str(e) if str(e) else ' (the machine, or a limit on this process, has no more)'}")
        return 2
    except KeyboardInterrupt:
        return signals.interrupted()
    except OSError as e:  # what the system refused that no reader foresaw (a fork without memory, say)
        say(f"jitterbench: error: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        return 2
    except Exception:
        if signals.received():  # the interrupt in a library's words (scipy's import: "initialization failed")
            return signals.interrupted()
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
