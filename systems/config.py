"""ReFrame configuration of jitterbench: `reframe -C systems/config.py ...`.

Each system lives in a module of its own, defining SYSTEM (a ReFrame system entry) and
ENVIRONMENTS (its programming environments): sites/ holds those that run (local, the
virtual cluster, every site `jitterbench site new` writes), papers/ the papers' machines.
This file loads every module of both folders (jitterbench/harness/systems.py) and adds what all
systems share: modes, logging, storage.  The first system whose hostnames match this
machine is used unless --system names one; `local` matches any host, so it comes last
(its FALLBACK), and says so when it is chosen that way.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# the jitterbench package of this checkout (ci/setup.sh installs it in .venv too).  Appended, not
# inserted: ReFrame (4.10) loads this file inside utility.temp_sys_path, which then pops the entry
# at the position where it appended its own, so an insert would shift it and drop site-packages,
# and a check importing NumPy would be skipped
if REPO not in sys.path:
    sys.path.append(REPO)

from jitterbench import checkout  # noqa: E402

# this checkout's sources, checks and folders, whichever checkout's package is installed
# (jitterbench/checkout.py)
checkout.use(REPO)
import jitterbench.benchmarks  # noqa: E402
import jitterbench.harness.launchers  # noqa: E402,F401  registers the jb-mpirun, poe, bgp-mpirun and yod launchers
import jitterbench.harness.schedulers  # noqa: E402,F401  registers jb-local and jb-squeue (mended ReFrame schedulers)
from jitterbench import settings  # noqa: E402
from jitterbench.harness import systems  # noqa: E402
from jitterbench.harness.configuration import results_handlers  # noqa: E402

OUTPUT = str(checkout.output())  # JB_OUTPUT, else output/ of the checkout

try:  # every JB_* variable, before ReFrame runs anything
    settings.check()
except settings.SettingError as _e:
    raise SystemExit(f"jitterbench: {_e}") from None
try:
    os.makedirs(OUTPUT, exist_ok=True)
except OSError as _e:  # one line naming the variable and where it resolved, not ReFrame's "failed to load"
    _given = os.environ.get("JB_OUTPUT")
    raise SystemExit(f"jitterbench: {f'JB_OUTPUT={_given!r}{settings.resolved(_given)}' if _given else 'output/'}: "
                     f"cannot make the folder {OUTPUT}: {_e.strerror}") from None

_systems = systems.load_systems([os.path.join(HERE, "sites"), os.path.join(HERE, "papers")])
try:
    _note = systems.fallback_note(_systems)
except systems.SiteError as _e:  # a site's run stops here, in one line, before ReFrame's own start
    raise SystemExit(f"jitterbench: {_e}") from None
if _note:  # never silently: a site whose hostnames missed this host would run as `local`
    print(_note, file=sys.stderr)
for _m in _systems:  # every run's files under one folder, so runs never share a stage
    _m.SYSTEM.setdefault("stagedir", os.path.join(OUTPUT, "stage"))
    _m.SYSTEM.setdefault("outputdir", os.path.join(OUTPUT, "output"))

# Benchmarks must not disturb each other: serial execution in every mode.  The cases in a new random
# order each run (Hoefler and Belli, SC15: randomise the order of experiments), so that no case is
# always the one right after the builds, or after the same other case (docs/references.md, Launches:
# a run's first case is where Open MPI's spread was); the order a run took is in its report's times.
_common_options = ["--exec-policy=serial", "--exec-order=random", f"--report-junit={OUTPUT}/junit.xml",
                   "-c", os.path.join(REPO, "reframe_checks")]

# Modes select by tags, with plain ReFrame options.  `acceptance` runs every variant the
# system's partitions fit, with every reference required.  `quick` runs the variants the
# checks tag `quick` (jitterbench/harness/mpi_check.py, quick_variant): a smoke test of every check on
# every node count the partitions have (powers of two and the partition's size), two tasks
# per node, the MPI's default eager limit (the eager check also sets 8 KiB: it proves the
# variable moves the switch), block distribution (ping-pong also cyclic: it decides which
# pairs cross nodes), both halo placements, the torus with and without overlapped work.
# Inside each run it narrows what the benchmark sweeps to one pattern or send mode (-S: halo
# isend-recv, ping-pong send with one message, torus isend, its overlap at two work sizes,
# each the fastest of 2 trials, the Jacobi inverter's two halo methods in 2 trials) over every
# message size, and 100 timed calls (Jacobi iterations).  A system module may add options to
# its modes (ONLY: e.g. -n, -x, -S), and replace the quick mode's own (QUICK) and give the
# papers mode its own (PAPERS).
# Each benchmark's record (jitterbench/benchmarks/) states its quick values.
QUICK = [*jitterbench.benchmarks.calls_options(100), *jitterbench.benchmarks.quick_options()]
_STRICT = ["-S", "require_reference=1", "-S", "strict_references=1"]


def _mode(module, name):
    """A mode's options for one system: its checks' variants of the mode's tag."""
    # no --max-retries: a case relaunches a disturbed launch itself (JitterbenchCheck.launches), and a
    # retry would pool a failed last round with its first attempt's other rounds; a failed check is
    # run again whole instead (jitterbench again: docs/references.md, "Two attempts")
    own = {"quick": getattr(module, "QUICK", QUICK), "acceptance": _STRICT,
           "papers": getattr(module, "PAPERS", [])}[name]
    # the suite in rounds (settings.ROUNDS): each case's launches spread over the session, a case
    # judged by its last round over all of them (harness.rounds.Rounds).  The papers'
    # findings are judged within one launch each.
    rounds = [f"--repeat={settings.rounds()}"] if name != "papers" and settings.rounds() > 1 else []
    return [*_common_options, "-t", name, *getattr(module, "ONLY", []), *own, *rounds]


