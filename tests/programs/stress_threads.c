/*
 * stress_threads: worker threads allocate, resize and free blocks of mixed sizes through
 * every C entry point while a dumper thread calls heapsift_dump every 10 ms; the program
 * checks its own data (each block is pattern-filled and verified before it is resized or
 * freed, calloc'd memory must be zero, aligned results aligned).
 *
 * usage: stress_threads DIR SECONDS [THREADS]
 *   runs SECONDS, or longer (at most 30 s) until 3 dumps have completed while the workers ran;
 *   dumps go to DIR/dump.NNNN.pb.gz; when the workers stop, the main thread dumps
 *   DIR/live.pb.gz (all the workers' blocks still live), frees everything and dumps
 *   DIR/freed.pb.gz. Prints "live_bytes=N" (requested bytes live at the live dump, all
 *   allocated in site_* functions), "dumps=N ops=N". Exit 0 ok, 1 data corruption or a
 *   failed dump, 2 heapsift_dump missing (library not loaded), 64 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "site.h"

extern int heapsift_dump(const char *path) __attribute__((weak));

#define MAX_THREADS 64
#define SLOTS 512

typedef struct {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} block_t;

typedef struct {
    int id;
    uint64_t rng;
    unsigned long ops;
    block_t slot[SLOTS];
} worker_t;

static worker_t g_workers[MAX_THREADS];
static void *volatile g_last; /* keeps the sites from tail-calling the allocator */
static volatile int g_stop;
static volatile int g_bad;
static const char *g_dir;

static void corrupt(const char *what, const void *p, size_t n, size_t at)
{
    fprintf(stderr, "stress_threads: %s: block %p size %zu corrupt at offset %zu\n", what, p, n,
            at);
    g_bad = 1;
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Mostly small, some medium, a few above glibc's mmap threshold. */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = next_rand(rng);
    unsigned k = r % 1000;
    if (k < 800)
        return 1 + (r >> 16) % 512;
    if (k < 990)
        return 512 + (r >> 16) % 65536;
    return 200000 + (r >> 16) % 1800000;
}

static void fill(block_t *b, size_t from)
{
    for (size_t i = from; i < b->n; i++)
        b->p[i] = (unsigned char)(b->tag + i * 7);
}

static size_t check(const block_t *b, size_t upto)
{
    for (size_t i = 0; i < upto; i++)
        if (b->p[i] != (unsigned char)(b->tag + i * 7))
            return i;
    return (size_t)-1;
}

SITE void *site_malloc(size_t n)
{
    void *q = malloc(n);
    g_last = q;
    return q;
}

SITE void *site_calloc(size_t n)
{
    void *q = calloc(n / 8 + 1, 8);
    g_last = q;
    return q;
}

SITE void *site_realloc_new(size_t n)
{
    void *q = realloc(NULL, n);
    g_last = q;
    return q;
}

SITE void *site_posix_memalign(size_t n, size_t align)
{
    void *p = NULL;
    int rc = posix_memalign(&p, align, n);
    g_last = p;
    return rc == 0 ? p : NULL;
}

SITE void *site_aligned_alloc(size_t n, size_t align)
{
    void *q = aligned_alloc(align, (n + align - 1) / align * align);
    g_last = q;
    return q;
}

SITE void *site_memalign(size_t n, size_t align)
{
    void *q = memalign(align, n);
    g_last = q;
    return q;
}

SITE void *site_realloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    g_last = q;
    return q;
}

static void new_block(worker_t *w, block_t *b)
{
    size_t n = pick_size(&w->rng);
    size_t align = (size_t)16 << (next_rand(&w->rng) % 9); /* 16 .. 4096 */
    unsigned kind = next_rand(&w->rng) % 6;
    unsigned char *p = NULL;
    switch (kind) {
    case 0:
        p = site_malloc(n);
        break;
    case 1:
        p = site_calloc(n);
        n = (n / 8 + 1) * 8;
        if (p)
            for (size_t i = 0; i < n; i++)
                if (p[i]) {
                    fprintf(stderr, "stress_threads: calloc(%zu) not zero at %zu\n", n, i);
                    g_bad = 1;
                    break;
                }
        break;
    case 2:
        p = site_realloc_new(n);
        break;
    case 3:
        p = site_posix_memalign(n, align);
        break;
    case 4:
        n = (n + align - 1) / align * align;
        p = site_aligned_alloc(n, align);
        break;
    default:
        p = site_memalign(n, align);
        break;
    }
    if (!p) {
        fprintf(stderr, "stress_threads: allocation kind %u of %zu bytes failed\n", kind, n);
        g_bad = 1;
        return;
    }
    if (kind >= 3 && ((uintptr_t)p & (align - 1))) {
        fprintf(stderr, "stress_threads: kind %u align %zu returned %p\n", kind, align, p);
        g_bad = 1;
    }
    if (malloc_usable_size(p) < n) {
        fprintf(stderr, "stress_threads: malloc_usable_size(%p) = %zu < %zu\n", p,
                malloc_usable_size(p), n);
        g_bad = 1;
    }
    b->p = p;
    b->n = n;
    b->tag = (unsigned char)next_rand(&w->rng);
    fill(b, 0);
}

