/*
 * bigheap: the cost of non-sampled malloc/free pairs while many sampled objects are live,
 * as in a service with a heap of gigabytes (at the default 512 KiB rate, 16,384 live
 * samples stand for about 8 GiB). Under heapsift it first samples every allocation
 * (heapsift_set_rate(64), looked up with dlsym so it runs without heapsift too) while it
 * allocates LIVE blocks of 2 KiB and keeps them, then sets a rate nothing reaches and
 * times OPS operations on a ring of 4096 small objects (free the one in a random slot,
 * allocate 16..271 bytes in its place), printing nanoseconds per operation. Every free
 * there is of an unsampled object, so what heapsift adds is its free path's filter test
 * and whatever that test sends to the live table's lock.
 *
 * Usage: bigheap LIVE OPS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RING 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sets heapsift's rate when it is loaded; the allocations after it use up the countdown
 * drawn at the previous rate, so the next one is drawn at the new rate. A refused rate is
 * an error: the timed loop would not measure what it says. */
static void set_rate(unsigned long long rate)
{
    int (*fn)(unsigned long long) =
        (int (*)(unsigned long long))dlsym(RTLD_DEFAULT, "heapsift_set_rate");
    if (!fn)
        return;
    if (fn(rate) != 0) {
        fprintf(stderr, "bigheap: heapsift_set_rate(%llu) failed\n", rate);
        exit(1);
    }
    for (int i = 0; i < 2; i++)
        free(malloc(1 << 20));
}

int main(int argc, char **argv)
{
    if (argc != 3 || atol(argv[1]) < 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s LIVE OPS  (LIVE >= 0, OPS > 0)\n", argv[0]);
        return 1;
    }
    long live = atol(argv[1]), ops = atol(argv[2]);
    void **keep = malloc(sizeof(void *) * (size_t)(live + 1));
    void *ring[RING] = {0};
    uint64_t s = 1;

    if (!keep)
        return 1;
    set_rate(64);
    for (long i = 0; i < live; i++)
        keep[i] = malloc(2048);
    set_rate(1ull << 40);
    double t0 = now();
    for (long i = 0; i < ops; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned k = (unsigned)(s >> 33) % RING;
        free(ring[k]);
        ring[k] = malloc(16 + ((s >> 45) & 255));
    }
    double t1 = now();
    printf("bigheap: live %ld, %ld ops: %.2f ns/op\n", live, ops, (t1 - t0) * 1e9 / (double)ops);
    for (int k = 0; k < RING; k++)
        free(ring[k]);
    for (long i = 0; i < live; i++)
        free(keep[i]);
    free(keep);
    return 0;
}
