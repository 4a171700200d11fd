/* The rule that names a node from its outlier pairs. */
#ifndef PAIRS_RULE_H
#define PAIRS_RULE_H

/* Whether a node of n is named: more than half its n - 1 pairs are outliers in the same figure
 * (slow_latency of them slow in latency, slow_bandwidth slow in bandwidth), which one cause at the
 * node explains.  Pairs slow in different figures are not added up (README.md, "Outliers": of four
 * nodes, a good node's pair with a slow node and one chance outlier would make two of three). */
int pairs_node_named(long n, long slow_latency, long slow_bandwidth);

#endif
