/*
 * The sampling maths (sampler.c; docs/sampling.md): a Poisson process over bytes, one
 * exponential countdown per thread.
 */
#ifndef HS_SAMPLER_H
#define HS_SAMPLER_H

#include "runtime/core.h"

#include <stdint.h>

/* Next countdown for thread t: floor(Exp(mean rate)) + 1, so an object of s bytes is
 * sampled with probability exactly 1 - exp(-s/rate). */
int64_t hs_sampler_next(hs_tls_t *t, uint64_t rate);
/* Objects a sample of s bytes stands for: 1/(1-exp(-s/rate)); 1 when rate is 1. */
double hs_sampler_weight(uint64_t size, uint64_t rate);
/* Seeds t's generator from the seed option (or entropy) and a per-thread counter. */
void hs_sampler_seed_thread(hs_tls_t *t, uint64_t seed);

/* The highest rate heapsift_set_rate ever set (0: never called; control.c sets it). */
extern uint64_t hs_rate_max HS_HIDDEN;
/* The rate the live estimate's interval is computed at: the highest ever in effect. */
uint64_t hs_ci_rate(void);

#endif
