/*
 * Unit test of the sampling maths (sampler.c), with fixed seeds: the countdown is
 * exponential with the configured mean, an object of s bytes is sampled with
 * probability 1 - exp(-s/rate), and the weighted estimates of object counts and bytes
 * are unbiased. Tolerances are several standard deviations wide, and the seeds fixed,
 * so the test is deterministic.
 */
#include "runtime/core.h"
#include "record/sampler.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_mean(void)
{
    hs_tls_t t;
    memset(&t, 0, sizeof(t));
    hs_sampler_seed_thread(&t, 42);
    const uint64_t rate = 524288;
    const int n = 200000;
    double sum = 0, sumsq = 0;
    for (int i = 0; i < n; i++) {
        double x = (double)hs_sampler_next(&t, rate);
        CHECK(x >= 1, "countdown %f < 1", x);
        sum += x;
        sumsq += x * x;
    }
    double mean = sum / n, sd = sqrt(sumsq / n - mean * mean);
    /* Exponential: mean = sd = rate; the mean's standard error is rate/sqrt(n). */
    CHECK(fabs(mean - rate) < 5 * rate / sqrt(n), "mean %f, want %llu", mean,
          (unsigned long long)rate);
    CHECK(fabs(sd - rate) < 0.02 * rate, "sd %f, want %llu", sd, (unsigned long long)rate);
}

/* Runs the countdown exactly as the hooks do over `count` objects of `size` bytes;
 * returns how many were sampled and the weighted estimates. */
static void simulate(uint64_t rate, uint64_t size, int count, uint64_t seed, int *sampled,
                     double *est_objects, double *est_bytes)
{
    hs_tls_t t;
    memset(&t, 0, sizeof(t));
    hs_sampler_seed_thread(&t, seed);
    t.countdown = hs_sampler_next(&t, rate);
    *sampled = 0;
    *est_objects = *est_bytes = 0;
    for (int i = 0; i < count; i++) {
        if ((t.countdown -= (int64_t)size) > 0)
            continue;
        t.countdown = hs_sampler_next(&t, rate);
        double w = hs_sampler_weight(size, rate);
        (*sampled)++;
        *est_objects += w;
        *est_bytes += w * (double)size;
    }
}

static void test_probability_and_unbiased(void)
{
    const uint64_t sizes[] = {8, 100, 4096, 65536, 524288, 4u << 20};
    const uint64_t rate = 524288;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        uint64_t s = sizes[k];
        int count = (int)(200000000ull / s > 2000000 ? 2000000 : 200000000ull / s);
        if (count < 20000)
            count = 20000;
        int sampled;
        double obj, bytes;
        simulate(rate, s, count, 7 + k, &sampled, &obj, &bytes);
        double p = -expm1(-(double)s / rate);
        double want = p * count, sd = sqrt(count * p * (1 - p));
        CHECK(fabs(sampled - want) < 5 * sd + 1, "size %llu: sampled %d, want %.1f (sd %.1f)",
              (unsigned long long)s, sampled, want, sd);
        /* The estimate of the object count has sd = sqrt(count * (1-p)/p). */
        double esd = sqrt(count * (1 - p) / p);
        CHECK(fabs(obj - count) < 5 * esd + 1e-9, "size %llu: estimated %.1f objects of %d",
              (unsigned long long)s, obj, count);
        CHECK(fabs(bytes - (double)count * s) < 5 * esd * s + 1e-9,
              "size %llu: estimated %.0f bytes of %.0f", (unsigned long long)s, bytes,
              (double)count * s);
    }
}

static void test_rate_one_and_weights(void)
{
    hs_tls_t t;
    memset(&t, 0, sizeof(t));
    CHECK(hs_sampler_next(&t, 1) == 0, "rate 1 must send every allocation to the slow path");
    CHECK(hs_sampler_weight(1, 1) == 1.0, "rate 1 weight");
    CHECK(hs_sampler_weight(12345, 1) == 1.0, "rate 1 weight");
    CHECK(hs_sampler_weight(0, 4096) == 1.0, "size 0 weight");
    double w = hs_sampler_weight(4096, 4096);
    CHECK(fabs(w - 1.0 / (1.0 - exp(-1.0))) < 1e-12, "weight(rate, rate) = %f", w);
    CHECK(hs_sampler_weight(1u << 30, 4096) == 1.0, "huge objects weigh 1");
}

static void test_reproducible(void)
{
    /* Same seed, same thread order: the same sequence. */
    hs_tls_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.rng = 12345;
    b.rng = 12345;
    for (int i = 0; i < 1000; i++)
        CHECK(hs_sampler_next(&a, 65536) == hs_sampler_next(&b, 65536), "draw %d differs", i);
}

int main(void)
{
    test_mean();
    test_probability_and_unbiased();
    test_rate_one_and_weights();
    test_reproducible();
    return hs_check_done("test_sampler");
}
