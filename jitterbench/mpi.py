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

REPO = Path(__file__).resolve().parent.parent
BUILD_ROOT = Path(os.environ.get("JB_BUILD_ROOT", REPO / "build"))
# MPICH (mpich) and Intel MPI (impi-rt, impi-devel) come from PyPI, each into a venv of
# its own, installed by ci/setup.sh.
MPICH_ROOT = Path(os.environ.get("JB_MPICH_ROOT", REPO / ".deps" / "mpich"))
INTEL_MPI_ROOT = Path(os.environ.get("JB_INTEL_MPI_ROOT", REPO / ".deps" / "impi"))


@dataclass(frozen=True)
class MPI:
    name: str
    mpicc: str
    mpirun: str
    env: dict = field(default_factory=dict)
    # launcher flags that allow more ranks than cores
    oversubscribe: tuple = ()
    # the variable that sets the eager limit (bytes), per transport: only
    # names that jb-eager has shown to move the protocol switch (shm, here) or
    # that EagerCheck verifies where the transport exists (tcp, across nodes)
    eager_vars: dict = field(default_factory=dict)
    # variables that make this MPI's own launcher bind each rank to a core (the
    # ReFrame checks set them where a partition's cores are its own)
    bind_vars: dict = field(default_factory=dict)

    def available(self) -> bool:
        path = self.env.get("PATH")
        return all(shutil.which(tool, path=path) for tool in (self.mpicc, self.mpirun))

    def build_dir(self) -> Path:
        return BUILD_ROOT / self.name

    def binary(self, benchmark: str) -> Path:
        return self.build_dir() / f"jb-{benchmark}"

    def launch(self, np: int, argv: list) -> tuple[list, dict]:
        """Command line and environment that run argv on np ranks."""
        env = dict(os.environ)
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
    # probed: 8 KiB -> 8136 bytes eager (ob1 keeps a 56-byte header)
    eager_vars={"shm": "OMPI_MCA_btl_vader_eager_limit", "tcp": "OMPI_MCA_btl_tcp_eager_limit"},
    # mpirun's --bind-to core as its MCA parameter (mpirun(1) of Open MPI 4, "Mapping, Ranking,
    # and Binding"); Open MPI 4 binds to cores by default only up to two ranks
    bind_vars={"OMPI_MCA_hwloc_base_binding_policy": "core"},
)

# MPICH 5.0.2 from PyPI, not Debian's 4.0.2: across nodes 4.0.2 hangs in
# MPI_Finalize over UCX's TCP transport (a rank still disconnecting needs a peer
# that already sits in the PMI barrier; pmodels/mpich#6596, fixed in 4.2).
# Its netmod is UCX: UCX_RNDV_THRESH sets the eager limit between nodes
# (probed across the virtual cluster: 8 KiB -> 8184, 32 KiB -> 32760; default
# about 3 MB).  On a node its own POSIX shared memory sends eagerly what fits
# one queue cell (8 KiB cells -> 8112 bytes); MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE
# moves that down only (32 KiB cells abort at start), so no shm variable is declared.
MPICH = MPI(name="mpich", mpicc=str(MPICH_ROOT / "bin" / "mpicc"), mpirun=str(MPICH_ROOT / "bin" / "mpiexec"),
            env={"PATH": str(MPICH_ROOT / "bin")},
            eager_vars={"tcp": "UCX_RNDV_THRESH"},
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
        "I_MPI_FABRICS": "shm",
    },
    # None declared: on shared memory Intel MPI 2021.18 sends even 4 MiB
    # without waiting for the receive (jb-eager), and neither
    # I_MPI_SHM_CELL_FWD_SIZE, I_MPI_EAGER_THRESHOLD nor
    # MPIR_CVAR_CH4_SHM_POSIX_EAGER_MAX_MSG_SIZE moves that.
    eager_vars={},
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
