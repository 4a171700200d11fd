"""`vcluster`: the virtual Slurm cluster of ci/vcluster/vcluster.sh, on this machine.

Nodes are network namespaces with their own hostname, IPC and /dev/shm:
ranks on one node use shared memory, ranks on different nodes TCP over veth.
ReFrame submits through Slurm with the `squeue` scheduler (the cluster keeps
no accounting) and launches with srun; each environment picks its PMI
through SLURM_MPI_TYPE and names the interface its TCP transport uses.
Select it with --system vcluster after `ci/vcluster/vcluster.sh up`.
"""
import os

from jitterbench import mpi
from jitterbench.harness.configuration import environment

STATE = os.environ.get("JB_VCLUSTER_DIR", "/run/jitterbench-vcluster")
# sbatch and squeue, run by ReFrame itself, find the cluster through SLURM_CONF
os.environ.setdefault("SLURM_CONF", os.path.join(STATE, "slurm.conf"))
NODES = int(open(os.path.join(STATE, "nodes")).read()) if os.path.exists(os.path.join(STATE, "nodes")) else 3
# `up --rails 2`: each node's two rate-limited networks, eth0 and eth1 (the rails parameter)
RAILS = open(os.path.join(STATE, "rails")).read().split() if os.path.exists(os.path.join(STATE, "rails")) else []

# Across nodes, per MPI (../shared/notes/vcluster.md): the PMI srun offers it, its
# TCP interface, and no binding (every node sees the same two cores).  The transports
# each MPI declares (jitterbench/mpi.py) select the rest: ob1's tcp BTL, MPICH's UCX,
# Intel MPI's OFI tcp provider.  Open MPI's PMIx client keeps its job data in a hash table
# (PMIX_MCA_gds=hash) instead of the shared-memory store ds21, known to crash at start-up with
# many ranks on a node (open-mpi/ompi#6761; the openpmix maintainers' workaround in
# openpmix/openpmix#3019).  By hand with 16 ranks a node, 2 of 37 jobs lost a rank to a segfault
# at address 0 with ds21, none of 77 with the hash; but the same crash still comes now and then
# (a 6-node job of one rank each, under ReFrame), so the tests retry a failed case once.
ACROSS_NODES = {
    "openmpi": {"SLURM_MPI_TYPE": "pmix", "PMIX_MCA_gds": "hash", "OMPI_MCA_btl": "self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include": "eth0", "OMPI_MCA_oob_tcp_if_include": "10.77.0.0/24"},
    "mpich": {"SLURM_MPI_TYPE": "pmi2", "UCX_NET_DEVICES": "eth0"},
    "intelmpi": {"SLURM_MPI_TYPE": "pmix", "I_MPI_PMI": "pmix", "I_MPI_PMI_LIBRARY": "/usr/lib/x86_64-linux-gnu/libpmix.so",
                 "FI_PROVIDER": "tcp", "FI_TCP_IFACE": "eth0", "I_MPI_PIN": "0"},
}
FABRICS = ("shm", "tcp")

# What a site with UCX runs, here over TCP and shared memory: Open MPI's UCX PML (UCX
# 1.13 from Debian) for both fabrics, and MPICH's other netmod, OFI's tcp provider.  MPICH
# runs the whole suite over UCX already; these variants run the checks of a transport's
# path (jitterbench.harness.partitions.TRANSPORT_VARIANTS).
VARIANTS = {
    "openmpi": [("openmpi-ucx", {"shm": "ompi-ucx-shm", "tcp": "ompi-ucx-tcp"}, {"UCX_NET_DEVICES": "eth0"})],
    "mpich": [("mpich-ofi", {"tcp": "mpich-ofi-tcp"}, {"FI_TCP_IFACE": "eth0"})],
}

ENVIRONMENTS = [environment(flavour, "vcluster", FABRICS, **ACROSS_NODES[flavour.name]) for flavour in mpi.available()]
ENVIRONMENTS += [environment(flavour, "vcluster", FABRICS, transports, name, ("transport-variant",),
                             **{**ACROSS_NODES[flavour.name], **env})
                 for flavour in mpi.available() for name, transports, env in VARIANTS.get(flavour.name, [])]

SYSTEM = {
    "name": "vcluster",
    "descr": "virtual Slurm cluster of network-namespace nodes (ci/vcluster/vcluster.sh)",
    "hostnames": ["^never-selected-by-hostname$"],  # only with --system vcluster
    "modules_system": "nomod",
    "partitions": [{
        "name": "vc",
        "descr": f"{NODES} nodes of {os.cpu_count()} cores; shared memory on a node, TCP between nodes",
        "scheduler": "jb-squeue",  # believes a job ended only where squeue answered: harness/schedulers.py
        "launcher": "srun",
        "access": ["-p vc"],
        "environs": [e["name"] for e in ENVIRONMENTS],
        "features": ["mpi"],
        "max_jobs": 1,
        # binding none: every node is this machine's same cores, so ranks of two nodes bound
        # to "their" cores would share them
        "extras": {"max_nodes": NODES, "max_tasks_per_node": os.cpu_count(), "transports": list(FABRICS),
                   "binding": "none", "rails": RAILS},
    }],
}
