/* Figure 2 of the paper, line by line. */
#include "schedule.h"

int alltoall_rounds(int nprocs) { return nprocs % 2 == 0 ? nprocs - 1 : nprocs; }

int alltoall_partner(int nprocs, int i, int my_proc)
{
    int even = nprocs % 2 == 0;
    int m = even ? nprocs - 1 : nprocs;
    if (!even && i == my_proc)
        return -1;
    if (my_proc == m)
        return i;
    if (my_proc == i)
        return m;
    return ((m + i + i - my_proc) % m + m) % m;
}
