"""ReFrame support for the configuration (systems/*.py): programming environments,
the papers' machines, install prefixes, and the scales a partition runs at.

The launchers live in jitterbench/launchers.py (imported here, which registers
them) and the checks' bases in jitterbench/checks.py, which only ReFrame's
loader imports: its parameters are read from the configured system.
"""
from __future__ import annotations

import os

from . import launchers  # noqa: F401  registers jb-mpirun, poe, bgp-mpirun and yod

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(REPO, "src")
# empty counts as unset: CI variables are often declared empty
REFERENCE_DIR = os.environ.get("JB_REFERENCE_DIR") or os.path.join(REPO, "reference_data")


def install_prefix(variable):
    """Where a programming environment's installed binaries are, {environ} standing
    for its name: the variable (JB_PREFIX, JB_OSU_PREFIX) if set, else that
    environment's view of the Spack environment when JB_SPACK_VIEWS names the
    views' folder (spack.yaml names one view per MPI after the environments),
    else '' (build with CMake, or look on PATH)."""
    views = os.environ.get("JB_SPACK_VIEWS", "")
    return os.environ.get(variable) or (os.path.join(views, "{environ}") if views else "")


def environment(flavour, system, **env):
    """A ReFrame programming environment for one MPI on one system: the MPI's own
    variables plus the system's (env); PATH entries go in front of the job's PATH."""
    env_vars = {**flavour.env, **env}
    if "PATH" in env_vars:
        env_vars["PATH"] = f"{env_vars['PATH']}:$PATH"
    return {
        "name": flavour.name,
        "target_systems": [system],
        "features": ["mpi", flavour.name],
        "cc": flavour.mpicc,
        "env_vars": [[k, v] for k, v in env_vars.items()],
        "extras": {"eager_vars": flavour.eager_vars, "bind_vars": flavour.bind_vars},
    }


def paper_system(name, descr, environs, partition):
    """A machine of the papers (../shared/papers): selected only by --system NAME, its
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
