"""The system registry: the systems ReFrame's configuration (systems/config.py) is made of, the
order they are tried in, and the line that says when this host runs as the fallback.

systems/sites/ holds the systems that run here or at a site (local, vcluster, torus, and
every site `jitterbench site new` writes: jitterbench/site.py), systems/papers/ the machines of
the papers (dry runs with --system only).  Each system is a module NAME.py defining SYSTEM and
ENVIRONMENTS, checked here against ReFrame's own configuration schema as it is loaded.
"""
from __future__ import annotations

import difflib
import importlib.util
import os
import re
import socket
import sys
from collections import defaultdict
from pathlib import Path

from ..settings import CONTROL
from ..site import SiteError, papers_folder, sites_folder, unknown_key
from . import configuration

# the systems this repository ships, which run anywhere by name (--system); every other module of
# systems/sites/ is a site's own, written for its machine
PROJECT_SYSTEMS = ("local", "vcluster", "torus")


# the names of a system module that systems/config.py reads
MODULE_NAMES = ("SYSTEM", "ENVIRONMENTS", "QUICK", "ONLY", "PAPERS", "FALLBACK")


def _schema_keys():
    """The keys ReFrame's schema allows in a system and in a partition ("additionalProperties":
    false in both)."""
    system = configuration.schema()["properties"]["systems"]["items"]
    return set(system["properties"]), set(system["properties"]["partitions"]["items"]["properties"])


def _schema_problem(module):
    """Where a system module's SYSTEM and ENVIRONMENTS break ReFrame's schema (a value of the
    wrong kind, a required key missing), as ReFrame's own validation would, or None."""
    import jsonschema  # noqa: PLC0415  ReFrame's own dependency, with which it validates
    doc = {"systems": [module.SYSTEM], "environments": module.ENVIRONMENTS, "logging": []}
    error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(configuration.schema()).iter_errors(doc))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)).replace("systems/0", "SYSTEM", 1).replace(
        "environments/", "ENVIRONMENTS/", 1)
    return f"{where or 'the system'}: {error.message[:200]} (ReFrame's configuration schema)"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"jitterbench_system_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    system = getattr(module, "SYSTEM", None)
    if not isinstance(system, dict) or not isinstance(getattr(module, "ENVIRONMENTS", None), list):
        raise SiteError("it defines no SYSTEM (a dict) and ENVIRONMENTS (a list)")
    if system.get("name") != path.stem:  # the name is the file's: Spack's folder and --system agree
        raise SiteError(f"SYSTEM is named {system.get('name')!r}, not {path.stem!r} as its file")
    system_keys, partition_keys = _schema_keys()
    for key in system:
        if key not in system_keys:
            raise SiteError(unknown_key("system", key, system_keys))
    for part in system.get("partitions", []):
        for key in part:
            if key not in partition_keys:
                raise SiteError(unknown_key(f"partition '{part.get('name')}'", key, partition_keys))
    problem = _schema_problem(module)
    if problem:
        raise SiteError(problem)
    for name in vars(module):  # a misspelt QUICK would leave the mode's own options, silently
        near = difflib.get_close_matches(name, MODULE_NAMES, n=1, cutoff=0.8) if name.isupper() else []
        if near and name not in MODULE_NAMES:
            raise SiteError(f"{name}: no name systems/config.py reads (did you mean {near[0]}?)")
    return module


def _names_modules(module) -> bool:
    """Whether a system loads any module: its own, a partition's or an environment's."""
    return bool(module.SYSTEM.get("modules") or any(p.get("modules") for p in module.SYSTEM.get("partitions", []))
                or any(e.get("modules") for e in module.ENVIRONMENTS))


def _running(argv) -> bool:
    """Whether ReFrame's command line runs checks (-r, --run, --dry-run), not only lists or
    describes them."""
    return any(a in ("-r", "--run", "--dry-run") for a in argv[1:])


def load_systems(folders=None, argv=None, say=None) -> list:
    """Every system module of folders, in the order ReFrame tries their hostnames: the sites
    and the papers' machines by name, then those that set FALLBACK (local, whose hostnames
    match any host), so that a site's own hostnames win.  A module that does not load (a
    syntax error, an unknown key, a misspelt name) is named in one line and left out: the
    other systems still load.  A system whose modules system this host lacks (no Lmod on a
    laptop) is read without modules (nomod), said once, unless checks are run (-r) that load
    modules: then ReFrame's own refusal stands."""
    argv = sys.argv if argv is None else argv
    say = say or (lambda line: print(line, file=sys.stderr))
    paths = [p for folder in folders or (sites_folder(), papers_folder()) for p in sorted(Path(folder).glob("*.py"))
             if not p.name.startswith("_")]
    modules, checked, without = [], {}, defaultdict(list)
    for path in paths:
        try:
            module = _load(path)
        except Exception as e:  # whatever the file raised: one line, and the other systems load
            what = f"{type(e).__name__}: {e}" if not isinstance(e, SiteError) else str(e)
            say(f"jitterbench: {path}: {CONTROL.sub(' ', what)}: system '{path.stem}' left out until the file is "
                f"fixed (the other systems load)")
            continue
        kind = module.SYSTEM.get("modules_system")
        problem = None if kind in (None, "nomod") else configuration.modules_system_problem(kind, checked)
        if problem and not (_running(argv) and _names_modules(module)):
            without[problem].append(module.SYSTEM["name"])
            module.SYSTEM["modules_system"] = "nomod"
        modules.append(module)
    for problem, names in without.items():
        say(f"jitterbench: {problem}: system(s) {', '.join(names)} read without modules here (a run there "
            f"that loads modules needs them)")
    return sorted(modules, key=lambda m: bool(getattr(m, "FALLBACK", False)))  # stable: by name within


def hostname_matches(system, hostname) -> bool:
    return any(re.match(pattern, hostname) for pattern in system["hostnames"])


def fallback_note(modules, argv=None, environ=None, hostname=None):
    """When ReFrame's command would run as the fallback system (no other system's hostnames match
    this host, and neither --system nor RFM_SYSTEM names one): the line that says so, or, where
    systems/sites/ holds a site's own system, a SiteError (a site's run never goes on, by mistake,
    on the login node).  None otherwise, and when another program reads the configuration
    (jitterbench plan)."""
    argv = sys.argv if argv is None else argv
    environ = os.environ if environ is None else environ
    command = Path(argv[0]) if argv else Path()
    if "reframe" not in (command.name, command.parent.name):  # `reframe`, or `python -m reframe`
        return None
    if environ.get("RFM_SYSTEM") or any(a == "--system" or a.startswith("--system=") for a in argv):
        return None
    hostname = hostname or socket.gethostname()
    first = next((m for m in modules if hostname_matches(m.SYSTEM, hostname)), None)
    if first is None or not getattr(first, "FALLBACK", False):
        return None
    sites = [m.SYSTEM["name"] for m in modules if Path(m.__file__).parent.name == "sites"
             and m.SYSTEM["name"] not in PROJECT_SYSTEMS]
    if sites:
        raise SiteError(f"no site of systems/sites/ ({', '.join(sites)}) names host '{hostname}' in its hostnames: "
                        f"name one with --system, or run here with --system {first.SYSTEM['name']}")
    return (f"jitterbench: no site of systems/sites/ names host '{hostname}' in its hostnames: running as "
            f"'{first.SYSTEM['name']}', the fallback (a site: --system NAME, or `jitterbench site new`)")
