/* The circle method: node m - 1 stays put, the others turn one place a round; in round r,
 * nodes i and j (both below m - 1) meet when i + j = 2r (mod m - 1), and the one node with
 * 2i = 2r, i = r (m - 1 is odd), meets node m - 1.  An odd n gets a dummy node m - 1 = n,
 * whose partner rests. */
#include "schedule.h"

long pairs_rounds(long n) { return n < 2 ? 0 : (n % 2 ? n : n - 1); }

long pairs_partner(long n, long round, long node)
{
    long m = n % 2 ? n + 1 : n, turn = m - 1, partner;
    if (node == turn)
        partner = round;
    else if (node == round)
        partner = turn;
    else
        partner = ((2 * round - node) % turn + turn) % turn;
    return partner >= n ? -1 : partner;
}
