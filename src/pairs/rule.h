/* The rule that names a node from its outlier pairs. */
#ifndef PAIRS_RULE_H
#define PAIRS_RULE_H

/* Whether a node of n is named: more than half its n - 1 pairs are outliers in the same figure
 * (slow_latency of them slow in latency, slow_bandwidth slow in bandwidth), which one cause at the
 * node explains.  Pairs slow in different figures are not added up: of four nodes, a node whose
 * pair with a slow-bandwidth node is an outlier needs one more chance outlier to reach two of
 * three, and a pair's latency is noise of another kind (on shared cores, whether its two ranks
 * share a CPU) than a link's bandwidth. */
int pairs_node_named(long n, long slow_latency, long slow_bandwidth);

#endif
