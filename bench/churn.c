/*
 * churn: the allocation-heavy workload behind bench/run.sh. T threads each perform N
 * operations; an operation frees the object that has lived longest in the thread's ring of
 * live objects and allocates a new one in its slot, so every free is of an older object,
 * as in a real program, and the allocator sees a steady live set. Sizes are skewed toward
 * small (16..4096 bytes, a few percent larger, up to 64 KiB). Each allocation is made at
 * the bottom of one of three noinline call chains, recursing 10..30 frames deep (picked
 * per operation), so a sampling profiler pays a realistic unwinding cost and its stack
 * table sees many distinct stacks. Everything is deterministic per thread (own PRNG, fixed
 * seed); only the timing varies. It knows nothing of heapsift: run.sh preloads the library
 * or not. It prints the operations per second and the wall time of the churn itself
 * (thread start to join, excluding process start and exit); run.sh times the whole process.
 *
 * Usage: churn [THREADS [OPS_PER_THREAD]]
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_THREADS 2UL
#define DEFAULT_OPS 4000000UL
#define RING 4096 /* live objects per thread: frees lag allocations by RING operations */

#define NOINLINE __attribute__((noinline))
/* After a recursive call: stops gcc from turning the recursion into a loop or a tail jump,
 * either of which would remove the frames the benchmark is meant to have. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

struct worker {
    pthread_t thread;
    uint64_t rng;
    unsigned long ops;
    void *ring[RING];
    uint64_t checksum;
};

static pthread_barrier_t start_barrier;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x;

    *s += 0x9e3779b97f4a7c15ULL;
    x = *s;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Skewed: 60% 16..64, 25% 64..256, 10% 256..1024, 4% 1024..4096, 1% 4 KiB..64 KiB. */
static size_t pick_size(uint64_t r)
{
    unsigned bucket = (unsigned)(r % 100);
    uint64_t x = r >> 8;

    if (bucket < 60)
        return 16 + x % 49;
    if (bucket < 85)
        return 64 + x % 193;
    if (bucket < 95)
        return 256 + x % 769;
    if (bucket < 99)
        return 1024 + x % 3073;
    return 4096 + x % 61441;
}

/* The bottom of every chain: allocate and touch the first and last bytes. */
static NOINLINE void *leaf_alloc(size_t size)
{
    unsigned char *p = malloc(size);

    if (!p) {
        fprintf(stderr, "churn: out of memory (%zu bytes)\n", size);
        exit(3);
    }
    p[0] = (unsigned char)size;
    p[size - 1] = (unsigned char)(size >> 8);
    return p;
}

/* Chain A: plain self-recursion. */
static NOINLINE void *chain_a(int depth, size_t size)
{
    void *p = depth > 0 ? chain_a(depth - 1, size) : leaf_alloc(size);
    KEEP_FRAME();
    return p;
}

/* Chain B: two functions recursing into each other. */
static NOINLINE void *chain_b_odd(int depth, size_t size);

static NOINLINE void *chain_b_even(int depth, size_t size)
{
    void *p = depth > 0 ? chain_b_odd(depth - 1, size) : leaf_alloc(size);
    KEEP_FRAME();
    return p;
}

static NOINLINE void *chain_b_odd(int depth, size_t size)
{
    void *p = depth > 0 ? chain_b_even(depth - 1, size) : leaf_alloc(size);
    KEEP_FRAME();
    return p;
}

/* Chain C: a larger frame per level (a local buffer), as parsers and formatters have. */
static NOINLINE void *chain_c(int depth, size_t size)
{
    volatile char scratch[96];
    void *p;

    scratch[depth % (int)sizeof(scratch)] = (char)depth;
    p = depth > 0 ? chain_c(depth - 1, size) : leaf_alloc(size);
    KEEP_FRAME();
    return p;
}

static void *allocate_via_chain(uint64_t r, size_t size)
{
    int depth = 10 + (int)((r >> 40) % 21);

    switch ((r >> 56) % 3) {
    case 0:
        return chain_a(depth, size);
    case 1:
        return chain_b_even(depth, size);
    default:
        return chain_c(depth, size);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint64_t sum = 0;

    pthread_barrier_wait(&start_barrier);
    for (unsigned long i = 0; i < w->ops; i++) {
        uint64_t r = rng_next(&w->rng);
        size_t slot = i % RING;
        size_t size = pick_size(r);

        free(w->ring[slot]);
        w->ring[slot] = allocate_via_chain(r, size);
        sum += *(unsigned char *)w->ring[slot];
    }
    w->checksum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long threads = DEFAULT_THREADS, ops = DEFAULT_OPS;
    struct worker *workers = NULL;
    uint64_t checksum = 0;
    double start, wall;
    int rc = 1;

    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [THREADS [OPS_PER_THREAD]]  (defaults %lu, %lu)\n", argv[0],
                DEFAULT_THREADS, DEFAULT_OPS);
        return 1;
    }
    if ((argc > 1 && bench_parse_count("churn", argv[1], "THREADS", &threads) < 0) ||
        (argc > 2 && bench_parse_count("churn", argv[2], "OPS_PER_THREAD", &ops) < 0))
        return 1;
    if (threads > 1024) {
        fprintf(stderr, "churn: at most 1024 threads\n");
        return 1;
    }
    workers = calloc(threads, sizeof(*workers));
    if (!workers || pthread_barrier_init(&start_barrier, NULL, (unsigned)threads + 1) != 0) {
        fprintf(stderr, "churn: setup failed\n");
        goto out;
    }
    for (unsigned long t = 0; t < threads; t++) {
        workers[t].rng = 0xc0ffee00ULL + t;
        workers[t].ops = ops;
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
            fprintf(stderr, "churn: pthread_create failed\n");
            exit(1); /* the started threads wait on the barrier forever */
        }
    }
    pthread_barrier_wait(&start_barrier);
    start = bench_now_seconds();
    for (unsigned long t = 0; t < threads; t++) {
        pthread_join(workers[t].thread, NULL);
        checksum += workers[t].checksum;
    }
    wall = bench_now_seconds() - start;
    for (unsigned long t = 0; t < threads; t++)
        for (size_t i = 0; i < RING; i++)
            free(workers[t].ring[i]);

    printf("churn: %lu threads x %lu ops, ring %d, checksum %" PRIu64 "\n", threads, ops, RING,
           checksum);
    printf("wall: %.3f s\n", wall);
    printf("ops/s: %.0f\n", wall > 0 ? (double)(threads * ops) / wall : 0.0);
    rc = 0;
out:
    free(workers);
    return rc;
}
