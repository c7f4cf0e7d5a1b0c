/*
 * Saturating int64 arithmetic for sums of sample values. Profiles come from anywhere: a
 * count of 2^63-1 is a valid varint and a valid decimal, and pprof's Go code wraps such
 * sums silently (signed overflow is undefined in C). Views, converters and mergers sum
 * with these instead, so an absurd profile shows INT64_MAX rather than a negative total.
 * Header-only, no state.
 */
#ifndef HS_SATMATH_H
#define HS_SATMATH_H

#include <stdint.h>

/* a + b, clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t hs_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* |v|, with |INT64_MIN| clamped to INT64_MAX. */
static inline int64_t hs_sat_abs(int64_t v)
{
    return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
}

#endif
