"""The JB_* variables a site or a pipeline sets: what each must be, checked at once where
jitterbench starts (ReFrame's configuration, systems/config.py; the command line; the
pipeline's jobs, `python -m jitterbench.settings`), so that a wrong value ends in one line
naming the variable before anything runs.

No value is ever run as code: jitterbench's own shell lines quote every path (shlex.quote) or
pass it as an argument.  What is checked here is what no quoting of ours makes right: a newline
or another control character (a job script's line break: `-J account=x<newline>command`), a name
that ReFrame or Slurm writes into a script unquoted, a path that ReFrame expands itself ($(...)
in JB_OUTPUT runs as a command in ReFrame's configuration), a prefix template with a field other
than {environ}, a number that is no number, a folder that is a file; and a prefix, views or
references folder must be there (JB_REFERENCE_DIR, JB_SPACK_VIEWS, the prefixes), else it was found
out late or never.
"""
from __future__ import annotations

import math
import os
import re
import string
import sys

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")       # a system, partition, account or queue name
PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+@:,=~%-]+\Z")     # a path ReFrame's configuration or job scripts hold
MODULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/@:=-]*\Z")  # an environment module, as `module load` takes it
# control characters, C1's too, the line separators Unicode adds (what str.splitlines breaks at), and
# the bidirectional controls (a terminal shows the text after U+202E reversed: a message could then
# say what it does not)
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


class SettingError(ValueError):
    """A JB_* variable holding what it may not: the message names it and what it must be."""


def _shown(value) -> str:
    return repr(value if len(value) <= 200 else value[:200] + "...")


def _path(value):
    if CONTROL.search(value):
        return "a path without control characters (newline, tab)"
    return None


def _folder(value):
    return _path(value) or ("a folder, not a file" if os.path.exists(value) and not os.path.isdir(value) else None)


def _plain_path(value):
    """A path that reaches ReFrame's configuration (its stage, output, perflog and results paths)
    or the environments it writes into job scripts: ReFrame expands $VARIABLES there and runs
    $(...) and `...` (reframe.utility.osext.expandvars), splits the stage path at blanks, and
    writes `export NAME=value` unquoted."""
    return None if PLAIN_PATH.match(value) else \
        "a path of letters, digits and _ . / - + @ : , = ~ % only (ReFrame expands $ and runs $(...) and " \
        "`...` in its paths, and splits them at blanks)"


def _plain_folder(value):
    return _plain_path(value) or _folder(value)


def _existing_folder(value):
    """A plain path (as JB_OUTPUT's) naming a folder that is there: a prefix, views or references
    folder that names nothing was found out late (a "build job failed", "ran 0 of 2" and exit 0,
    references silently not read), or never."""
    problem = _plain_path(value) or _folder(value)
    if problem:
        return problem
    return None if os.path.isdir(value) else "an existing folder (nothing is there)"


def _template(value):
    """An install prefix in which {environ} stands for a programming environment's name: a plain
    path (ReFrame's job scripts and the build's shell lines hold it) whose folder before the first
    field exists."""
    problem = _plain_path(value.replace("{environ}", "environ"))
    if problem:
        return problem
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
    except ValueError:
        fields = {"?"}
    if fields - {"environ"}:
        return "a path in which {environ} (and no other field) stands for the environment's name"
    fixed = value.split("{", 1)[0]
    base = fixed if "{" not in value else os.path.dirname(fixed) or "."
    return None if os.path.isdir(base) else f"a path whose folder {base} exists (nothing is there)"


def _name(value):
    return None if NAME.match(value) else "a name of letters, digits, '_', '.' and '-'"


def _modules(value):
    return None if all(MODULE.match(m) for m in value.split(" ") if m) else \
        "module names (letters, digits, _ . + / @ : = -) separated by spaces"


# the modes a pipeline's run takes (JB_MODE, `history --session-extras`); papers is run by hand
MODES = ("quick", "acceptance")


def _mode(value):
    return None if value in MODES else " or ".join(MODES)


