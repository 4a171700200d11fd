"""`hpcx`: HPCx, IBM p690 frames split into 8-way LPARs on a dual-plane SP Switch2
(Colony), the machine of Hein, Booth and Bull, "Exchanging multiple messages via MPI"
(EPCC, 2003; paper 002 of docs/papers.md).

Select it with --system hpcx.  A node here is an LPAR: 8 POWER4 processors that share
memory and one pair of switch adapters (section 2).  The report used Parallel
Environment for AIX 3.2 and sets MP_EAGER_LIMIT (section 3; section 2 writes
MPI_EAGER_LIMIT): jitterbench/harness/launchers.py's IBM_PE.  reference_data/hpcx.yaml holds every
number the report states.
"""
from jitterbench.harness.launchers import IBM_PE
from jitterbench.harness.configuration import environment, paper_system

ENVIRONMENTS = [environment(IBM_PE, "hpcx")]

SYSTEM = paper_system("hpcx", "HPCx: IBM p690 LPARs on a dual-plane SP Switch2 (paper 002, section 2)", ENVIRONMENTS, {
    "name": "switch2",
    "descr": ("40 frames x 4 LPARs of 8 POWER4 processors at 1.3 GHz; shared memory in an LPAR, "
              "the dual-plane SP Switch2 (Colony) between LPARs (paper 002, section 2)"),
    # IBM PE's batch system, LoadLeveler (poe -llfile, POE man page), has no ReFrame 4.10 scheduler
    "scheduler": "local",
    "launcher": "poe",
    # 40 frames, each divided into 4 LPARs of 8 processors (section 2)
    "extras": {"max_nodes": 40 * 4, "max_tasks_per_node": 8, "transports": ["shm", "switch"]},
})