_GENERAL = {"report_file": os.path.join(OUTPUT, "report.json"), "purge_environment": False,
            "check_search_path": [os.path.join(REPO, "reframe_checks")]}

site_configuration = {
    "systems": [m.SYSTEM for m in _systems],
    "environments": [env for m in _systems for env in m.ENVIRONMENTS],
    # per system: quick (a few minutes on 2 cores), papers (the papers' findings, reframe_checks/papers.py)
    # and acceptance (the full sweep a site runs to
    # accept a machine, every reference required)
    "modes": [{"name": name, "target_systems": [m.SYSTEM["name"]], "options": _mode(m, name)}
              for m in _systems for name in ("quick", "acceptance", "papers")],
    # the checks without -c too: `reframe -C systems/config.py --system NAME -l` lists them.  On
    # `local` ReFrame's polls would wake beside the benchmark's ranks: its scheduler there, jb-local
    # (jitterbench/harness/schedulers.py), waits for the job instead
    "general": [_GENERAL],
    "storage": [{"enable": True, "sqlite_db_file": os.path.join(OUTPUT, "results.db")}],
    "logging": [{
        "handlers": [{"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
                     {"type": "file", "name": os.path.join(OUTPUT, "reframe.log"), "level": "debug",
                      "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s", "append": False}],
        "handlers_perflog": [{
            "type": "filelog",
            "prefix": os.path.join(OUTPUT, "perflogs", "%(check_system)s", "%(check_partition)s"),
            "level": "info",
            # check_#ALL: every parameter and loggable variable (the eager variable actually
            # set, the MPI library, the node list) and the performance values
            "format": "%(check_job_completion_time)s|%(check_result)s|%(check_#ALL)s",
            # columns <var>_value, <var>_unit, <var>_ref, <var>_lower_thres, <var>_upper_thres
            "format_perfvars": ("%(check_perf_value)s|%(check_perf_unit)s|%(check_perf_ref)s|"
                                "%(check_perf_lower_thres)s|%(check_perf_upper_thres)s|"),
            "append": True,
        }, *results_handlers()],  # JB_RESULTS_URL: each record also posted where the site looks
    }],
}