def _url(value):
    """A URL as ReFrame's httpjson handler parses it (reframe.core.logging: urllib.parse.urlparse, its
    scheme, hostname and port), which otherwise ends `reframe` in a traceback ('http://[::1':
    "ValueError: Invalid IPv6 URL"); in ReFrame's configuration too, so no $ or backtick."""
    from urllib.parse import urlparse  # noqa: PLC0415
    what = "an http:// or https:// URL naming a host (without blanks, $ or backticks)"
    if not re.match(r"https?://[^\s\x00-\x1f\x7f$`]+\Z", value):
        return what
    try:
        parsed = urlparse(value)
        parsed.port  # noqa: B018  a port that is no number, or beyond 65535, raises ValueError here
    except ValueError as e:
        return f"{what}, which this is not ({e})"
    return None if parsed.scheme in ("http", "https") and parsed.hostname else what


def _extras(value):
    for item in filter(None, value.split(",")):
        key, sep, rest = item.partition("=")
        if not sep or not key.strip() or CONTROL.search(item) or re.search(r"[$`]", item):
            return f"key=value pairs separated by commas (e.g. site=cscs,cluster=daint), not {_shown(item)}"
    return None


def _seconds(value):
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    return None if 0 < seconds <= 86400 else "a number of seconds above 0, at most 86400"


def _timeout(value):
    """As the benchmarks read it (src/core/options.c): whole seconds, 0 (none) to 10^8."""
    return None if re.fullmatch(r"[0-9]{1,9}", value) and int(value) <= 100_000_000 else \
        "whole seconds from 0 (no limit) to 100000000"


def _launches(value):
    return None if re.fullmatch(r"[0-9]{1,4}", value) and 1 <= int(value) <= MAX_LAUNCHES else \
        f"a whole number of launches from 1 to {MAX_LAUNCHES}"


def _rounds(value):
    return None if re.fullmatch(r"[0-9]{1,3}", value) and 1 <= int(value) <= MAX_ROUNDS else \
        f"a whole number of rounds from 1 to {MAX_ROUNDS}"


# A case's figure is the median of its launches, made in ROUNDS rounds of LAUNCHES each: the modes
# run the suite ROUNDS times in one ReFrame session (--repeat, in a random order), so a case's
# launches lie minutes apart, not in one slow episode of the machine.  On the 2-core CI machine type
# a slow state lasts about a round: two launches of one round differ by a median |log ratio| of
# 0.07-0.14, of two rounds by 0.18-0.21, so ten rounds of one launch sample the states twice as often
# as five of two, for 146 s a quick run against 121 s (docs/references.md, "Launches").  JB_ROUNDS and
# JB_LAUNCHES set a site's own.
ROUNDS = 10
MAX_ROUNDS = 100
LAUNCHES = 1
MAX_LAUNCHES = 1000


def launches(environ=os.environ) -> int:
    """The launches a test case makes in each round: JB_LAUNCHES (checked by `check`), else LAUNCHES."""
    value = environ.get("JB_LAUNCHES")
    return int(value) if value and not _launches(value) else LAUNCHES


def rounds(environ=os.environ) -> int:
    """The rounds the modes run the suite in (ReFrame's --repeat): JB_ROUNDS (checked by `check`),
    else ROUNDS."""
    value = environ.get("JB_ROUNDS")
    return int(value) if value and not _rounds(value) else ROUNDS


def _launcher(value):
    """A launcher's command line: words of plain paths and options, separated by blanks."""
    return None if all(PLAIN_PATH.match(w) for w in value.split(" ")) else \
        "a launcher's command line: words of letters, digits and _ . / - + @ : , = ~ % separated by single blanks"


def _options(value):
    return "ReFrame options on one line" if CONTROL.search(value) else None


