/*
 * The monotonic clock, once for every module that times something: CLOCK_MONOTONIC (not
 * _COARSE, which ticks every 1-4 ms), read through the vDSO, so async-signal-safe and
 * without a lock.
 */
#ifndef HS_MONOCLOCK_H
#define HS_MONOCLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t hs_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t hs_mono_ms(void)
{
    return hs_mono_ns() / 1000000;
}

#endif
