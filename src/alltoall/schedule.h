/* The round-robin ("chess tournament") schedule of pairwise exchanges
 * (Tabe, Hardwick, Stout, "Statistical Analysis of Communication Time on
 * the IBM SP2", Figure 2). */
#ifndef ALLTOALL_SCHEDULE_H
#define ALLTOALL_SCHEDULE_H

/* P - 1 rounds for even P, P for odd P. */
int alltoall_rounds(int nprocs);
/* The partner of my_proc in round i, or -1 when it sits out (odd P). */
int alltoall_partner(int nprocs, int round, int my_proc);

#endif
