"""The build of the benchmarks a check runs (the checks' `build` fixture): src/ built with CMake
once per programming environment, or the binaries of an installed prefix.
"""
from __future__ import annotations

import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from .. import checkout
from .configuration import install_prefix


class JitterbenchBuild(rfm.CompileOnlyRegressionTest):
    """Builds src/ with CMake once per programming environment, or takes the
    binaries of an installed prefix (install_prefix: JB_PREFIX, or the Spack
    view of JB_SPACK_VIEWS).  With install_root, the build is also installed
    there, in <install_root>/<environ> (the GitLab pipeline's build stage)."""

    build_system = "CustomBuild"
    build_locally = True
    sourcesdir = None
    prefix_template = variable(str, value=install_prefix("JB_PREFIX"))
    install_root = variable(str, value="")

    @run_after("setup")
    def skip_an_mpi_the_views_lack(self):
        """Spack builds for the MPIs a system's definitions.yaml names, one view each: an
        environment whose view holds no jitterbench is an MPI not built there, skipped (and
        every check on it), not failed.  A JB_PREFIX is named by hand: missing, it fails."""
        if os.environ.get("JB_PREFIX") or not os.environ.get("JB_SPACK_VIEWS"):
            return
        view = self.prefix_template.format(environ=self.current_environ.name)
        self.skip_if(not os.access(os.path.join(view, "bin", "jb-halo"), os.X_OK),
                     f"no jitterbench in the Spack view {view}: spack.yaml built none for "
                     f"{self.current_environ.name} on this system")

    @run_before("compile")
    def cmake_or_prefix(self):
        if self.prefix_template:
            self.bindir = os.path.join(self.prefix_template.format(environ=self.current_environ.name), "bin")
            # quoted, as every value in these shell lines: a variable's content (JB_PREFIX,
            # JB_SPACK_VIEWS, a pipeline's form) is a path, never a command
            self.build_system.commands = [f"test -x {shlex.quote(os.path.join(self.bindir, 'jb-halo'))}"]
            return
        self.bindir = os.path.join(self.stagedir, "build")
        cc = shlex.quote(self.current_environ.cc)
        self.build_system.commands = [
            f'cmake -S {shlex.quote(str(checkout.sources()))} -B build -DMPI_C_COMPILER="$(command -v {cc})" -DBUILD_TESTING=OFF',
            "cmake --build build -j 2",
        ]
        if self.install_root:
            prefix = os.path.join(self.install_root, self.current_environ.name)
            self.build_system.commands.append(f"cmake --install build --prefix {shlex.quote(prefix)}")
            self.bindir = os.path.join(prefix, "bin")

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isdir(self.bindir), f"no binaries in {self.bindir}")
