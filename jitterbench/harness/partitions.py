"""What the partitions of the system ReFrame runs on offer the checks: the node counts, tasks per
node, distributions and rails their parameters take, the quick mode's sizes, the environments
the papers' findings and the transport variants run under.

Read when a check's class is defined (ReFrame fixes a test's parameters then), so only ReFrame's
loader imports this module: the checks' bases (mpi_check.py) and reframe_checks/.
"""
from __future__ import annotations

import reframe.core.runtime as rt

from .configuration import per_node_scale


def partitions(feature="mpi"):
    """The partitions with feature of the system ReFrame runs on (--system, or the
    first whose hostnames match)."""
    return [p for p in rt.runtime().system.partitions if feature in p.features]


def partition_scale(extra, sizes, feature="mpi"):
    """The sizes the partitions with feature run at: sizes(extras[extra]) of each one
    (scale of max_nodes, per_node_scale of max_tasks_per_node), merged without duplicates."""
    return sorted({n for p in partitions(feature) for n in sizes(p.extras.get(extra, 1))})


def partition_distributions(feature="mpi"):
    """block, and cyclic where a partition can deal ranks round-robin: srun
    (--distribution) on more than one node.  The other launchers here place ranks
    block-wise only."""
    cyclic = any(p.launcher_type.registered_name == "srun" and p.extras.get("max_nodes", 1) > 1
                 for p in partitions(feature))
    return ["block", "cyclic"] if cyclic else ["block"]


def partition_rails(feature="mpi"):
    """1, and every rail count up to the most network devices a partition lists (extras
    rails: the devices of each rail, e.g. ["mlx5_0:1", "mlx5_1:1"])."""
    return sorted({1, *(n for p in partitions(feature) for n in range(1, len(p.extras.get("rails", [])) + 1))})


def first_environments(test):
    """The findings are the network's and the noise's, not one MPI's: each partition's first
    environment of those the test admits runs them (-S valid_prog_environs=... picks others)."""
    admitted = rt.valid_sysenv_comb(test.valid_systems, test.valid_prog_environs)
    return sorted({environs[0].name for environs in admitted.values() if environs})


# Environments that run an MPI over another of its transports (the virtual cluster's Open MPI
# over UCX, MPICH over OFI) carry this feature instead of `mpi`: the checks that prove a
# transport's path (eager limit, ping-pong, halo) take them; the whole suite runs over each
# MPI's own transport.
TRANSPORT_VARIANTS = ["+transport-variant"]


# The quick mode runs two tasks a node (ranks that share a node and ranks that do not,
# in one job), or one where the partitions hold no more (sp2, the torus).
QUICK_TASKS_PER_NODE = min(2, max(partition_scale("max_tasks_per_node", per_node_scale), default=1))
# It runs on two nodes, the network's first pair (one where a partition has one): a smoke test
# whose cases and their costs are the same at any site size (plan prints its cap,
# plan.QUICK_CAP_S).  A partition's whole size is the acceptance mode's: an all-to-all over
# every task of a large machine alone outlasts any smoke test.
QUICK_NODES = partition_scale("max_nodes", lambda most: [min(2, most)])
# The checks whose one run spans a whole partition (every node pair, the congestion study) run
# quick on at most this many of its nodes: enough to name one node among others.
QUICK_MACHINE_NODES = 8


def machine_scale(min_nodes, quick=False):
    """The node counts of a check that runs across a whole partition (at least min_nodes): each
    partition's size, and with quick, the quick mode's count (QUICK_MACHINE_NODES of them at most)."""
    return partition_scale("max_nodes", lambda most: sorted({min(most, QUICK_MACHINE_NODES), *(() if quick else (most,))})
                           if most >= min_nodes else [])