static void resize_block(worker_t *w, block_t *b)
{
    size_t n = pick_size(&w->rng);
    size_t at = check(b, b->n);
    if (at != (size_t)-1)
        corrupt("before realloc", b->p, b->n, at);
    unsigned char *q = site_realloc(b->p, n);
    if (!q) {
        fprintf(stderr, "stress_threads: realloc to %zu failed\n", n);
        g_bad = 1;
        return;
    }
    size_t keep = n < b->n ? n : b->n;
    b->p = q;
    at = check(b, keep);
    if (at != (size_t)-1)
        corrupt("after realloc", q, n, at);
    size_t old = b->n;
    b->n = n;
    fill(b, old < n ? old : n);
}

static void drop_block(block_t *b)
{
    size_t at = check(b, b->n);
    if (at != (size_t)-1)
        corrupt("before free", b->p, b->n, at);
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    while (!g_stop && !g_bad) {
        block_t *b = &w->slot[next_rand(&w->rng) % SLOTS];
        unsigned r = next_rand(&w->rng) % 10;
        if (!b->p)
            new_block(w, b);
        else if (r < 3)
            resize_block(w, b);
        else
            drop_block(b);
        w->ops++;
    }
    return NULL;
}

static int g_dumps, g_dump_fail;
static double g_dump_max, g_dump_sum;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *dumper(void *arg)
{
    (void)arg;
    char path[4096];
    struct timespec ts = {0, 10 * 1000 * 1000};
    while (!g_stop) {
        snprintf(path, sizeof(path), "%s/dump.%04d.pb.gz", g_dir, g_dumps);
        double t0 = now();
        int rc = heapsift_dump(path);
        double dt = now() - t0;
        g_dump_sum += dt;
        if (dt > g_dump_max)
            g_dump_max = dt;
        if (rc != 0) {
            fprintf(stderr, "stress_threads: heapsift_dump(%s) = %d\n", path, rc);
            g_dump_fail = 1;
        }
        g_dumps++;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int final_dump(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    int rc = heapsift_dump(path);
    if (rc != 0)
        fprintf(stderr, "stress_threads: heapsift_dump(%s) = %d\n", path, rc);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: stress_threads DIR SECONDS [THREADS]\n");
        return 64;
    }
    if (!heapsift_dump) {
        fprintf(stderr, "stress_threads: heapsift_dump not found (library not loaded)\n");
        return 2;
    }
    g_dir = argv[1];
    double secs = atof(argv[2]);
    int nthreads = argc > 3 ? atoi(argv[3]) : 16;
    if (nthreads < 1 || nthreads > MAX_THREADS)
        nthreads = 16;
    pthread_t tid[MAX_THREADS], dtid;
    for (int i = 0; i < nthreads; i++) {
        g_workers[i].id = i;
        g_workers[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        if (pthread_create(&tid[i], NULL, worker, &g_workers[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    if (pthread_create(&dtid, NULL, dumper, NULL) != 0) {
        perror("pthread_create");
        return 1;
    }
    /* Run SECONDS, and longer (30 s at most) until 3 dumps have overlapped the workers:
     * a dump's CPU share is 1/(THREADS+1) of the machine, so on a small machine it is slow. */
    double t0 = now();
    struct timespec ts = {0, 50 * 1000 * 1000};
    while ((now() - t0 < secs || __atomic_load_n(&g_dumps, __ATOMIC_RELAXED) < 3) &&
           now() - t0 < 30 && !g_bad)
        nanosleep(&ts, NULL);
    g_stop = 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(tid[i], NULL);
    pthread_join(dtid, NULL);

    unsigned long long live = 0, ops = 0;
    for (int i = 0; i < nthreads; i++) {
        ops += g_workers[i].ops;
        for (int j = 0; j < SLOTS; j++)
            live += g_workers[i].slot[j].n;
    }
    int rc = final_dump("live.pb.gz");
    for (int i = 0; i < nthreads; i++)
        for (int j = 0; j < SLOTS; j++)
            if (g_workers[i].slot[j].p)
                drop_block(&g_workers[i].slot[j]);
    rc |= final_dump("freed.pb.gz");
    printf("live_bytes=%llu\ndumps=%d ops=%llu dump_ms_mean=%.1f dump_ms_max=%.1f\n", live, g_dumps,
           ops, g_dumps ? g_dump_sum * 1e3 / g_dumps : 0.0, g_dump_max * 1e3);
    return g_bad || g_dump_fail || rc ? 1 : 0;
}
