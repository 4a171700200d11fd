/* A minimal assertion kit for the C unit tests: counts checks and ends with
 * the plain "N passed, N failed" line. */
#ifndef JB_CHECK_H
#define JB_CHECK_H

#include <math.h>
#include <stdio.h>

static int checks_passed, checks_failed;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond)                                                            \
            checks_passed++;                                                 \
        else {                                                               \
            checks_failed++;                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                    \
    } while (0)

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static int check_summary(void)
{
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed != 0;
}

#endif
