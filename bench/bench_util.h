/*
 * Helpers the benchmark workloads share (header-only: run.sh compiles each workload as
 * one file): a positive-count argument parser that names the program and the argument in
 * its error, and a monotonic clock in seconds.
 */
#ifndef HS_BENCH_UTIL_H
#define HS_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int bench_parse_count(const char *prog, const char *s, const char *what,
                                    unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || s[0] == '-') {
        fprintf(stderr, "%s: %s must be a positive integer, got '%s'\n", prog, what, s);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static inline double bench_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
