"""The GitLab pipeline's build stage (ci/gitlab-ci.yml): every benchmark
built with CMake and installed per programming environment of the system,

    reframe -C systems/config.py --system S -c reframe_checks/install.py -S install_root=DIR -r

into DIR/<environ>/bin, with the compilers, modules and variables each
environment declares.  The acceptance stage then runs the checks with
JB_PREFIX=DIR/{environ}.  Tagged `install` only: no mode runs it.
"""
import reframe as rfm
from reframe.core.builtins import run_after

from jitterbench.harness.build import JitterbenchBuild
from jitterbench.harness.partitions import TRANSPORT_VARIANTS


@rfm.simple_test
class JitterbenchInstall(JitterbenchBuild):
    descr = "build and install every benchmark for one programming environment"
    valid_systems = ["+mpi"]
    # an MPI over another of its transports (the virtual cluster's openmpi-ucx) is an environment
    # of its own, whose checks take their binaries from DIR/<its name> like every other's
    valid_prog_environs = ["+mpi", *TRANSPORT_VARIANTS]
    tags = {"install"}

    @run_after("init")
    def needs_a_folder(self):
        self.skip_if(not self.install_root, "set the install folder: -S install_root=DIR")