# Each variable and what it must be: those the package, ReFrame's configuration and the
# benchmarks read, then those the pipeline's jobs read (ci/pipeline.sh, spack.yaml).  One table,
# RULES: every entry point checks every variable in it (check), so that a value the pipeline would
# refuse does not pass `reframe` or `jitterbench` run by hand (JB_SYSTEM='x;touch P', issue 61).
# docs/pipeline.md (Settings) says what each is for.
READ_BY_JITTERBENCH = {
    "JB_OUTPUT": _plain_folder,
    "JB_REFERENCE_DIR": _existing_folder,
    "JB_PREFIX": _template,
    "JB_OSU_PREFIX": _template,
    "JB_IMB_PREFIX": _template,  # benchmarks/fidelity.py: IMB-MPI1 of each MPI
    "JB_PERFTEST_PREFIX": _existing_folder,
    "JB_PERFTEST_SERVER_WAIT": _seconds,
    "JB_TIMEOUT": _timeout,
    "JB_LAUNCHES": _launches,
    "JB_ROUNDS": _rounds,
    "JB_SIMULATE_BUDGET_S": _seconds,
    "JB_SPACK_VIEWS": _existing_folder,
    "JB_RESULTS_URL": _url,
    "JB_RESULTS_EXTRAS": _extras,
    "JB_BUILD_ROOT": _plain_folder,
    "JB_MPICH_ROOT": _plain_folder,
    "JB_INTEL_MPI_ROOT": _plain_folder,
    "JB_VCLUSTER_DIR": _plain_folder,
    # each programming environment's launcher (jitterbench/harness/launchers.py), run unquoted in job
    # scripts as `$JB_MPIRUN -np N`: environments set it, and a site may
    "JB_MPIRUN": _launcher,
}
READ_BY_THE_PIPELINE = {
    "JB_SYSTEM": _name,
    "JB_PARTITION": _name,
    "JB_ACCOUNT": _name,
    "JB_MODULES": _modules,
    "JB_MODE": _mode,
    "JB_RFM_OPTIONS": _options,
    "JB_RESULTS_DB": _plain_path,  # RFM_SQLITE_DB_FILE
    "JB_SPACK_SYSTEM": _name,
}
RULES = {**READ_BY_JITTERBENCH, **READ_BY_THE_PIPELINE}
PATH_RULES = (_plain_folder, _existing_folder, _template, _plain_path)  # the rules of paths


# JB_* names set by jitterbench's own files for their own readers, never by a site: not checked,
# but no misspelling either
SET_BY_JITTERBENCH = {
    "JB_SETUP": "the set-up command of the GitLab pipeline's jobs (ci/gitlab-ci.yml)",
    "JB_RUNNER_TAG": "the runner tag of the GitLab pipeline's jobs (ci/gitlab-ci.yml)",
    "JB_TEST_ARTIFACTS": "where the tests keep what they render (tests/test_report.py)",
}
KNOWN = {*RULES, *SET_BY_JITTERBENCH}


def unknown(environ=os.environ) -> list:
    """The JB_* names of environ that nothing of jitterbench reads (a misspelt JB_OUPUT would
    otherwise leave its default in place, silently), each with the known name nearest to it."""
    import difflib  # noqa: PLC0415
    return [(name, (difflib.get_close_matches(name, sorted(KNOWN), n=1) or [None])[0])
            for name in sorted(environ) if name.startswith("JB_") and name not in KNOWN]


def check(environ=os.environ) -> None:
    """Raises SettingError for the first JB_* variable jitterbench does not know (a misspelling),
    or set to what it may not hold (RULES: every variable any part of jitterbench reads, wherever it
    is checked).  An empty value is as good as unset (each has its default).  A relative path is
    named with the folder it resolves to here."""
    for name, near in unknown(environ):
        raise SettingError(f"{name}: no such variable{f' (did you mean {near}?)' if near else ''}; "
                           f"unset it (the JB_* variables jitterbench reads: docs/pipeline.md)")
    for name, rule in RULES.items():
        value = environ.get(name)
        if value:
            problem = rule(value)
            if problem:
                # a path that names the wrong thing is said with the folder it names; one whose
                # characters are wrong needs none
                where = resolved(value) if rule in PATH_RULES and not _plain_path(
                    value.replace("{environ}", "environ")) else ""
                raise SettingError(f"{name}={_shown(value)}{where}: must be {problem}")


def resolved(value) -> str:
    """' (resolved to /abs/path)' where value is a relative path, else '': what a message about a
    path variable names (JB_OUTPUT=nan, in a folder the user could not write, said only "Permission
    denied: 'nan'", neither the variable nor where)."""
    return f" (resolved to {os.path.abspath(value)})" if value and not os.path.isabs(value) else ""


def main() -> int:
    """`python -m jitterbench.settings`: the pipeline's jobs check every variable first."""
    try:
        check()
    except SettingError as e:
        print(f"jitterbench: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
