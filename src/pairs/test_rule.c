/* The node rule on known counts: more than half a node's pairs slow in one figure names it;
 * pairs slow in different figures do not add up. */
#include "check.h"
#include "rule.h"

int main(void)
{
    /* four nodes: three pairs each */
    CHECK(pairs_node_named(4, 0, 3) == 1);  /* a slow node's three links */
    CHECK(pairs_node_named(4, 0, 2) == 1);
    CHECK(pairs_node_named(4, 2, 0) == 1);
    CHECK(pairs_node_named(4, 1, 1) == 0);  /* its pair with the slow node and one chance outlier */
    CHECK(pairs_node_named(4, 2, 2) == 1);
    CHECK(pairs_node_named(4, 0, 1) == 0);
    /* five nodes: four pairs; half is not more than half */
    CHECK(pairs_node_named(5, 2, 0) == 0);
    CHECK(pairs_node_named(5, 0, 3) == 1);
    CHECK(pairs_node_named(5, 2, 2) == 0);
    /* two nodes: their one pair names both */
    CHECK(pairs_node_named(2, 1, 0) == 1);
    CHECK(pairs_node_named(2, 0, 0) == 0);
    return check_summary();
}
