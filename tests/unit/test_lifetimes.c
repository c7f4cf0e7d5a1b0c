/*
 * Unit test of the lifetime table (src/preload/record/lifetimes.c): bucket bounds (each bound
 * opens the next bucket; INT64_MAX closes the last), freed objects landing in their
 * stack's bucket with weight and weight * size, ids out of range ignored, and the reset:
 * buckets zeroed and objects allocated before it no longer counted; and the clock:
 * readings converted to nanoseconds agree with CLOCK_MONOTONIC (nanosleep) while the
 * rate is still measured and after it is fixed (100 ms), whichever clock this CPU gets,
 * also when the thread is held up between the TSC and the clock_gettime of a calibration
 * pair: this test's clock_gettime (it binds ahead of libc's for the library's calls)
 * waits 3 ms first when told, as a preemption there would, at the starting pair and at
 * the pair that fixes the rate.
 */
#include "record/lifetimes.h"

#include "check.h"

#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int stall_next; /* the next clock_gettime waits 3 ms first */

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (stall_next) {
        stall_next = 0;
        struct timespec d = {0, 3000000};
        nanosleep(&d, NULL);
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

static void test_buckets(void)
{
    CHECK(hs_lifetime_bucket(0) == 0 && hs_lifetime_bucket(999) == 0, "under 1 us");
    CHECK(hs_lifetime_bucket(1000) == 1 && hs_lifetime_bucket(9999) == 1, "1 us .. 10 us");
    CHECK(hs_lifetime_bucket(99999999999ll) == 8, "under 100 s");
    CHECK(hs_lifetime_bucket(100000000000ll) == 9 && hs_lifetime_bucket(INT64_MAX) == 9,
          "100 s and more");
    CHECK(hs_lifetime_bucket(-5) == 0, "a clock step back counts as 0");
    for (int b = 1; b < HS_LIFE_BUCKETS - 1; b++)
        CHECK(hs_life_bound[b] == 10 * hs_life_bound[b - 1], "bound %d", b);
    CHECK(hs_life_bound[0] == 1000 && hs_life_bound[HS_LIFE_BUCKETS - 1] == INT64_MAX, "ends");
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps ms milliseconds; the clock must count at least that and not much more than the
 * monotonic clock saw. With stall, the conversion's own clock_gettime is held up (the
 * pair that fixes the rate, past 100 ms). Returns the readings per nanosecond. */
static double check_sleep(int ms, const char *when, int stall)
{
    struct timespec d = {0, ms * 1000000l};
    int64_t m0 = mono_ns(), t0 = hs_lifetime_now();
    nanosleep(&d, NULL);
    int64_t t1 = hs_lifetime_now(), m1 = mono_ns();
    stall_next = stall;
    int64_t ns = hs_lifetime_ns(t1 - t0), want = (int64_t)ms * 1000000;
    stall_next = 0;
    CHECK(ns >= want - want / 1000 && ns <= (m1 - m0) + (m1 - m0) / 1000,
          "%s: a %d ms sleep measured %lld ns (monotonic clock: %lld)", when, ms, (long long)ns,
          (long long)(m1 - m0));
    return (double)(t1 - t0) / (double)(ns > 0 ? ns : 1);
}

static double per_ns;

static void test_clock(void)
{
    stall_next = 1; /* the starting pair's clock_gettime held up */
    CHECK(hs_lifetimes_init(4) == 0, "init");
    stall_next = 0;
    CHECK(hs_lifetime_ns(-5) == -5 && hs_lifetime_ns(0) == 0, "no sign change");
    per_ns = check_sleep(30, "rate still measured", 0);
    check_sleep(110, "past the calibration", 1);
    per_ns = check_sleep(20, "rate fixed", 0);
}

static void test_table(void)
{
    static hs_life_t out[4];
    int64_t now = hs_lifetime_now(), two_s = (int64_t)(2e9 * per_ns);
    hs_live_t a = {.addr = 16, .size = 100, .weight = 2.5, .t = now, .stack_id = 1};
    hs_live_t b = {.addr = 32, .size = 8, .weight = 1, .t = now - two_s, .stack_id = 3};
    hs_live_t c = {.addr = 48, .size = 8, .weight = 1, .t = now, .stack_id = 4}; /* no room */
    hs_lifetimes_freed(&a);
    hs_lifetimes_freed(&a);
    hs_lifetimes_freed(&b);
    hs_lifetimes_freed(&c);
    hs_lifetimes_read(out, 4);
    double o1 = 0, o3 = 0, b1 = 0;
    for (int k = 0; k < HS_LIFE_BUCKETS; k++) {
        o1 += out[1][k][0];
        b1 += out[1][k][1];
        o3 += out[3][k][0];
    }
    CHECK(o1 == 5 && b1 == 500 && o3 == 1, "stack 1: %g objects %g bytes; stack 3: %g", o1, b1, o3);
    CHECK(out[3][7][0] == 1 && out[3][7][1] == 8, "2 s lands in the 10 s bucket: %g %g",
          out[3][7][0], out[3][7][1]);
    hs_lifetimes_reset();
    hs_lifetimes_read(out, 4);
    CHECK(out[1][0][0] == 0 && out[3][7][0] == 0, "reset zeroes");
    hs_lifetimes_freed(&b); /* allocated before the reset */
    hs_live_t d = {.addr = 64, .size = 10, .weight = 1, .t = hs_lifetime_now(), .stack_id = 2};
    hs_lifetimes_freed(&d);
    hs_lifetimes_read(out, 4);
    double total = 0;
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < HS_LIFE_BUCKETS; k++)
            total += out[s][k][0];
    CHECK(total == 1, "after the reset only d counts: %g", total);
}

int main(void)
{
    test_buckets();
    test_clock();
    test_table();
    return hs_check_done("test_lifetimes");
}
