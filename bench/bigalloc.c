/*
 * bigalloc: the large-allocation workload of bench/run.sh. Where churn is many small
 * objects, this is the other end of a heap: buffers that grow by realloc (a vector or a
 * string builder doubling from 4 KiB to 256 KiB..4 MiB, as a reader of a file or a
 * response would), zeroed arrays from calloc (16 KiB..1 MiB, a hash table's buckets or a
 * matrix), and page- or cache-line-aligned blocks from posix_memalign, aligned_alloc and
 * memalign (4 KiB..256 KiB, I/O buffers). Most of these sizes are above glibc's mmap
 * threshold or near it, so the allocator itself makes system calls and the profiler's cost
 * per byte is low but its cost per call is exposed. Each thread keeps a ring of 64 live
 * blocks; an operation frees the oldest block and makes a new one of one of the three
 * kinds, and touches every page of it once, as a program that allocates memory uses it.
 * Deterministic (own PRNG, fixed seed per thread); it knows nothing of any profiler. It
 * prints a checksum, the wall time of its loop and the operations per second.
 *
 * Usage: bigalloc [THREADS [OPS_PER_THREAD]]
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_THREADS 1UL
#define DEFAULT_OPS 15000UL
#define RING 64
#define PAGE 4096

#define NOINLINE __attribute__((noinline))

struct worker {
    pthread_t thread;
    uint64_t rng;
    unsigned long ops;
    void *ring[RING];
    uint64_t checksum;
};

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x;

    *s += 0x9e3779b97f4a7c15ULL;
    x = *s;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static NOINLINE __attribute__((cold, noreturn)) void out_of_memory(const char *what, size_t n)
{
    fprintf(stderr, "bigalloc: %s of %zu bytes failed\n", what, n);
    exit(3);
}

/* One write per page: what makes the kernel back the block, as real use would. */
static uint64_t touch_pages(unsigned char *p, size_t n, size_t from)
{
    uint64_t sum = 0;

    for (size_t i = from; i < n; i += PAGE) {
        p[i] = (unsigned char)(i >> 12);
        sum += p[i];
    }
    p[n - 1] = 1;
    return sum + p[0];
}

/* A buffer grown by realloc, doubling from 4 KiB up to a target of 256 KiB..4 MiB. */
static NOINLINE void *grow_buffer(uint64_t r, uint64_t *sum)
{
    size_t target = (size_t)256 << 10 << (r % 5), cap = 4096, used = 0;
    unsigned char *buf = malloc(cap), *nb;

    if (!buf)
        out_of_memory("malloc", cap);
    while (cap < target) {
        *sum += touch_pages(buf, cap, used);
        used = cap;
        cap *= 2;
        nb = realloc(buf, cap);
        if (!nb)
            out_of_memory("realloc", cap);
        buf = nb;
    }
    *sum += touch_pages(buf, cap, used);
    return buf;
}

/* A zeroed table from calloc: 16 KiB..1 MiB in elements of 8..64 bytes. */
static NOINLINE void *zeroed_table(uint64_t r, uint64_t *sum)
{
    size_t elem = (size_t)8 << (r % 4), count = ((size_t)2048 << ((r >> 8) % 7)) / elem * 8;
    unsigned char *t = calloc(count, elem);

    if (!t)
        out_of_memory("calloc", count * elem);
    *sum += touch_pages(t, count * elem, 0);
    return t;
}

/* An aligned block, by each of the three aligned entry points in turn. */
static NOINLINE void *aligned_block(uint64_t r, uint64_t *sum)
{
    size_t align = (r & 1) ? PAGE : 64, n = (size_t)PAGE << ((r >> 8) % 7);
    void *p = NULL;

    switch ((r >> 16) % 3) {
    case 0:
        if (posix_memalign(&p, align, n) != 0)
            p = NULL;
        break;
    case 1:
        p = aligned_alloc(align, n);
        break;
    default:
        p = memalign(align, n);
        break;
    }
    if (!p || ((uintptr_t)p & (align - 1)))
        out_of_memory("aligned allocation", n);
    *sum += touch_pages(p, n, 0);
    return p;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint64_t sum = 0;

    for (unsigned long i = 0; i < w->ops; i++) {
        uint64_t r = rng_next(&w->rng);
        size_t slot = i % RING;

        free(w->ring[slot]);
        switch (r >> 61) {
        case 0: /* 1 in 8: the realloc growth, the most expensive kind */
            w->ring[slot] = grow_buffer(r, &sum);
            break;
        case 1:
        case 2:
        case 3:
            w->ring[slot] = zeroed_table(r, &sum);
            break;
        default:
            w->ring[slot] = aligned_block(r, &sum);
            break;
        }
    }
    for (size_t i = 0; i < RING; i++)
        free(w->ring[i]);
    w->checksum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long threads = DEFAULT_THREADS, ops = DEFAULT_OPS;
    struct worker *workers;
    uint64_t checksum = 0;
    double start, wall;

    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [THREADS [OPS_PER_THREAD]]  (defaults %lu, %lu)\n", argv[0],
                DEFAULT_THREADS, DEFAULT_OPS);
        return 1;
    }
    if ((argc > 1 && bench_parse_count("bigalloc", argv[1], "THREADS", &threads) < 0) ||
        (argc > 2 && bench_parse_count("bigalloc", argv[2], "OPS_PER_THREAD", &ops) < 0))
        return 1;
    if (threads > 64) {
        fprintf(stderr, "bigalloc: at most 64 threads\n");
        return 1;
    }
    workers = calloc(threads, sizeof(*workers));
    if (!workers)
        out_of_memory("calloc", threads * sizeof(*workers));
    start = bench_now_seconds();
    for (unsigned long t = 0; t < threads; t++) {
        workers[t].rng = 0xb16a110cULL + t;
        workers[t].ops = ops;
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
            fprintf(stderr, "bigalloc: pthread_create failed\n");
            return 1;
        }
    }
    for (unsigned long t = 0; t < threads; t++) {
        pthread_join(workers[t].thread, NULL);
        checksum += workers[t].checksum;
    }
    wall = bench_now_seconds() - start;
    printf("bigalloc: %lu threads x %lu ops, ring %d, checksum %" PRIu64 "\n", threads, ops, RING,
           checksum);
    printf("wall: %.3f s\n", wall);
    printf("ops/s: %.0f\n", wall > 0 ? (double)(threads * ops) / wall : 0.0);
    free(workers);
    return 0;
}
