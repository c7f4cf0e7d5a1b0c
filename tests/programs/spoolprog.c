/*
 * spoolprog: a program that keeps its own record of what it holds, for the spool tests
 * (tests/integration/spool_kill.sh), which kill it with SIGKILL at random moments.
 *
 *   spoolprog run RECORD THREADS MILLIS   allocate and free at random from spool_site (and
 *                                         realloc from spool_grow) in THREADS threads, for
 *                                         MILLIS ms (0: until killed), keeping RECORD
 *   spoolprog hog RECORD                  allocate from spool_site and never free, each
 *                                         block touched, until the memory limit kills it
 *   spoolprog check RECORD BYTES OBJECTS  exit 0 if a recovered profile's BYTES and OBJECTS
 *                                         of the two sites fit the record, else 1
 *
 * RECORD is a shared file mapping, so it survives SIGKILL like the spool does: per thread
 * the bytes and objects it holds (done), and the operation under way with the changes
 * the profiler may or may not have seen when the process died (a malloc: none or +size;
 * a free: none or -size; a realloc: none, -old, or -old+new, its block leaving the
 * profiler's tables before the real realloc and coming back after). Every store is
 * sequentially consistent, so the order in the file is the program's order.
 */
#define _GNU_SOURCE
#include "site.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAXT 64
#define SLOTS 512

typedef struct {
    int64_t done[2][2]; /* (bytes, objects) held, two copies: done[cur] is the current one */
    int64_t cur;
    int64_t nalt;      /* 0: nothing under way */
    int64_t alt[3][2]; /* the possible (bytes, objects) changes of the one under way */
    int64_t pad[2];
} rec_t;

static rec_t *rec;
static long millis;

static void set(int64_t *p, int64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Adds (b, o) to what the thread holds: written into the other copy, then made current
 * with one store, so a kill never finds one of the two counted and not the other. */
static void add(rec_t *r, int64_t b, int64_t o)
{
    int64_t k = !r->cur;
    set(&r->done[k][0], r->done[r->cur][0] + b);
    set(&r->done[k][1], r->done[r->cur][1] + o);
    set(&r->cur, k);
}

SITE void *spool_site(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 1, n < 64 ? n : 64);
    return p;
}

SITE void *spool_grow(void *p, size_t n)
{
    return realloc(p, n);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Grows the heap in blocks of up to 64 KiB, every page written, until killed. */
SITE static void hog(rec_t *r, uint64_t *seed)
{
    for (;;) {
        size_t n = 1 + rnd(seed) % 65536;
        set(&r->alt[0][0], (int64_t)n);
        set(&r->alt[0][1], 1);
        set(&r->nalt, 1);
        char *p = spool_site(n);
        if (!p)
            abort();
        memset(p, 2, n);
        add(r, (int64_t)n, 1);
        set(&r->nalt, 0);
    }
}

/* One operation on slot k of the thread's blocks. */
SITE static void step(rec_t *r, void **blk, size_t *sz, uint64_t *seed)
{
    int k = (int)(rnd(seed) % SLOTS);
    size_t n = 1 + rnd(seed) % 3000;
    if (!blk[k]) {
        set(&r->alt[0][0], (int64_t)n);
        set(&r->alt[0][1], 1);
        set(&r->nalt, 1);
        blk[k] = spool_site(n);
        sz[k] = n;
        add(r, (int64_t)n, 1);
    } else if (rnd(seed) % 4 == 0) {
        set(&r->alt[0][0], -(int64_t)sz[k]);
        set(&r->alt[0][1], -1);
        set(&r->alt[1][0], (int64_t)n - (int64_t)sz[k]);
        set(&r->alt[1][1], 0);
        set(&r->nalt, 2);
        void *q = spool_grow(blk[k], n);
        if (!q)
            abort();
        add(r, (int64_t)n - (int64_t)sz[k], 0);
        blk[k] = q;
        sz[k] = n;
    } else {
        set(&r->alt[0][0], -(int64_t)sz[k]);
        set(&r->alt[0][1], -1);
        set(&r->nalt, 1);
        free(blk[k]);
        blk[k] = NULL;
        add(r, -(int64_t)sz[k], -1);
    }
    set(&r->nalt, 0);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
    rec_t *r = arg;
    static __thread void *blk[SLOTS];
    static __thread size_t sz[SLOTS];
    uint64_t seed = (uint64_t)(uintptr_t)arg * 2654435761u ^ (uint64_t)now_ms();
    double end = now_ms() + (double)millis;
    seed |= 1;
    for (long i = 0; millis == 0 || (i & 255) || now_ms() < end; i++)
        step(r, blk, sz, &seed);
    return NULL;
}

static int run(const char *path, int threads, bool grow)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(rec_t) * MAXT) != 0)
        return perror(tmp), 2;
    rec = mmap(NULL, sizeof(rec_t) * MAXT, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rec == MAP_FAILED)
        return perror("mmap"), 2;
    close(fd);
    if (rename(tmp, path) != 0) /* the test's sign that the program runs */
        return perror(path), 2;
    if (grow) {
        uint64_t seed = 88172645463325252ull;
        hog(&rec[0], &seed);
    }
    pthread_t t[MAXT];
    for (int i = 1; i < threads; i++)
        pthread_create(&t[i], NULL, worker, &rec[i]);
    worker(&rec[0]);
    for (int i = 1; i < threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}

/* Whether a choice of one alternative (or none) per thread brings done to (b, o). */
static int fits(const rec_t *r, int n, int64_t b, int64_t o)
{
    if (n == 0)
        return b == 0 && o == 0;
    if (fits(r + 1, n - 1, b, o))
        return 1;
    for (int k = 0; k < r->nalt && k < 3; k++)
        if (fits(r + 1, n - 1, b - r->alt[k][0], o - r->alt[k][1]))
            return 1;
    return 0;
}

static int check(const char *path, int64_t b, int64_t o)
{
    rec_t r[MAXT];
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r))
        return perror(path), 2;
    close(fd);
    int64_t db = 0, dob = 0, busy = 0;
    for (int i = 0; i < MAXT; i++) {
        db += r[i].done[r[i].cur & 1][0];
        dob += r[i].done[r[i].cur & 1][1];
        busy += r[i].nalt != 0;
    }
    int ok = fits(r, MAXT, b - db, o - dob);
    printf("record: %lld bytes in %lld objects, %lld operations under way; recovered %lld "
           "bytes in %lld objects: %s\n",
           (long long)db, (long long)dob, (long long)busy, (long long)b, (long long)o,
           ok ? "fits" : "DOES NOT FIT");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "run") == 0) {
        int n = atoi(argv[3]);
        millis = atol(argv[4]);
        return run(argv[2], n < 1 ? 1 : n > MAXT ? MAXT : n, false);
    }
    if (argc == 3 && strcmp(argv[1], "hog") == 0)
        return run(argv[2], 1, true);
    if (argc == 5 && strcmp(argv[1], "check") == 0)
        return check(argv[2], atoll(argv[3]), atoll(argv[4]));
    fprintf(stderr, "usage: spoolprog run RECORD THREADS MILLIS | check RECORD BYTES OBJECTS\n");
    return 1;
}
