"""`torus`: the virtual Slurm cluster wired as a torus, and the model of a site's torus machine.

`ci/vcluster/vcluster.sh up --torus 6` (a ring; 2x3 is a small 2-D torus)
links neighbouring nodes, rate-limits every link and routes dimension-ordered;
it writes the topology file this system names in extras["topology"].  MPI
data crosses the torus links (interface torus0); Slurm keeps the service
bridge, as on a real torus machine.  A site's torus machine needs the same
two things in its own partition: the `topology` feature and
extras["topology"], its topology file (systems/topologies/ has examples).
"""
import os
import sys

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # appended: see config.py
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import vcluster  # noqa: E402  the same cluster, the same MPI set-up across nodes

from jitterbench import mpi  # noqa: E402
from jitterbench.harness.configuration import environment  # noqa: E402

TOPOLOGY = os.path.join(vcluster.STATE, "topology")

# Data over the torus interface.  Ranks of six nodes share two cores here: waiting
# ranks must yield the core, or a message waits for a time slice (ms, not us).
# MPICH is left out: its UCX (1.20) takes a TCP peer only when the kernel's best
# route to it leaves through the interface UCX uses, and here routes leave through
# the per-link interfaces while the address sits on torus0 (MPI_Init fails with
# "Destination is unreachable").  On a real torus the MPI uses the network's own
# transport, not TCP.
OVER_TORUS = {
    "openmpi": {**vcluster.ACROSS_NODES["openmpi"], "OMPI_MCA_btl_tcp_if_include": "torus0",
                "OMPI_MCA_mpi_yield_when_idle": "1"},
    "intelmpi": {**vcluster.ACROSS_NODES["intelmpi"], "FI_TCP_IFACE": "torus0", "I_MPI_WAIT_MODE": "1"},
}

ENVIRONMENTS = [environment(flavour, "torus", ("tcp",), **OVER_TORUS[flavour.name])
                for flavour in mpi.available() if flavour.name in OVER_TORUS]

# the vcluster's partition, with the topology feature and the file of its wiring
_partition = vcluster.SYSTEM["partitions"][0]
SYSTEM = {
    **vcluster.SYSTEM,
    "name": "torus",
    "descr": "the virtual cluster wired as a torus (ci/vcluster/vcluster.sh up --torus DIMS)",
    "partitions": [{
        **_partition,
        "name": "links",
        "descr": f"{vcluster.NODES} nodes on rate-limited torus links, one task per node",
        "environs": [e["name"] for e in ENVIRONMENTS],
        "features": [*_partition["features"], "topology"],
        # overcommit: a check of the links (BunchingFinding's 16 tasks a node) may place more tasks
        # on a node than its cores, as the rate-limited links, not the cores, decide its time
        "extras": {**_partition["extras"], "max_tasks_per_node": 1, "transports": ["tcp"], "topology": TOPOLOGY,
                   "overcommit": True},
    }],
}

# its modes run the contention check on every node of the ring (its nodes parameter is the
# partition's size), and the papers mode Bhatele and Kale's contention for a link there and
# Hague's bunching on two of its nodes; quick: two sizes, the distances a ring of 6 has
ONLY = ["-n", "Contention|BunchingFinding"]
QUICK = ["-S", "ContentionCheck.calls=30", "-S", "ContentionCheck.msg_sizes=8,65536", "-S", "ContentionCheck.distances=1,2,3"]
