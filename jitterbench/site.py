"""What a site is written of, and `jitterbench site new`, which writes one: its ReFrame system
module (systems/sites/NAME.py) and its Spack files beside it in NAME/: packages.yaml (its
externals) and definitions.yaml (the MPIs the Spack environment builds for, spack.yaml's `mpis`).
A site's module makes its programming environments with `environments` below.  Loading the
systems into ReFrame's configuration is the harness's (jitterbench/harness/systems.py).
"""
from __future__ import annotations

import dataclasses
import datetime
import difflib
import os
import re
import shlex
import tempfile
from pathlib import Path

from . import checkout, files, mpi, settings


def sites_folder() -> Path:
    """The systems that run here or at a site: the checkout's systems/sites/."""
    return checkout.systems() / "sites"


def papers_folder() -> Path:
    """The papers' machines: the checkout's systems/papers/."""
    return checkout.systems() / "papers"


class SiteError(ValueError):
    """A site that cannot be written or a system file that does not load: one line naming the
    problem."""


def unknown_key(kind, key, known):
    """A misspelt key named, with the known key nearest to it."""
    near = difflib.get_close_matches(key, sorted(known), n=1)
    return f"unknown {kind} key '{key}'{' (did you mean ' + repr(near[0]) + '?)' if near else ''}"


def _configuration():
    """The harness's configuration helpers, which load ReFrame: only when a site's scheduler is
    named or its environments made."""
    from .harness import configuration  # noqa: PLC0415
    return configuration


# ---- a site's programming environments -------------------------------------------------

# The transports that serve (shared memory, the network) for each MPI on each network a
# site may have (jitterbench/transports.py): one pair that one set of variables selects
# (Open MPI's UCX PML carries both fabrics on InfiniBand).
NETWORK_TRANSPORTS = {
    "openmpi": {"tcp": ("ob1-vader", "ob1-tcp"), "ib": ("ompi-ucx-shm", "ompi-ucx-ib")},
    "mpich": {"tcp": ("mpich-posix", "mpich-ucx-tcp"), "ib": ("mpich-posix", "mpich-ucx-ib")},
    "intelmpi": {"tcp": ("impi-shm", "impi-ofi-tcp"), "ib": ("impi-shm", "impi-ofi-ib")},
}
NETWORKS = ("tcp", "ib")
# the Spack package of each MPI (spack.yaml's `mpis` and a site's externals)
SPACK_PACKAGES = {"openmpi": "openmpi", "mpich": "mpich", "intelmpi": "intel-oneapi-mpi"}


def site_flavour(name):
    """An MPI of mpi.py as a site has it: the standard compiler wrapper, on the PATH its
    modules set, and none of this machine's paths and workstation variables."""
    return dataclasses.replace(mpi.by_name(name), mpicc="mpicc", mpirun="mpirun", env={}, oversubscribe=())


def environments(system, mpis, network):
    """A site's programming environments, one per MPI of mpis ({name: {"modules": [...],
    "env": {...}}}), named after it: its transports on shared memory and the network, its
    eager-limit and device variables (harness/configuration.py: environment), the modules that load it and the
    site's own variables."""
    envs = []
    for name, own in mpis.items():
        for key in own:  # a misspelt "module" would leave the MPI's modules unloaded, silently
            if key not in ("modules", "env"):
                raise SiteError(f"MPIS[{name!r}]: {unknown_key('MPI', key, ('modules', 'env'))}")
        if name not in NETWORK_TRANSPORTS:
            raise SiteError(f"MPIS: unknown MPI '{name}' (known: {', '.join(NETWORK_TRANSPORTS)})")
        shm, net = NETWORK_TRANSPORTS[name][network]
        env = _configuration().environment(site_flavour(name), system, ("shm", network), {"shm": shm, network: net},
                          **own.get("env", {}))
        envs.append({**env, "modules": list(own.get("modules", []))})
    return envs


