/*
 * The unit tests' assertion helpers: CHECK(cond, fmt, ...) reports the file, line and a
 * message on stderr and counts the failure; hs_check_done(name) prints the verdict and
 * gives main its exit status. Header-only; each test is one executable.
 */
#ifndef HS_CHECK_H
#define HS_CHECK_H

#include <stdio.h>

static int hs_check_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s:", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, " " __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                                   \
            hs_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

static inline int hs_check_done(const char *name)
{
    if (hs_check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, hs_check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
