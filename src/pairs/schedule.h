/* Every node pair once, in rounds of disjoint pairs: the round-robin tournament. */
#ifndef PAIRS_SCHEDULE_H
#define PAIRS_SCHEDULE_H

/* The rounds that meet each of n nodes with every other once (the circle method): n - 1
 * for an even n, n for an odd n, where each round one node rests (a bye). */
long pairs_rounds(long n);
/* The partner of node (0 <= node < n) in round (0 <= round < pairs_rounds(n)), or -1: its bye.
 * Each round's pairs are disjoint; over the rounds every pair meets exactly once. */
long pairs_partner(long n, long round, long node);

#endif