# ---- site new --------------------------------------------------------------------------

NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
PARTITION = re.compile(r"(?P<name>[A-Za-z0-9_-]+):(?P<nodes>\d+):(?P<tasks>\d+)(?::(?P<access>.+))?")
# the largest partition a site may state: ten times the nodes of the largest machines (Fugaku's
# 158,976) and a thousand times the cores of a node of today; a number beyond is a typing error
# (it would size every sweep of the plan and the checks)
MAX_NODES = 10_000_000
MAX_TASKS_PER_NODE = 100_000
# schedulers that take a partition (queue) as `-p NAME`: the default access of a partition
QUEUED = {"slurm", "squeue", "jb-squeue", "pbs", "torque"}
# ReFrame's schedulers a site's module gets in their mended form (jitterbench/harness/schedulers.py):
# ReFrame's squeue takes a job for ended whenever squeue cannot reach a busy controller
MENDED = {"squeue": "jb-squeue"}


@dataclasses.dataclass
class Partition:
    name: str
    max_nodes: int
    max_tasks_per_node: int
    access: list


def parse_partition(text, scheduler):
    """NAME:MAX_NODES:MAX_TASKS_PER_NODE[:ACCESS]: ACCESS, one scheduler option (colons
    allowed), defaults to `-p NAME` under a queueing scheduler."""
    m = PARTITION.fullmatch(text)
    if m and settings.CONTROL.search(text):  # ACCESS goes into job scripts: a line break there is a command
        raise SiteError(f"partition {text[:60]!r}: a control character (a line break) in it")
    if not m:
        raise SiteError(f"partition '{text[:60]}' is not NAME:MAX_NODES:MAX_TASKS_PER_NODE[:ACCESS]")
    nodes, tasks = int(m["nodes"]), int(m["tasks"])
    if not (1 <= nodes <= MAX_NODES and 1 <= tasks <= MAX_TASKS_PER_NODE):
        raise SiteError(f"partition '{text[:60]}': nodes must be 1 to {MAX_NODES} and tasks per node 1 to "
                        f"{MAX_TASKS_PER_NODE}")
    access = [m["access"]] if m["access"] else ([f"-p {m['name']}"] if scheduler in QUEUED else [])
    return Partition(m["name"], nodes, tasks, access)


# The module a site is.  Every value of the user's in it is a Python literal made by repr (a
# hostname pattern, a partition's access option, the command line): written raw, a text holding
# """ or a quote would end the literal and run as code when ReFrame loads the site.
MODULE = '''\
"""`{name}`: a site, written by `jitterbench site new` ({date}) as COMMAND says.  Fill in the lines
marked SITE.

`reframe -C systems/config.py --system {name} -l` lists what runs here.  Spack: {name}/packages.yaml
(the externals: MPIs, compiler) and {name}/definitions.yaml (the MPIs spack.yaml builds for),
with JB_SPACK_SYSTEM={name}.
"""
from jitterbench.site import environments

COMMAND = {command_q}  # the command line that wrote this site

# SITE: per MPI, the modules that load it (set modules_system below) and the variables its
# jobs need, e.g. the PMI srun offers it (SLURM_MPI_TYPE) or its network devices (UCX_NET_DEVICES)
MPIS = {{
{mpis}
}}
# the fabric between nodes, by the names of jitterbench/transports.py: {networks}
NETWORK = {network_q}

ENVIRONMENTS = environments({name_q}, MPIS, NETWORK)


def partition(name, max_nodes, max_tasks_per_node, access):
    return {{
        "name": name, "scheduler": {scheduler_q}, "launcher": {launcher_q}, "access": access,
        "environs": [e["name"] for e in ENVIRONMENTS], "features": ["mpi"],
        "max_jobs": 1,  # benchmarks must not disturb each other
        "extras": {{"max_nodes": max_nodes, "max_tasks_per_node": max_tasks_per_node,
                   "transports": ["shm", NETWORK],
                   # SITE: "none" where the launcher binds ranks itself or nodes share their cores
                   "binding": "cores"}},
    }}


SYSTEM = {{
    "name": {name_q},
    "descr": {descr_q},  # SITE
    "hostnames": {hostnames_q},
    "modules_system": "nomod",  # SITE: lmod, tmod4, ... where MPIS names modules
    "partitions": [
{partitions}
    ],
}}
'''

