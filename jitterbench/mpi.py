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


@dataclass(frozen=True)
class MPI:
    name: str
    mpicc: str
    mpirun: str
    env: dict = field(default_factory=dict)
    # launcher flags that allow more ranks than cores
    oversubscribe: tuple = ()

    def available(self) -> bool:
        return shutil.which(self.mpicc) is not None and shutil.which(self.mpirun) is not None

    def build_dir(self) -> Path:
        return BUILD_ROOT / self.name

    def binary(self, benchmark: str) -> Path:
        return self.build_dir() / f"jb-{benchmark}"

    def launch(self, np: int, argv: list) -> tuple[list, dict]:
        """Command line and environment that run argv on np ranks."""
        env = dict(os.environ)
        env.update(self.env)
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
)

MPICH = MPI(name="mpich", mpicc="mpicc.mpich", mpirun="mpirun.mpich")

ALL = (OPENMPI, MPICH)


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
    # For the set-up script: one line per MPI found, "name mpicc".
    for m in available():
        print(m.name, m.mpicc)
