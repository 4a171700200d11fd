"""`c1a`: IBM POWER6 nodes on InfiniBand, the second machine of J. Hague's "Switch
Jitter" (IBM, Nov 2008; paper 000 of docs/papers.md).

Select it with --system c1a.  The slides state 32 cores and 8 InfiniBand switch links
per node; poe and MP_EAGER_LIMIT are the study's, as on hpce (jitterbench/harness/launchers.py:
IBM_PE, PoeLauncher).  reference_data/c1a.yaml holds every number the slides state.
"""
from jitterbench.harness.launchers import IBM_PE
from jitterbench.harness.configuration import environment, paper_system

ENVIRONMENTS = [environment(IBM_PE, "c1a")]

SYSTEM = paper_system("c1a", "IBM POWER6 with InfiniBand (paper 000, Introduction)", ENVIRONMENTS, {
    "name": "infiniband",
    "descr": "32 cores per node, 8 InfiniBand switch links per node (paper 000, Introduction)",
    # no LoadLeveler scheduler in ReFrame 4.10: local, as on hpce
    "scheduler": "local",
    "launcher": "poe",
    # max_nodes: the largest run the slides name, "120 nodes, 1920 tasks"; the machine's
    # size is not stated in the paper: set it for your machine
    "extras": {"max_nodes": 120, "max_tasks_per_node": 32, "transports": ["shm", "switch"]},
})
