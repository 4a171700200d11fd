/* The all-to-all schedule: every pair once, the paper's six-processor table. */
#include <stdlib.h>

#include "check.h"
#include "schedule.h"

int main(void)
{
    /* Figure 1: step 1 0-5 1-4 2-3; step 2 1-5 2-0 3-4; step 3 2-5 3-1 4-0;
     * step 4 3-5 4-2 0-1; step 5 4-5 0-3 1-2 */
    static const int six[5][6] = {{5, 4, 3, 2, 1, 0}, {2, 5, 0, 4, 3, 1}, {4, 3, 5, 1, 0, 2},
                                  {1, 0, 4, 5, 2, 3}, {3, 2, 1, 0, 5, 4}};
    CHECK(alltoall_rounds(6) == 5);
    for (int r = 0; r < 5; r++)
        for (int p = 0; p < 6; p++)
            CHECK(alltoall_partner(6, r, p) == six[r][p]);

    for (int n = 2; n <= 33; n++) {
        int rounds = alltoall_rounds(n), ok = rounds == (n % 2 ? n : n - 1);
        int *met = calloc((size_t)(n * n), sizeof *met);
        for (int r = 0; r < rounds; r++)
            for (int p = 0; p < n; p++) {
                int q = alltoall_partner(n, r, p);
                if (q < 0) {
                    ok &= n % 2 == 1 && r == p; /* odd P: processor i sits out round i */
                    continue;
                }
                ok &= q != p && q < n && alltoall_partner(n, r, q) == p; /* symmetric */
                met[p * n + q]++;
            }
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++)
                ok &= met[p * n + q] == (p != q); /* every pair exactly once */
        CHECK(ok);
        free(met);
    }
    return check_summary();
}
