"""`sp2`: the IBM SP2 of Tabe, Hardwick and Stout, "Statistical Analysis of
Communication Time on the IBM SP2" (paper 003 of docs/papers.md):
32 Thin Node 66 POWER2 nodes, one processor each, on the High-Performance Switch.

Select it with --system sp2.  With one processor per node every message crosses the
switch, so the partition has no shared-memory transport and runs one task per node.
Its modes run Table 1's all-to-all, whose values reference_data/sp2.yaml gives
ReFrame beside every number the paper states.  The paper used IBM's MPL, not MPI
(section 2.3); the checks run IBM Parallel Environment's MPI
(jitterbench/harness/launchers.py's IBM_PE), whose eager limit is MP_EAGER_LIMIT.
"""
from jitterbench.harness.launchers import IBM_PE
from jitterbench.harness.configuration import environment, paper_system

ENVIRONMENTS = [environment(IBM_PE, "sp2")]

SYSTEM = paper_system("sp2", "IBM SP2 with the High-Performance Switch (paper 003, section 2)", ENVIRONMENTS, {
    "name": "hps",
    "descr": "32 Thin Node 66 POWER2 nodes of 256 MB, one processor each, on the HPS (paper 003, section 2.1)",
    # IBM PE's batch system, LoadLeveler (poe -llfile, POE man page), has no ReFrame 4.10 scheduler
    "scheduler": "local",
    "launcher": "poe",
    "extras": {"max_nodes": 32, "max_tasks_per_node": 1, "transports": ["switch"]},
})

# Its modes reproduce Table 1: the pairwise all-to-all of 1 MB messages on 2 to 32
# processors, one task per node (the partition's size: tasks_per_node is 1 here; one node
# would be one task, which is no case).  Quick: the pairwise method only, the MPI's own
# eager limit, block distribution (the quick variants), on Table 1's node counts, not the
# quick mode's two nodes.
ONLY = ["-n", "AlltoallCheck", "-S", "AlltoallCheck.msg_sizes=1048576"]
QUICK = ["-S", "AlltoallCheck.calls=100", "-S", "AlltoallCheck.methods=pairwise", "-P", "nodes=2,4,8,16,32"]
