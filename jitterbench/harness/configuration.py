"""ReFrame support for the configuration (systems/sites/*.py, systems/papers/*.py): programming
environments, the papers' machines, install prefixes, the scales a partition runs at, and what
the system registry (harness/systems.py) and `site new` ask of ReFrame (its schema, a modules
system, a backend's name).

The launchers and schedulers live in jitterbench/harness/launchers.py and schedulers.py
(imported here, which registers them) and the checks' bases in jitterbench/harness/checks.py and the
modules it builds on, which only ReFrame's loader imports: their parameters are read from the configured system.
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import threading
import time
from pathlib import Path

import reframe
from reframe.core.backends import getlauncher, getscheduler
from reframe.core.modules import ModulesSystem

from ..transports import TRANSPORTS
from . import launchers  # noqa: F401  registers jb-mpirun, poe, bgp-mpirun and yod
from . import schedulers  # noqa: F401  registers jb-local and jb-squeue


def results_handlers():
    """ReFrame's httpjson perflog handler where a site sets JB_RESULTS_URL (docs/history.md): one
    JSON record per test case, every parameter and performance value with its unit, posted to
    the URL (an Elastic index's _doc endpoint, a Grafana-fed collector), with the fields of
    JB_RESULTS_EXTRAS ("site=cscs,cluster=daint") added to each.  None set: no handler."""
    url = os.environ.get("JB_RESULTS_URL")
    if not url:
        return []
    extras = {"facility": "jitterbench"}
    for item in filter(None, os.environ.get("JB_RESULTS_EXTRAS", "").split(",")):  # checked: settings.py
        key, _, value = item.partition("=")
        extras[key.strip()] = value
    _timed_httpjson()
    return [{"type": "httpjson", "url": url, "level": "info", "extras": extras}]


# One record's post to JB_RESULTS_URL, connecting, sending and answering, retries on "429 Too Many
# Requests" included: at most this (_post_within).  A dashboard that has not answered in it is taken for dead and
# no record is posted to it again in the run, so a dead dashboard costs the run this once.
RESULTS_TIMEOUT_S = 10


def _timed_httpjson():
    """ReFrame's httpjson handler, made to give up: ReFrame 4.10's HTTPJSONHandler.emit
    (reframe/core/logging.py) calls requests.post with no timeout, so a dashboard that accepts and
    never answers held the run forever.  Its creator is wrapped through ReFrame's own registry of
    handler types (register_log_handler, the same file), keeping its checks of the URL and its
    first 1-second probe of the server (config reference: "The httpjson log handler"), and the
    handler it makes posts as TimedHTTPJSONHandler does."""
    from reframe.core import logging as rfm_logging  # noqa: PLC0415  ReFrame's: loaded with the configuration

    create = rfm_logging._create_handlers["httpjson"]
    if getattr(create, "timed", False):
        return

    def create_timed(site_config, config_prefix):
        handler = create(site_config, config_prefix)
        if handler is not None:
            handler.__class__ = _timed_handler_class(type(handler))
        return handler

    create_timed.timed = True
    rfm_logging.register_log_handler("httpjson")(create_timed)


def _timed_handler_class(base):
    import requests  # noqa: PLC0415  ReFrame's dependency
    from reframe.core.exceptions import LoggingError  # noqa: PLC0415

    class TimedHTTPJSONHandler(base):
        """ReFrame's HTTPJSONHandler (4.10), its emit with a deadline of RESULTS_TIMEOUT_S a
        record and a dashboard that missed one not asked again."""
        dead = False

        def emit(self, record):
            if self.dead:
                return
            record.check_tags = list(record.check_tags)  # as ReFrame's emit: JSON takes a list
            json_record = self._json_format(record, self._extras, self._ignore_keys)
            if json_record is None or self._debug:  # debug: ReFrame's own (a file, no post)
                return super().emit(record) if json_record is not None else None
            if self._authorization_header is not None:
                self._headers["Authorization"] = self._authorization_header()
            deadline = time.monotonic() + RESULTS_TIMEOUT_S
            backoff = itertools.cycle(self._backoff_intervals)
            try:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise requests.exceptions.Timeout()
                    response = _post_within(left, self._url, data=json_record, headers=self._headers)
                    if response.ok:
                        return
                    if response.status_code != 429:
                        raise LoggingError(f"JB_RESULTS_URL: the dashboard answered HTTP {response.status_code}")
                    time.sleep(min(next(backoff), max(0.0, deadline - time.monotonic())))
            except requests.exceptions.RequestException as e:
                self.dead = True
                what = "no answer" if isinstance(e, requests.exceptions.Timeout) else type(e).__name__
                raise LoggingError(f"JB_RESULTS_URL: {what} within {RESULTS_TIMEOUT_S} s; no more records are "
                                   f"posted to it in this run") from None

    return TimedHTTPJSONHandler


def _post_within(seconds, url, **kw):
    """requests.post, given up after seconds in all: requests' own timeout bounds each wait for a
    byte, so a server that drips one a second is never timed out by it.  The post runs in a daemon
    thread, left behind (and ended with the process) where it outlives the deadline."""
    import requests  # noqa: PLC0415  ReFrame's dependency

    done = []

    def post():
        try:
            done.append(requests.post(url, timeout=seconds, **kw))
        except BaseException as e:  # noqa: BLE001  handed to the caller
            done.append(e)

    worker = threading.Thread(target=post, daemon=True)
    worker.start()
    worker.join(seconds)
    if not done:
        raise requests.exceptions.Timeout(f"no answer within {seconds:.3g} s")
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


def install_prefix(variable):
    """Where a programming environment's installed binaries are, {environ} standing
    for its name: the variable (JB_PREFIX, JB_OSU_PREFIX) if set, else that
    environment's view of the Spack environment when JB_SPACK_VIEWS names the
    views' folder (spack.yaml names one view per MPI after the environments),
    else '' (build with CMake, or look on PATH)."""
    views = os.environ.get("JB_SPACK_VIEWS", "")
    return os.environ.get(variable) or (os.path.join(views, "{environ}") if views else "")


def environment(flavour, system, fabrics=("shm",), transports=None, name=None, features=("mpi",), **env):
    """A ReFrame programming environment for one MPI on one system: the MPI's own
    variables, those that select the transport serving each of the partition's
    fabrics (transports, {fabric: name}, else the MPI's own; jitterbench/transports.py),
    then the system's (env).  PATH entries go in front of the job's PATH.  Extras
    carry per fabric the transport and its eager-limit and device variables, and the
    family whose account of its transport the checks read."""
    chosen = {fabric: TRANSPORTS[t] for fabric, t in {**flavour.transports, **(transports or {})}.items()
              if fabric in fabrics}
    selected = {}
    for fabric in sorted(chosen, key=lambda f: f != "shm"):  # a network's selection wins over shm's
        selected.update(chosen[fabric].select)
    env_vars = {**flavour.env, **selected, **env}
    if "PATH" in env_vars:
        env_vars["PATH"] = f"{env_vars['PATH']}:$PATH"
    eager_vars = {**flavour.eager_vars, **{f: t.eager_var for f, t in chosen.items() if t.eager_var}}
    name = name or flavour.name
    return {
        "name": name,
        "target_systems": [system],
        "features": [*features, flavour.name],
        "cc": flavour.mpicc,
        "env_vars": [[k, v] for k, v in env_vars.items()],
        "extras": {"eager_vars": eager_vars, "bind_vars": flavour.bind_vars, "yield_vars": flavour.yield_vars,
                   "transports": {f: t.name for f, t in chosen.items()},
                   "devices_vars": {f: t.devices_var for f, t in chosen.items() if t.devices_var},
                   "max_devices": {f: t.max_devices for f, t in chosen.items() if t.devices_var and t.max_devices},
                   "family": flavour.family},
    }


def paper_system(name, descr, environs, partition):
    """A machine of the papers (docs/papers.md): selected only by --system NAME, its
    hostnames never match; one partition running environs, one job at a time.  A
    partition with extras["topology"] gets the `topology` feature (ContentionCheck)."""
    topology = ["topology"] if "topology" in partition.get("extras", {}) else []
    return {
        "name": name,
        "descr": descr,
        "hostnames": ["^never-selected-by-hostname$"],
        "modules_system": "nomod",
        "partitions": [{"environs": [e["name"] for e in environs], "features": ["mpi", *topology], "max_jobs": 1,
                        **partition}],
    }


def scale(most):
    """The sizes a partition of `most` (nodes, or cores a node) runs at: the powers of two
    below it, and itself: 1, 2, 4, ..., 64, 120 for 120.  Doubling shows how a quantity
    grows with scale at a cost that grows only with its logarithm; the partition's own
    size is the run a site buys the machine for (the study's P6 run: all 120 nodes)."""
    if most < 1:
        raise ValueError(f"a partition holds at least one, not {most}")
    powers = [1 << k for k in range(most.bit_length()) if 1 << k < most]
    return [*powers, most]


def per_node_scale(cores):
    """The tasks per node a node of `cores` runs at: 1 (the network alone), 2 (tasks that
    share a node beside tasks that do not), half the cores and all of them.  Half full is
    how the study ran P6's 32-core nodes (1920 tasks on 120 nodes), and how sites leave a
    node's memory bandwidth to fewer tasks."""
    if cores < 1:
        raise ValueError(f"a node holds at least one core, not {cores}")
    return sorted({n for n in (1, 2, cores // 2, cores) if 1 <= n <= cores})


# ---- what the system registry (harness/systems.py) and `site new` ask of ReFrame ----------

@functools.lru_cache(maxsize=None)
def schema():
    """ReFrame's configuration schema (reframe/schemas/config.json), which it validates a whole
    configuration against (reframe/core/config.py: jsonschema.validate): one bad system there
    stops ReFrame for every system."""
    with open(Path(reframe.__file__).parent / "schemas" / "config.json") as f:
        return json.load(f)


def modules_system_problem(kind, checked):
    """Why ReFrame cannot use the modules system kind on this host (its own validation,
    reframe.core.modules.ModulesSystem.create: Lmod's LMOD_CMD, Environment Modules'
    modulecmd, spack), or None; checked keeps each kind's answer."""
    if kind not in checked:
        try:
            ModulesSystem.create(kind)
            checked[kind] = None
        except Exception as e:  # ReFrame's ConfigError: "could not find a sane Lmod installation: ..."
            checked[kind] = str(e)
    return checked[kind]


def known_backend(kind, name):
    """Whether ReFrame knows a scheduler or launcher of that name (jitterbench's own included:
    launchers and schedulers are imported above)."""
    try:
        (getscheduler if kind == "scheduler" else getlauncher)(name)
        return True
    except Exception:  # ReFrame's ConfigError for an unknown name
        return False
