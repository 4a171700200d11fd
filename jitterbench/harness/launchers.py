"""ReFrame launchers that ReFrame 4.10 lacks, and the MPI of the papers' IBM machines.

`jb-mpirun` runs each programming environment's own mpirun (local); `poe`,
`bgp-mpirun` and `yod` launch on the papers' machines (systems/papers/hpce.py ...
xt3.py).  Importing this module registers them: systems/config.py imports it
through jitterbench.harness.configuration before ReFrame reads the configuration.
"""
from __future__ import annotations

from reframe.core.backends import register_launcher
from reframe.core.exceptions import ReframeError
from reframe.core.launchers import JobLauncher

from ..mpi import MPI


@register_launcher("jb-mpirun")
class EnvironmentMpirun(JobLauncher):
    """`$JB_MPIRUN -np N`: the launcher named by the programming environment.

    A partition has one launcher, but Open MPI, MPICH and Intel MPI on one
    machine each need their own mpirun; every environment sets JB_MPIRUN.
    """

    def command(self, job):
        return ["${JB_MPIRUN:?the programming environment sets no JB_MPIRUN}", "-np", str(job.num_tasks)]


# IBM Parallel Environment, the MPI of the papers' IBM machines (hpce, c1a, hpcx, sp2):
# mpcc_r compiles and links MPI programs (PE Hitchhiker's Guide, "What happens when I
# compile my applications?"), poe launches, and MP_EAGER_LIMIT, the variable papers 000
# and 002 set, is PE's one protocol threshold for all MPI messages (MPI Programming and
# Subroutine Reference, appendix J), so it serves every transport.
IBM_PE = MPI(name="ibm-pe", mpicc="mpcc_r", mpirun="poe",
             eager_vars={"shm": "MP_EAGER_LIMIT", "switch": "MP_EAGER_LIMIT"})


@register_launcher("poe")
class PoeLauncher(JobLauncher):
    """IBM Parallel Environment's poe.  The job's shape goes in as POE's own variables
    for this one command, `MP_PROCS=N MP_NODES=M MP_TASKS_PER_NODE=K poe prog`: each is
    the variable a poe flag (-procs, -nodes, -tasks_per_node) overrides (poe man page,
    POE 3.1; Slurm's launch/poe plugin sets the same three), and unlike the flags they
    need not follow the program's name (HDF5's config/ibm-aix runs its tests with
    "MP_PROCS=3 MP_TASKS_PER_NODE=3 poe").  POE passes the job's environment on to
    the tasks (GASNet's gasnetrun_mpi.pl), MP_EAGER_LIMIT with it."""

    def command(self, job):
        shape = [f"MP_PROCS={job.num_tasks}"]
        if job.num_tasks_per_node:
            shape += [f"MP_NODES={job.num_tasks // job.num_tasks_per_node}",
                      f"MP_TASKS_PER_NODE={job.num_tasks_per_node}"]
        return [*shape, "poe"]


@register_launcher("bgp-mpirun")
class BlueGenePMpirun(JobLauncher):
    """Blue Gene/P's mpirun: -np ranks, -mode SMP, DUAL or VN for 1, 2 or 4 ranks per
    node (`mpirun -h` of ANL's Surveyor, in GASNet's mpi-conduit/contrib/mpirun_h), and
    -env_all to export the job's environment, DCMF_EAGER with it: BG/P's mpirun passes
    a variable only when told (-env, -exp_env, -env_all: the "BG/P mpirun" column of
    jedbrown/bgq-driver's hlcs/src/runjob/docs/html/Documentation.h; GASNet's
    gasnetrun_mpi.pl)."""

    MODES = {1: "SMP", 2: "DUAL", 4: "VN"}

    def command(self, job):
        per_node = job.num_tasks_per_node or 1
        if per_node not in self.MODES:
            raise ReframeError(f"Blue Gene/P runs 1, 2 or 4 tasks per node, not {per_node}")
        return ["mpirun", "-np", str(job.num_tasks), "-mode", self.MODES[per_node], "-env_all"]


@register_launcher("yod")
class YodLauncher(JobLauncher):
    """Catamount's yod on the Cray XT3: `yod -np N`, with -VN (virtual node mode) to run
    a task on each of a node's two cores (GASNet's cross-configure-crayxt3; "yod -VN -np"
    in CLM's Cray XT test scripts).  Catamount passes the environment on to the tasks
    (GASNet's gasnetrun_mpi.pl)."""

    def command(self, job):
        virtual_nodes = ["-VN"] if (job.num_tasks_per_node or 1) > 1 else []
        return ["yod", *virtual_nodes, "-np", str(job.num_tasks)]
