/*
 * tracked: components with known live bytes, for tests/integration/trackers.sh. Each
 * component allocates through functions of its own and the program counts the bytes
 * each holds (the truth); trackers on those functions must agree. Built with
 * HEAPSIFT_WEAK (without the library every call returns -ENOSYS).
 *   comp_static  a static function; 600 x 512 B allocated before its tracker exists
 *                (the tracker must count them), 400 more after, 300 of all freed
 *   comp_shared  a global function reached through caller_a, caller_b and caller_c
 *   comp_outer   calls comp_shared: its objects count for both trackers
 *   comp_inl     always inlined into inl_user1 and inl_user2: no symbol, only DWARF
 *   comp_race    a thread allocates and frees under it while its tracker is registered
 *   untracked    allocations under no tracked function
 * Prints "tracker NAME TRACKED TRUTH SAMPLES RANGES CI95" per tracker, then
 * "rc NAME VALUE" for the refusals (unknown function, empty name, too many trackers).
 * usage: tracked
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("" ::: "memory")

static void *volatile sink;
static long long truth_static, truth_shared, truth_outer, truth_inl, truth_race;

static void *take(size_t size)
{
    char *p = malloc(size);
    if (!p)
        abort();
    p[0] = 1;
    sink = p;
    return p;
}

static void *keep_static[1000];

static NOINLINE void comp_static(int from, int to)
{
    for (int i = from; i < to; i++)
        keep_static[i] = take(512);
    truth_static += (long long)(to - from) * 512;
    KEEP();
}

NOINLINE void comp_shared(int n, size_t size);
NOINLINE void comp_shared(int n, size_t size)
{
    for (int i = 0; i < n; i++)
        take(size);
    truth_shared += (long long)n * (long long)size;
    KEEP();
}

NOINLINE void caller_a(void);
NOINLINE void caller_a(void)
{
    comp_shared(100, 1000);
    KEEP();
}

NOINLINE void caller_b(void);
NOINLINE void caller_b(void)
{
    comp_shared(200, 3000);
    KEEP();
}

NOINLINE void caller_c(void);
NOINLINE void caller_c(void)
{
    comp_shared(50, 7000);
    KEEP();
}

NOINLINE void comp_outer(void);
NOINLINE void comp_outer(void)
{
    long long before = truth_shared;
    comp_shared(150, 2000);
    truth_outer += truth_shared - before;
    KEEP();
}

static inline __attribute__((always_inline)) void comp_inl(int n, size_t size)
{
    for (int i = 0; i < n; i++)
        take(size);
    truth_inl += (long long)n * (long long)size;
}

NOINLINE void inl_user1(void);
NOINLINE void inl_user1(void)
{
    comp_inl(300, 900);
    KEEP();
}

NOINLINE void inl_user2(void);
NOINLINE void inl_user2(void)
{
    comp_inl(100, 5000);
    KEEP();
}

static NOINLINE void untracked(void)
{
    for (int i = 0; i < 500; i++)
        take(4096);
    KEEP();
}

/* comp_race: rounds of 250 allocations of 256 + (i % 7) * 64 bytes, freeing the
 * previous round's, so objects come and go while main registers the tracker; it goes on
 * for 20 rounds after the registration returned. */
static volatile int race_started, race_stop;
static void *race_keep[2][250];

static NOINLINE void comp_race(int round)
{
    void **mine = race_keep[round & 1], **old = race_keep[!(round & 1)];
    for (int i = 0; i < 250; i++) {
        size_t size = 256 + (size_t)(i % 7) * 64;
        mine[i] = take(size);
        truth_race += (long long)size;
        if (old[i]) {
            truth_race -= 256 + (long long)(i % 7) * 64;
            free(old[i]);
            old[i] = NULL;
        }
        if (round == 0 && i == 10)
            race_started = 1;
    }
    KEEP();
}

static void *race_main(void *arg)
{
    (void)arg;
    int r = 0, after = 0;
    while (after < 20) {
        comp_race(r++);
        after += race_stop;
    }
    return NULL;
}

static void report(const char *name, int h, long long truth)
{
    struct heapsift_tracker_stats st;
    long long b = heapsift_tracker_bytes(h);
    int rc = heapsift_tracker_stats(h, &st);
    printf("tracker %s %lld %lld %llu %llu %.0f %d\n", name, b, truth, st.samples, st.ranges,
           st.bytes_ci95, rc);
}

int main(void)
{
    pthread_t race;
    comp_static(0, 600);
    int h_static = heapsift_tracker_new("static", "comp_static");
    comp_static(600, 1000);
    for (int i = 0; i < 300; i++) {
        free(keep_static[i * 3]);
        truth_static -= 512;
    }
    int h_shared = heapsift_tracker_new("shared", "comp_shared");
    int h_outer = heapsift_tracker_new("outer", "comp_outer");
    int h_inl = heapsift_tracker_new("inline", "comp_inl");
    caller_a();
    caller_b();
    caller_c();
    comp_outer();
    inl_user1();
    inl_user2();
    untracked();
    if (pthread_create(&race, NULL, race_main, NULL) != 0)
        abort();
    while (!race_started)
        ;
    int h_race = heapsift_tracker_new("race", "comp_race");
    race_stop = 1;
    pthread_join(race, NULL);
    report("static", h_static, truth_static);
    report("shared", h_shared, truth_shared);
    report("outer", h_outer, truth_outer);
    report("inline", h_inl, truth_inl);
    report("race", h_race, truth_race);
    printf("rc unknown %d\n", heapsift_tracker_new("x", "no_such_function_anywhere"));
    printf("rc empty_name %d\n", heapsift_tracker_new("", "comp_static"));
    printf("rc bad_handle %lld\n", heapsift_tracker_bytes(999));
    int n = 5, rc;
    while ((rc = heapsift_tracker_new("more", "comp_static")) >= 0)
        n++;
    printf("rc too_many %d after %d\n", rc, n);
    return 0;
}
