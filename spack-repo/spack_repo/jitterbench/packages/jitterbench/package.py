# The jitterbench benchmarks as a Spack package; spack.yaml at the repository's root
# builds it from the checkout (develop) for each MPI provider.
from spack_repo.builtin.build_systems.cmake import CMakePackage

import os

from spack.package import *


class Jitterbench(CMakePackage):
    """Interconnect benchmarks that report the per-call maximum over tasks and the
    tails, not only averages: halo exchange, multi-ping-pong, ring and torus
    patterns with overlap, pairwise all-to-all, contention against hop distance,
    and a probe of the MPI's effective eager limit. C and MPI only."""

    # the project's public home as planned: no release is fetched from it, since
    # spack.yaml builds "main" from the checkout (develop)
    homepage = "https://github.com/jitterbench/jitterbench"
    git = "https://github.com/jitterbench/jitterbench.git"

    # the checkout itself, through spack.yaml's develop entry; no releases yet
    version("main", branch="main")

    @property
    def root_cmakelists_dir(self):
        # src/ of a clone; the source itself when spack.yaml's develop entry points at src/
        return "src" if os.path.exists(join_path(self.stage.source_path, "src", "CMakeLists.txt")) else "."

    depends_on("c", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("mpi")

    def cmake_args(self):
        # the C unit tests are the developers', run by ctest in the checkout
        return [self.define("BUILD_TESTING", False)]
