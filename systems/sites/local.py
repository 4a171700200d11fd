"""`local`: this machine, or any workstation.

One node, the local scheduler (jb-local: one that waits for the job), each MPI's own mpirun (the jb-mpirun launcher
runs $JB_MPIRUN), one task per core, safe to run as root.  One
programming environment per MPI found (Open MPI from Debian packages,
MPICH and Intel MPI from PyPI), each declaring its features and, in extras,
the variables that set its eager limit per transport.
"""
import os

from jitterbench import mpi
from jitterbench.harness.configuration import environment

# each MPI's own mpirun, quoted: ReFrame exports values as they are written
ENVIRONMENTS = [environment(flavour, "local", JB_MPIRUN='"' + " ".join([flavour.mpirun, *flavour.oversubscribe]) + '"')
                for flavour in mpi.available()]

# this machine's RDMA adapters, which perftest measures (reframe_checks/perftest.py): what the
# kernel lists, as ibv_devices does
RDMA_DEVICES = sorted(os.listdir("/sys/class/infiniband")) if os.path.isdir("/sys/class/infiniband") else []

# the CPUs this process may run on (its affinity, which a container's or a batch job's cpuset
# narrows), not the machine's count: more tasks than these would time-slice
CORES = len(os.sched_getaffinity(0))

# its hostnames match any host: tried after every other system (jitterbench/harness/systems.py), and
# systems/config.py says so when it is chosen that way
FALLBACK = True

SYSTEM = {
    "name": "local",
    "descr": "this machine: one node, shared-memory transport",
    "hostnames": [".*"],
    "modules_system": "nomod",
    "partitions": [{
        "name": "default",
        "descr": f"{CORES} cores, one task per core",
        "scheduler": "jb-local",  # waits for the job: jitterbench/harness/schedulers.py
        "launcher": "jb-mpirun",
        "environs": [e["name"] for e in ENVIRONMENTS],
        "features": ["mpi"],
        "max_jobs": 1,
        # one task per core: more would time-slice and measure the scheduler
        "extras": {"max_nodes": 1, "max_tasks_per_node": CORES, "transports": ["shm"],
                   "rdma_devices": RDMA_DEVICES},
    }],
}
