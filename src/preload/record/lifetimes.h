/*
 * Lifetimes of sampled objects: when a sampled object is freed, its stack accumulates the
 * object's weight and weight * size in the bucket of its lifetime (free time minus the
 * allocation time its live-table entry carries, both on hs_lifetime_now's clock). Buckets
 * are powers of ten in nanoseconds: bucket b holds lifetimes below hs_life_bound[b] (1 us,
 * 10 us, ..., 100 s) and at least the previous bound; the last bucket (bound INT64_MAX)
 * holds 100 s and longer. The dump writes each bucket as its own sample with a numeric
 * label "lifetime" = the bound (docs/formats.md). Storage is mmap'd once, per stack id,
 * updated with atomic compare-and-swap: no lock, no malloc. Called only on sampled paths
 * and by the dump.
 */
#ifndef HS_LIFETIMES_H
#define HS_LIFETIMES_H

#include "livetab.h"

#include <stdint.h>

#define HS_LIFE_BUCKETS 10

/* Upper bounds in nanoseconds: 1e3 .. 1e11, then INT64_MAX. */
extern const int64_t hs_life_bound[HS_LIFE_BUCKETS] __attribute__((visibility("hidden")));

/* objects and bytes freed per bucket, for one stack */
typedef double hs_life_t[HS_LIFE_BUCKETS][2];

/* Reserves room for max_stacks stacks and picks the clock. 0 or -ENOMEM (lifetimes then
 * stay empty). */
int hs_lifetimes_init(uint32_t max_stacks);
/* A reading of the clock allocation times are taken from: TSC ticks, or CLOCK_MONOTONIC
 * nanoseconds where the TSC is not invariant (lifetimes.c). Only differences mean anything,
 * and only between readings taken after hs_lifetimes_init. */
int64_t hs_lifetime_now(void);
/* The nanoseconds of a difference of two readings (a negative one is returned as is). */
int64_t hs_lifetime_ns(int64_t ticks);
/* The bucket of a lifetime of ns nanoseconds. */
int hs_lifetime_bucket(int64_t ns);
/* Sampled object e is freed now: adds it to its stack's bucket. Objects allocated before
 * the last hs_lifetimes_reset are ignored (their allocation is no longer counted). */
void hs_lifetimes_freed(const hs_live_t *e);
/* Copies stacks [0, n) into out (relaxed reads: each value as of about now). */
void hs_lifetimes_read(hs_life_t *out, uint32_t n);
/* Zeroes every bucket (heapsift_reset). */
void hs_lifetimes_reset(void);

#endif