PACKAGES = """\
# Spack externals of `{name}`, written by `jitterbench site new` ({date}): the MPIs and the
# compiler the benchmarks are built with, never built by Spack (the point is to measure the MPI
# users run with).  spack.yaml includes this file when JB_SPACK_SYSTEM={name}.  Fill in the
# lines marked SITE; this prints them, found on the machine where it runs:
#   spack external find --not-buildable {finds}
packages:
  all:
    require: target=x86_64_v3          # SITE: your nodes' architecture, e.g. target=zen3
  mpi:
    buildable: false                   # never build an MPI: measure the site's own
{mpis}
  # the compiler the MPIs were built with, stated: without one, Spack 1.1 writes the
  # compilers it detects into spack.yaml, a file of the checkout
  gcc:                                 # SITE: its version, languages, prefix and programs
    buildable: false
    externals:
    - spec: gcc@12.2.0 languages='c,c++'
      prefix: /SITE/gcc
      extra_attributes:
        compilers:
          c: /SITE/gcc/bin/gcc
          cxx: /SITE/gcc/bin/g++
  # the build tools, the system's (else Spack builds them)
  cmake:                               # SITE: its version
    buildable: false
    externals:
    - spec: cmake@3.25.1
      prefix: /usr
  gmake:                               # SITE: its version
    buildable: false
    externals:
    - spec: gmake@4.3
      prefix: /usr
{verbs}"""

PACKAGE_ENTRY = """\
  {package}:{pad}# SITE: its version and prefix (or modules: [{package}/<version>])
    buildable: false
    externals:
    - spec: {package}@{version}
      prefix: /SITE/{package}"""

# example versions of the RDMA libraries and build tools an InfiniBand site lists
VERBS_ENTRIES = """\
  # InfiniBand: the system's RDMA libraries, which perftest (definitions.yaml's verbs) builds on,
  # and the autotools its release tags need (else Spack builds some twenty packages, perl too)
""" + "\n".join(f"""\
  {package}:{" " * (36 - len(package))}# SITE: its version
    buildable: false
    externals:
    - spec: {package}@{version}
      prefix: /usr""" for package, version in [
    ("rdma-core", "50.0"), ("pciutils", "3.9.0"), ("autoconf", "2.71"), ("automake", "1.16.5"),
    ("libtool", "2.4.7"), ("m4", "1.4.19")]) + "\n"
VERBS_PACKAGES = re.findall(r"^  ([a-z0-9-]+):", VERBS_ENTRIES, re.M)

# example versions of the placeholders: valid, so that the file parses, and marked SITE
EXAMPLE_VERSIONS = {"openmpi": "4.1.6", "mpich": "4.2.3", "intel-oneapi-mpi": "2021.13.0"}

# Intel MPI Benchmarks beside OSU, for each MPI: IMB-MPI1 alone (the builtin package's variants; the
# project's package of the same name then builds that program alone), the anchor of
# benchmarks/fidelity.py's halo rows.  systems/sites/local and vcluster state the same
IMB_SPEC = "intel-mpi-benchmarks@2021.7 +mpi1 ~ext ~io ~nbc ~p2p ~rma ~mt"

DEFINITIONS = '''\
# The Spack definitions of `{name}`, written by `jitterbench site new` ({date}): the MPIs
# spack.yaml builds every benchmark for (its matrix's `mpis`, one view each), those of
# packages.yaml beside it.  Intel MPI Benchmarks (IMB-MPI1) are built for each beside OSU where
# `imb` lists them ([] builds none); perftest, the verbs baseline, where `verbs` lists it.
definitions:
- mpis: [{mpis}]
- imb: [{imb}]
- verbs: [{verbs}]
'''


