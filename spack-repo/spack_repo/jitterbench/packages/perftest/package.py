# perftest as a Spack package: Spack's builtin repository (spack-packages v2025.11.0) has none.
# The verbs baseline of reframe_checks/perftest.py; built against the site's rdma-core, an
# external (the packages.yaml `jitterbench site new` writes for an InfiniBand site), as the
# adapters' drivers are the system's.
from spack_repo.builtin.build_systems.autotools import AutotoolsPackage

from spack.package import *


class Perftest(AutotoolsPackage):
    """InfiniBand and RoCE verbs performance tests: ib_send_lat, ib_write_bw, ib_read_lat
    and the rest, the network's own latency and bandwidth beneath an MPI's."""

    homepage = "https://github.com/linux-rdma/perftest"
    git = "https://github.com/linux-rdma/perftest.git"

    license("GPL-2.0-only OR BSD-2-Clause")  # COPYING: the OpenIB.org dual licence

    # release tags, pinned to their commits.  4.5-0.17 (Debian 12's) is the one taken unless a
    # spec names another: the one built and run here against rdma-core 44; Spack would take
    # the newest otherwise, which a site's older rdma-core may not build
    version("25.10.0-0.128", commit="8a1d3d7234add23fe006b2ff51d650ff022077a8")
    version("25.07.0-0.104", commit="c543c8491294266a0061161abf9a6c3406486e21")
    version("4.5-0.17", commit="e63987c4223b08f8c67390c7f60836ad2bf4a6e0", preferred=True)

    # a release tag holds no configure script: autogen.sh makes it with the autotools (a
    # site lists them as externals, or Spack builds them and perl)
    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("m4", type="build")
    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    # configure.ac: libibverbs, librdmacm and libibumad (rdma-core), and libpci on Linux
    depends_on("rdma-core")
    depends_on("pciutils")

    def autoreconf(self, spec, prefix):
        which("sh")("./autogen.sh")
