/*
 * The sampling maths (derivation in docs/sampling.md). Allocations are sampled as a
 * Poisson process over requested bytes with mean `rate`: each thread counts down the
 * bytes to its next sample point, drawn from an exponential distribution. Because the
 * process is memoryless, an object of s bytes is sampled with probability
 * p(s) = 1 - exp(-s/rate) whatever came before it, and weighting each sample by 1/p(s)
 * makes every count and byte total an unbiased estimate. Runs on the sampled path only;
 * also the rate the live estimate's interval is computed at (hs_ci_rate).
 */
#include "runtime/core.h"
#include "runtime/options.h"
#include "sampler.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

static uint64_t hs_thread_counter;

/* xorshift64*: tiny, fast, and good enough for exponential draws. */
static uint64_t sampler_rand(hs_tls_t *t)
{
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* splitmix64 finaliser, to spread a seed over the state. */
static uint64_t sampler_mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void hs_sampler_seed_thread(hs_tls_t *t, uint64_t seed)
{
    uint64_t n = __atomic_fetch_add(&hs_thread_counter, 1, __ATOMIC_RELAXED);
    if (seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^
               (uint64_t)(uintptr_t)t;
    }
    t->rng = sampler_mix(seed ^ sampler_mix(n)) | 1;
}

int64_t hs_sampler_next(hs_tls_t *t, uint64_t rate)
{
    if (rate <= 1)
        return 0; /* rate 1: every allocation goes to the slow path */
    if (t->rng == 0)
        hs_sampler_seed_thread(t, hs_opt.seed);
    /* u in (0, 1]: 53 random bits, never 0, so log(u) is finite. */
    double u = (double)((sampler_rand(t) >> 11) + 1) * (1.0 / 9007199254740992.0);
    double e = -log(u) * (double)rate;
    if (e >= 9.0e18)
        return INT64_MAX / 2;
    /* floor(E) + 1 bytes: P(countdown <= s) = P(E < s) = 1 - exp(-s/rate). */
    return (int64_t)e + 1;
}

double hs_sampler_weight(uint64_t size, uint64_t rate)
{
    if (rate <= 1 || size == 0)
        return 1.0;
    /* -expm1(-x) = 1 - exp(-x) without cancellation for small x. */
    return 1.0 / -expm1(-(double)size / (double)rate);
}

uint64_t hs_rate_max;

uint64_t hs_ci_rate(void)
{
    uint64_t max = __atomic_load_n(&hs_rate_max, __ATOMIC_RELAXED);
    uint64_t now = __atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
    return max > now ? max : now;
}
