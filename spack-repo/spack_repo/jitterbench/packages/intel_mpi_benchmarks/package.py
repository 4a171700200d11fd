# Intel MPI Benchmarks as Spack's builtin package has it, but building only the programs its
# variants ask for.  The builtin (spack-packages v2025.11.0) runs `make TARGET=MPI1 ...` in the
# top folder, whose default goal `all` makes every program (IMB-MPI1, -NBC, -RMA, -EXT, -IO,
# -MT, -P2P: each a build of src_cpp of its own) whatever the variants, and then installs those
# the variants name.  spack.yaml builds IMB-MPI1 alone (systems/sites/<name>/definitions.yaml,
# `imb`: +mpi1 and every other program's variant off), so this asks the top Makefile for
# those goals (its targets IMB-MPI1, IMB-NBC, ...) instead: one build of src_cpp, not seven.
# Being in the project's repository, which spack.yaml lists before the builtin one, it is the
# package Spack takes for `intel-mpi-benchmarks`.
from spack_repo.builtin.packages.intel_mpi_benchmarks.package import (
    IntelMpiBenchmarks as BuiltinIntelMpiBenchmarks,
)

from spack.package import *

# the builtin package's variants (mpi1, ext, io, nbc, p2p, rma, mt), each the program IMB-<NAME>
PROGRAMS = ("mpi1", "ext", "io", "nbc", "p2p", "rma", "mt")


class IntelMpiBenchmarks(BuiltinIntelMpiBenchmarks):
    """Intel MPI Benchmarks, building only the programs whose variants are on."""

    @property
    def build_targets(self):
        if self.spec.satisfies("@:2019"):  # the builtin's own way for the old layout
            return super().build_targets
        targets = [f"IMB-{name.upper()}" for name in PROGRAMS if self.spec.satisfies(f"+{name}")]
        if self.spec.satisfies("+check"):
            targets.append("CPPFLAGS=-DCHECK")
        return targets
