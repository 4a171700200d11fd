"""`bgp`: a Blue Gene/P like ANL's, one of the two machines of Bhatele and Kale, "An
evaluative study on the effect of contention on message latencies in large
supercomputers" (IPDPS 2009; paper 001 of docs/papers.md, abstract only).

Select it with --system bgp.  The abstract states a 3-D torus or mesh; the rest is
Blue Gene/P's, cited where it is set.  The partition is the example midplane of
systems/topologies/bgp-midplane-8x8x8.txt, so ContentionCheck runs on its 512 nodes:
give your machine's own topology file.  reference_data/bgp.yaml holds every number
the abstract states.
"""
import os

from jitterbench.mpi import MPI
from jitterbench.harness.configuration import environment, paper_system

TOPOLOGY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "topologies", "bgp-midplane-8x8x8.txt")

# IBM's MPI for BG/P, MPICH2 on DCMF: mpixlc compiles (GASNet's cross-configure-bgp:
# MPI_CC='mpixlc'; ANL Surveyor's makefiles: CC := mpixlc).  DCMF_EAGER is its one
# eager/rendezvous cut-off, in bytes, for all point-to-point messages, default 1200
# (pmodels/mpich, src/mpid/dcmfd/src/comm/mpid_comm.c), so it serves both transports.
BGP_MPI = MPI(name="bgp-mpich2", mpicc="mpixlc", mpirun="mpirun",
              eager_vars={"shm": "DCMF_EAGER", "torus": "DCMF_EAGER"})

ENVIRONMENTS = [environment(BGP_MPI, "bgp")]

SYSTEM = paper_system("bgp", "Blue Gene/P, 3-D torus (paper 001, abstract)", ENVIRONMENTS, {
    "name": "torus",
    "descr": "one midplane, 512 nodes of 4 cores, 8x8x8 torus (systems/topologies/bgp-midplane-8x8x8.txt)",
    # ANL ran Cobalt (qsub, cobalt-mpirun: elygeo/coseis, cst/conf/alcf_intrepid.py), which
    # ReFrame 4.10 has no scheduler for: the local one runs the job script where ReFrame runs
    "scheduler": "local",
    "launcher": "bgp-mpirun",
    # 4 cores per node: "quad-core, 32-bit, 850 MHz PowerPC compute nodes" (KAUST's Shaheen
    # BG/P); maxcores = 4 for ANL's Intrepid (elygeo/coseis); 512 nodes: the topology file's
    "extras": {"max_nodes": 512, "max_tasks_per_node": 4, "transports": ["shm", "torus"], "topology": TOPOLOGY},
})
