"""The slow node among its peers, where no reference can say it: a sign test over a run's launches.

Every launch takes a compute probe on every task at once and names the node of the slowest whole
probe (src/core/load.c: window_node, beside window_us and the fastest task's window_min_us: the five
timings together, so that a task held off its core counts, where their median would step over the
stalls; a CPU quota on one virtual node was seen by the median in some launches only).  Where a
partition's nodes share their CPUs (the virtual cluster: every node's ranks on the same two), a
node's probe against a reference measures the other nodes' ranks as much as its own, so no node
figure is referenced there (harness.checks: reads_the_load).  Which node is the slowest in the
same instant is another matter: a load on every node moves every probe alike, a node slowed on its
own (a CPU quota, a power cap, a bad board) is the slowest launch after launch.

Without a slow node, each of a launch's k nodes, holding equally many tasks, is its slowest by
chance 1/k; a node's count over the launches it ran in is then Poisson-binomial, and a node is named
where its count's upper tail falls below the stated rate shared over the nodes tested (Bonferroni):
at most RATE of runs without a slow node name one.  Launches whose nodes hold unequal task counts
(bunched placement) are left out: there the node with more tasks is the slowest more often."""
from __future__ import annotations

import statistics

from scipy.stats import poisson_binom

RATE = 0.01  # a run without a slow node names one at most this often


def slow_nodes(launches, rate=RATE) -> dict:
    """The nodes named slow among their peers.  launches: [(the launch's nodes, the node of its
    slowest probe window, the slowest window over the fastest or None)], each launch of two or more nodes
    holding equally many tasks.  {node: {slowest, launches, chance, p, rate, alpha, lag}}: how many of
    the launches it ran in it was the slowest of, how many chance alone gives, the upper tail's
    probability, the rate and its share over the nodes tested, and the median lag of its slowest
    launches."""
    ran = {}
    for nodes, slowest, lag in launches:
        for node in nodes:
            ran.setdefault(node, []).append((1 / len(nodes), node == slowest, lag))
    alpha = rate / len(ran) if ran else rate
    named = {}
    for node, rows in sorted(ran.items()):
        count = sum(hit for _, hit, _ in rows)
        p = float(poisson_binom.sf(count - 1, [chance for chance, _, _ in rows])) if count else 1.0
        if p < alpha:
            lags = [lag for _, hit, lag in rows if hit and lag]
            named[node] = {"slowest": count, "launches": len(rows), "chance": sum(c for c, _, _ in rows),
                           "p": p, "rate": rate, "alpha": alpha, "lag": statistics.median(lags) if lags else None}
    return named

