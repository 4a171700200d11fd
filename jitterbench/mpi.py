"""The MPI libraries jitterbench builds against, and how to launch each one.

One place knows each library's compiler wrapper, launcher and the
environment its launcher needs on a workstation (root, more ranks than
cores), so the set-up script, the main job and the tests agree.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import checkout
from .transports import TRANSPORTS


def _from_pypi(variable, name) -> Path:
    """Where ci/setup.sh installed an MPI from PyPI, each into a venv of its own: MPICH (mpich)
    and Intel MPI (impi-rt, impi-devel) in the checkout's .deps/NAME, or the variable's folder.
    Outside any checkout there is none (a path that never exists: available() says no)."""
    if os.environ.get(variable):
        return Path(os.environ[variable])
    try:
        return checkout.deps() / name
    except checkout.CheckoutError:
        return Path(os.devnull) / name


MPICH_ROOT = _from_pypi("JB_MPICH_ROOT", "mpich")
INTEL_MPI_ROOT = _from_pypi("JB_INTEL_MPI_ROOT", "impi")


@dataclass(frozen=True)
class MPI:
    name: str
    mpicc: str
    mpirun: str
    env: dict = field(default_factory=dict)
    # launcher flags that allow more ranks than cores
    oversubscribe: tuple = ()
    # the variable that sets the eager limit (bytes), per fabric, for MPIs whose
    # transports are not in jitterbench/transports.py (the papers' machines)
    eager_vars: dict = field(default_factory=dict)
    # the transport (jitterbench/transports.py) that serves each fabric here: its
    # variables select it, set its eager limit and name its devices
    transports: dict = field(default_factory=dict)
    # the family whose account of its transport jitterbench reads (transports.ACCOUNT_VARS)
    family: str = ""
    # variables that make this MPI's own launcher bind each rank to a core (the
    # ReFrame checks set them where a partition's cores are its own)
    bind_vars: dict = field(default_factory=dict)
    # variables that make a waiting rank give its core back instead of spinning, where nodes
    # share CPUs (the virtual cluster): two nodes' ranks on one core otherwise wait out each
    # other's time slice, 4 ms a message (PairsCheck sets them there)
    yield_vars: dict = field(default_factory=dict)

    def available(self) -> bool:
        path = self.env.get("PATH")
        return all(shutil.which(tool, path=path) for tool in (self.mpicc, self.mpirun))

    def eager_var(self, fabric: str) -> str:
        """The variable that sets the eager limit on fabric, or ''."""
        name = self.transports.get(fabric)
        return TRANSPORTS[name].eager_var if name else self.eager_vars.get(fabric, "")

    def build_dir(self) -> Path:
        return checkout.builds() / self.name

    def binary(self, benchmark: str) -> Path:
        return self.build_dir() / f"jb-{benchmark}"

    def launch(self, np: int, argv: list) -> tuple[list, dict]:
        """Command line and environment that run argv on np ranks."""
        env = dict(os.environ)
        if "shm" in self.transports:  # one node: the transport the checks declare for it
            env.update(TRANSPORTS[self.transports["shm"]].select)
        env.update(self.env)
        if "PATH" in self.env:
            env["PATH"] = f"{self.env['PATH']}:{os.environ.get('PATH', '')}"
        return [self.mpirun, *self.oversubscribe, "-np", str(np), *map(str, argv)], env


OPENMPI = MPI(
    name="openmpi",
    mpicc="mpicc.openmpi",
    mpirun="mpirun.openmpi",
    # Open MPI refuses root and more ranks than cores unless told; --quiet
    # keeps its multi-line banners out of a failing run's one-line error.
    env={
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    },
    oversubscribe=("--quiet",),
    transports={"shm": "ob1-vader", "tcp": "ob1-tcp"},
    family="openmpi",
    # mpirun's --bind-to core as its MCA parameter (mpirun(1) of Open MPI 4, "Mapping, Ranking,
    # and Binding"); Open MPI 4 binds to cores by default only up to two ranks
    bind_vars={"OMPI_MCA_hwloc_base_binding_policy": "core"},
    # "Yield the processor when waiting for MPI communication (for MPI processes, will default to 1
    # when oversubscribing nodes)": ompi/runtime/ompi_mpi_params.c; srun's one task a node hides
    # the oversubscription from it.  (MPICH 5 yields without being told; Intel MPI's variable is
    # not among the documentation at hand, so none is set.)
    yield_vars={"OMPI_MCA_mpi_yield_when_idle": "1"},
)

# MPICH 5.0.2 from PyPI, not Debian's 4.0.2: across nodes 4.0.2 hangs in
# MPI_Finalize over UCX's TCP transport (a rank still disconnecting needs a peer
# that already sits in the PMI barrier; pmodels/mpich#6596, fixed in 4.2).
# Built with both CH4 netmods (ch4:ucx,ofi); UCX is its default, OFI the
# variant environment of the virtual cluster.
MPICH = MPI(name="mpich", mpicc=str(MPICH_ROOT / "bin" / "mpicc"), mpirun=str(MPICH_ROOT / "bin" / "mpiexec"),
            env={"PATH": str(MPICH_ROOT / "bin")},
            transports={"shm": "mpich-posix", "tcp": "mpich-ucx-tcp"},
            family="mpich",
            # Hydra's -bind-to core as its variable (MPICH wiki, "Using the Hydra Process
            # Manager", environment settings); unset, Hydra binds nothing
            bind_vars={"HYDRA_BINDING": "core"})

# Intel MPI needs its root, libraries and libfabric providers named, and its
# bin first on PATH, or its mpirun finds another MPI's hydra (../shared/notes/mpi.md).
INTELMPI = MPI(
    name="intelmpi",
    mpicc=str(INTEL_MPI_ROOT / "bin" / "mpicc"),
    mpirun=str(INTEL_MPI_ROOT / "bin" / "mpirun"),
    env={
        "I_MPI_ROOT": str(INTEL_MPI_ROOT),
        "LD_LIBRARY_PATH": str(INTEL_MPI_ROOT / "lib"),
        "FI_PROVIDER_PATH": str(INTEL_MPI_ROOT / "lib"),  # the providers (libtcp-fi.so, ...) live here
        "PATH": str(INTEL_MPI_ROOT / "bin"),
        "I_MPI_FABRICS": "shm",  # one node; an environment across nodes selects shm:ofi (transports)
    },
    transports={"shm": "impi-shm", "tcp": "impi-ofi-tcp"},
    family="intelmpi",
    # one core per rank (Intel MPI Developer Reference, I_MPI_PIN and I_MPI_PIN_DOMAIN)
    bind_vars={"I_MPI_PIN": "1", "I_MPI_PIN_DOMAIN": "core"},
)

ALL = (OPENMPI, MPICH, INTELMPI)


def available() -> list:
    return [m for m in ALL if m.available()]


def built(benchmark: str = "halo") -> list:
    return [m for m in available() if m.binary(benchmark).exists()]


def by_name(name: str) -> MPI:
    for m in ALL:
        if m.name == name:
            return m
    raise KeyError(f"unknown MPI '{name}' (known: {', '.join(m.name for m in ALL)})")


if __name__ == "__main__":
    # For the set-up script: one line per MPI found, "name mpicc", and the
    # environment its compiler wrapper needs, as shell assignments.
    for m in available():
        env = " ".join(f"{k}={v}" for k, v in m.env.items() if k != "PATH")
        print(m.name, m.mpicc, env)
