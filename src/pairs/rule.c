#include "rule.h"

int pairs_node_named(long n, long slow_latency, long slow_bandwidth)
{
    long most = slow_latency > slow_bandwidth ? slow_latency : slow_bandwidth;
    return 2 * most > n - 1;
}
