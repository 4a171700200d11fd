"""`xt3`: a Cray XT3 like PSC's, one of the two machines of Bhatele and Kale, "An
evaluative study on the effect of contention on message latencies in large
supercomputers" (IPDPS 2009; paper 001 of docs/papers.md, abstract only).

Select it with --system xt3.  The abstract states a 3-D torus or mesh; the rest is the
XT3's, cited where it is set.  The partition is the example machine of
systems/topologies/xt-6x4x8.txt (a torus in x and y, a mesh in z), so ContentionCheck
runs on its 192 nodes: give your machine's own topology file.  reference_data/xt3.yaml
holds every number the abstract states.
"""
import os

from jitterbench.mpi import MPI
from jitterbench.harness.configuration import environment, paper_system

TOPOLOGY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "topologies", "xt-6x4x8.txt")

# Cray's MPT: the compiler driver cc compiles and links MPI programs (xt-pe, "compiler
# driver scripts": G. Johansen, "The Cray XT Compilers", CUG 2007).  MPICH_MAX_SHORT_MSG_SIZE
# is Cray XT MPT's eager limit on the SeaStar's Portals ("default is 128000 bytes": CLM's
# test_driver.sh for NCAR's Cray XT5m, xt-mpt 4.0.3), not verified for the XT3's own
# Catamount MPT.  Whether it also covers the two tasks of a node is not documented there:
# no shared-memory variable is declared, so eager_limit variants skip here, as MPICH's on local.
CRAY_MPT = MPI(name="cray-mpt", mpicc="cc", mpirun="yod", eager_vars={"torus": "MPICH_MAX_SHORT_MSG_SIZE"})

ENVIRONMENTS = [environment(CRAY_MPT, "xt3")]

SYSTEM = paper_system("xt3", "Cray XT3, 3-D torus/mesh (paper 001, abstract)", ENVIRONMENTS, {
    "name": "torus",
    "descr": "192 nodes of 2 cores, 6x4x8 torus with a mesh in z (systems/topologies/xt-6x4x8.txt)",
    # PSC's batch system (pbsyod: PBS; GASNet's cross-configure-crayxt3) is not verified to be
    # Torque, so the local scheduler runs the job script where ReFrame runs, in an allocation
    "scheduler": "local",
    "launcher": "yod",
    # 2 cores per node: PSC's XT3, Bigben, had 2,068 compute nodes with two 2.6 GHz Opteron
    # processors each (Wikipedia, "Bigben (computer)"); 192 nodes: the topology file's
    "extras": {"max_nodes": 192, "max_tasks_per_node": 2, "transports": ["shm", "torus"], "topology": TOPOLOGY},
})
