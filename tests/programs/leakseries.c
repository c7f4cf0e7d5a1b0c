/*
 * A program with known growth for `heapsift suspects` and `heapsift check`
 * (tests/integration/suspects.sh, check.sh). It runs STEPS steps; in each:
 *   site_leak   allocates 64 blocks of 4 KiB and never frees them (+256 KiB a step)
 *   site_drip   allocates 16 blocks of 4 KiB and never frees them (+64 KiB a step)
 *   site_churn  frees and reallocates all 2000 blocks of 4 KiB of a ring: 8 MiB live,
 *               constant, every block renewed each step
 *   site_flat   (before the first step only) 2000 blocks of 4 KiB kept to the end
 * and then, when DIR is given, writes DIR/step.NNN.pb.gz with heapsift_dump. Between
 * steps it sleeps SLEEP_MS milliseconds (for the interval trigger). With READY (not "-"),
 * the file READY is created once site_flat is done (a test watching a live process waits
 * for it). STEPS 0: steps until killed, or until the process that started it is gone (a
 * test watching it live ends it when it is done). With DUMPS, it runs on past STEPS steps
 * until heapsift_stats has counted a dump written during the sleeps of DUMPS different
 * steps (60 s from the start at most, else status 3; at once without the library): the
 * interval trigger's dumps, spread over the steps, are there however slow the machine.
 * Built with HEAPSIFT_WEAK: runs with or without the library.
 * usage: leakseries STEPS [DIR|-] [SLEEP_MS] [READY|-] [DUMPS]
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define RING 2000

static void *ring[RING];
static volatile unsigned long sink;

static void *block(unsigned char tag)
{
    void *p = malloc(BLOCK);
    if (!p) {
        fprintf(stderr, "leakseries: out of memory\n");
        exit(99);
    }
    memset(p, tag, BLOCK);
    sink += ((unsigned char *)p)[BLOCK - 1];
    return p;
}

/* Leaked blocks stay reachable from here (a real leak would not; the profile is the same). */
static void **leaked;
static size_t nleaked, capleaked;

static void keep(void *p)
{
    if (nleaked == capleaked) {
        capleaked = capleaked ? capleaked * 2 : 1024;
        leaked = realloc(leaked, capleaked * sizeof(void *));
        if (!leaked)
            exit(99);
    }
    leaked[nleaked++] = p;
}

__attribute__((noinline)) void site_flat(void)
{
    for (int i = 0; i < RING; i++)
        keep(block(1));
}

__attribute__((noinline)) void site_leak(void)
{
    for (int i = 0; i < 64; i++)
        keep(block(2));
}

__attribute__((noinline)) void site_drip(void)
{
    for (int i = 0; i < 16; i++)
        keep(block(3));
}

__attribute__((noinline)) void site_churn(void)
{
    for (int i = 0; i < RING; i++) {
        free(ring[i]);
        ring[i] = block(4);
    }
}

/* heapsift_stats' count of dumps written; -1 without the library. */
static long long dumps_written(void)
{
    struct heapsift_stats st;
    return heapsift_stats(&st) == 0 ? (long long)st.dumps : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    const char *dir = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
    long sleep_ms = argc > 3 ? atol(argv[3]) : 0;
    long want = argc > 5 ? atol(argv[5]) : 0, seen = 0;
    double start = now_s();
    pid_t parent = getppid();
    site_flat();
    if (argc > 4 && strcmp(argv[4], "-") != 0) {
        FILE *f = fopen(argv[4], "w");
        if (f)
            fclose(f);
    }
    for (int s = 0; steps == 0 || s < steps || seen < want; s++) {
        if (steps == 0 && getppid() != parent)
            break;
        if (steps > 0 && s >= steps && now_s() - start > 60) {
            fprintf(stderr, "leakseries: after 60 s, dumps in the sleeps of %ld steps, want %ld\n",
                    seen, want);
            return 3;
        }
        /* in main itself: the sites' stacks are block < site_* < main (docs/views.md) */
        site_leak();
        site_drip();
        site_churn();
        if (dir) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/step.%03d.pb.gz", dir, s);
            int rc = heapsift_dump(path);
            if (rc)
                fprintf(stderr, "leakseries: heapsift_dump %s: %d\n", path, rc);
        }
        long long before = want ? dumps_written() : 0;
        if (before < 0)
            want = 0; /* no library: nothing to wait for */
        if (sleep_ms) {
            struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
        if (want && dumps_written() > before)
            seen++;
    }
    return 0;
}