def render(name, hostnames, scheduler, launcher, mpis, network, partitions, command, date):
    """The three files of a site: {relative path: text}."""
    width = max(len(m) for m in mpis)
    mpi_lines = "\n".join(f'    "{m}": {{"modules": [], "env": {{}}}},{" " * (width - len(m))}  # SITE' for m in mpis)
    part_lines = "\n".join(f"        partition({p.name!r}, {p.max_nodes}, {p.max_tasks_per_node}, {p.access!r}),"
                           for p in partitions)
    quoted = {f"{k}_q": repr(v) for k, v in [  # as Python literals: what they hold is never code
        ("name", name), ("network", network), ("scheduler", MENDED.get(scheduler, scheduler)), ("launcher", launcher),
        ("descr", f"{name}: {len(partitions)} partition(s), {network} between nodes"),
        ("hostnames", list(hostnames) or ["^never-selected-by-hostname$"]), ("command", command)]}
    module = MODULE.format(name=name, date=date, mpis=mpi_lines, networks=", ".join(NETWORKS),
                           partitions=part_lines, **quoted)
    packages = [SPACK_PACKAGES[m] for m in mpis]
    entries = [PACKAGE_ENTRY.format(package=p, version=EXAMPLE_VERSIONS[p], pad=" " * (36 - len(p)))
               for p in packages]
    verbs = network == "ib"
    return {
        f"{name}.py": module,
        f"{name}/packages.yaml": PACKAGES.format(
            name=name, date=date, mpis="\n".join(entries), verbs=VERBS_ENTRIES if verbs else "",
            finds=" ".join([*packages, "gcc", "cmake", "gmake", *(VERBS_PACKAGES if verbs else [])])),
        f"{name}/definitions.yaml": DEFINITIONS.format(name=name, date=date, mpis=", ".join(packages), imb=IMB_SPEC,
                                                       verbs="perftest" if verbs else ""),
    }


def _write_new(path: Path, text: str):
    """Writes path whole, only if nothing is there: a temporary file beside it, then a hard
    link to the name (which fails if the name exists, unlike a rename)."""
    tmp = None
    try:  # the temporary file made and named with signals held: a signal cannot leave it behind
        with files.signals_held():
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~files.umask())  # mkstemp's is 0600
        os.link(tmp, path)
    except FileExistsError:
        raise SiteError(f"{path}: exists; a site is never overwritten") from None
    except OSError as e:
        raise SiteError(f"{path}: cannot write: {e.strerror}") from None
    finally:
        if tmp is not None:
            os.unlink(tmp)


