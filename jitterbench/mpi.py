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
# Intel MPI comes from PyPI (impi-rt, impi-devel) into its own venv, installed by ci/setup.sh.
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
)

# Debian's MPICH is ch4:ucx: UCX chooses eager or rendezvous on every transport.
# Probed: 8 KiB -> 8184 bytes eager, 32 KiB -> 32760 (default 8248).
MPICH = MPI(name="mpich", mpicc="mpicc.mpich", mpirun="mpirun.mpich",
            eager_vars={"shm": "UCX_RNDV_THRESH", "tcp": "UCX_RNDV_THRESH"})

# Intel MPI needs its root, libraries and libfabric providers named, and its
# bin first on PATH, or its mpirun finds MPICH's hydra (../shared/notes/mpi.md).
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
