/* The tournament: for every n from 2 to 257, exactly n(n - 1)/2 pairs, each once, every
 * round disjoint, a partner's partner the node itself, and at most one bye a round. */
#include <stdlib.h>

#include "check.h"
#include "schedule.h"

int main(void)
{
    for (long n = 2; n <= 257; n++) {
        long rounds = pairs_rounds(n), pairs = 0, bad = 0;
        unsigned char *met = calloc((size_t)(n * n), 1);
        long *seen = malloc((size_t)n * sizeof *seen);
        for (long r = 0; r < rounds; r++) {
            long byes = 0;
            for (long i = 0; i < n; i++)
                seen[i] = 0;
            for (long i = 0; i < n; i++) {
                long p = pairs_partner(n, r, i);
                if (p < 0) {
                    byes++;
                    continue;
                }
                bad += p >= n || p == i || pairs_partner(n, r, p) != i || seen[p]++; /* disjoint */
                if (i < p) {
                    bad += met[i * n + p]++ != 0; /* met once */
                    pairs++;
                }
            }
            bad += byes != n % 2;
        }
        CHECK(bad == 0);
        CHECK(pairs == n * (n - 1) / 2);
        CHECK(rounds == (n % 2 ? n : n - 1));
        free(met);
        free(seen);
    }
    CHECK(pairs_rounds(1) == 0 && pairs_rounds(0) == 0);
    return check_summary();
}