def new(name, hostnames, scheduler, launcher, mpis, network, partitions, sites=None, command=""):
    """Writes the site's module and Spack files under sites (systems/sites/); returns their
    paths.  Nothing is written unless every input is good and no file of the site exists yet."""
    sites = Path(sites or sites_folder())
    if not NAME.fullmatch(name):
        raise SiteError(f"site name '{name[:60]}' must be a lower-case letter, then up to 39 of a-z, 0-9, _ and -")
    taken = {p.stem for folder in (sites, papers_folder()) for p in Path(folder).glob("*.py")}
    if name in taken or (sites / name).exists():
        raise SiteError(f"a system named '{name}' exists already ({sites / name}.py or its folder): "
                        "choose another name, or edit it")
    for pattern in hostnames:
        try:
            re.compile(pattern)
        except re.error as e:
            raise SiteError(f"hostname pattern '{pattern[:60]}' is not a regular expression: {e}") from None
    for kind, value in (("scheduler", scheduler), ("launcher", launcher)):
        if not _configuration().known_backend(kind, value):
            raise SiteError(f"unknown {kind} '{value[:40]}': ReFrame has none of that name")
    unknown = [m for m in mpis if m not in NETWORK_TRANSPORTS]
    if unknown or not mpis:
        raise SiteError(f"unknown MPI '{(unknown or [''])[0][:40]}' (known: {', '.join(NETWORK_TRANSPORTS)})")
    if len(set(mpis)) != len(mpis):
        raise SiteError(f"an MPI is named twice in {', '.join(mpis)}")
    if network not in NETWORKS:
        raise SiteError(f"unknown network '{network[:40]}' (known: {', '.join(NETWORKS)})")
    parts = [parse_partition(p, scheduler) for p in partitions]
    if not parts:
        raise SiteError("give at least one --partition NAME:MAX_NODES:MAX_TASKS_PER_NODE[:ACCESS]")
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise SiteError(f"a partition is named twice in {', '.join(names)}")
    date = datetime.date.today().isoformat()
    texts = render(name, hostnames, scheduler, launcher, mpis, network, parts, command, date)
    folder = sites / name
    try:
        folder.mkdir()  # the site's own folder: its existence is the claim on the name
    except OSError as e:
        raise SiteError(f"{folder}: cannot make: {e.strerror}") from None
    written = []
    try:  # the module last: ReFrame sees a site whole or not at all
        for relative in sorted(texts, key=lambda r: r.endswith(".py")):
            path = sites / relative
            _write_new(path, texts[relative])
            written.append(path)
    except BaseException:
        for path in written:  # files this call made, nothing else
            path.unlink(missing_ok=True)
        folder.rmdir()
        raise
    return written


def add_arguments(parser):
    from .console import subcommand  # noqa: PLC0415
    sub = parser.add_subparsers(dest="site_command", required=True, metavar="WHAT")
    p = subcommand(sub, "new", "write a site: systems/sites/NAME.py and its Spack files in systems/sites/NAME/",
                   "README.md (How to add a site)")
    p.add_argument("name", metavar="NAME", help="the site's system name (ReFrame's --system, JB_SPACK_SYSTEM)")
    p.add_argument("--hostname", action="append", default=[], metavar="REGEX",
                   help="a login node's host name pattern that selects the site without --system (repeatable; "
                        "default: none, --system only)")
    p.add_argument("--scheduler", required=True, metavar="SCHEDULER",
                   help="ReFrame's job scheduler: slurm, squeue (Slurm without accounting), pbs, local, ...")
    p.add_argument("--launcher", required=True, metavar="LAUNCHER",
                   help="ReFrame's parallel launcher: srun, mpirun, mpiexec, ...")
    p.add_argument("--mpi", action="append", default=[], required=True, metavar="MPI",
                   help=f"an MPI the site has, one programming environment each (repeatable: "
                        f"{', '.join(NETWORK_TRANSPORTS)})")
    p.add_argument("--network", required=True, metavar="NETWORK", help=f"the fabric between nodes: {', '.join(NETWORKS)}")
    p.add_argument("--partition", action="append", default=[], required=True,
                   metavar="NAME:MAX_NODES:MAX_TASKS_PER_NODE[:ACCESS]",
                   help="a partition (repeatable); ACCESS, one scheduler option (default: '-p NAME' under "
                        "Slurm or PBS)")


def command(args, sites=None):
    argv = ["jitterbench", "site", "new", args.name, *(f"--hostname={h}" for h in args.hostname),
            f"--scheduler={args.scheduler}", f"--launcher={args.launcher}", *(f"--mpi={m}" for m in args.mpi),
            f"--network={args.network}", *(f"--partition={p}" for p in args.partition)]
    written = new(args.name, args.hostname, args.scheduler, args.launcher, args.mpi, args.network, args.partition,
                  sites, shlex.join(argv))
    print(f"jitterbench site new: {checkout.describe()}")
    for path in written:
        print(f"wrote {path}")
    print(f"next: fill in the lines marked SITE, then  reframe -C {checkout.config()} --system {args.name} -l")
