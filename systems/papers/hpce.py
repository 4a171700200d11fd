"""`hpce`: IBM POWER5+ nodes on the Federation switch, the first machine of J. Hague's
"Switch Jitter" (IBM, Nov 2008; paper 000 of docs/papers.md).

Select it with --system hpce.  The slides state 16 cores and 2 Federation links per
node, poe ("Interference with poe s/w") and MP_EAGER_LIMIT; IBM Parallel Environment's
compiler wrapper and launcher are set in jitterbench/harness/launchers.py (IBM_PE, PoeLauncher).
reference_data/hpce.yaml holds every number the slides state.
"""
from jitterbench.harness.launchers import IBM_PE
from jitterbench.harness.configuration import environment, paper_system

ENVIRONMENTS = [environment(IBM_PE, "hpce")]

SYSTEM = paper_system("hpce", "IBM POWER5+ with the Federation switch (paper 000, Introduction)", ENVIRONMENTS, {
    "name": "federation",
    "descr": "16 cores per node, 2 Federation switch links per node (paper 000, Introduction)",
    # IBM PE's batch system, LoadLeveler (poe -llfile, POE man page), has no ReFrame 4.10
    # scheduler: the local one runs the job script where ReFrame runs, e.g. in an allocation
    "scheduler": "local",
    "launcher": "poe",
    # max_nodes: the largest run the slides name, "64 nodes, 1024 tasks"; the machine's
    # size is not stated in the paper: set it for your machine
    "extras": {"max_nodes": 64, "max_tasks_per_node": 16, "transports": ["shm", "switch"]},
})
