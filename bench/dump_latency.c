/*
 * dump_latency: how long heapsift_dump takes on a large profile, and how long it holds up
 * the threads that keep allocating meanwhile. Meant to run with HEAPSIFT_RATE=1 (every
 * allocation sampled), so the state is exact: it first allocates LIVE objects (100,000 by
 * default) from STACKS distinct call stacks (10,000), the stack of object i being the
 * binary expansion of i % STACKS as a path through two mutually recursive functions (bit
 * 0: path_zero, bit 1: path_one, one frame per bit), and keeps them all live. Then
 * ALLOCATORS threads (1 by default) malloc and free in a loop, timing each malloc+free pair
 * with clock_gettime, while the main thread calls heapsift_dump DUMPS times (5), 100 ms
 * apart. It prints each dump's duration, then the allocating threads' pair latencies in
 * nanoseconds, split into pairs that overlapped a dump and pairs that did not: count, p50,
 * p99, p99.9 and the worst, and the worst pair during a dump that slept (a voluntary
 * context switch: blocked on a lock) apart from the worst that was preempted (the machine
 * was busy; see classify_slow). heapsift_dump is a weak reference, so the program runs (and
 * says "no heapsift") without the library.
 *
 * Usage: dump_latency OUT_DIR [LIVE [STACKS [ALLOCATORS [DUMPS]]]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "bitpaths.h" /* path_zero: one frame per bit of id, a stack per id */

extern int heapsift_dump(const char *path) __attribute__((weak));

#define NOINLINE __attribute__((noinline))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")
#define PATH_BITS 20           /* up to 2^20 distinct stacks */
#define MAX_SAMPLES (1u << 24) /* latencies kept per allocating thread */
#define SLOW_NS 20000          /* a pair this slow is classified: slept or preempted */

struct allocator {
    pthread_t thread;
    uint32_t *in_dump, *outside; /* latencies in ns */
    size_t n_in, n_out;
    uint32_t max_slept_in, max_preempted_in; /* worst slow pairs during dumps, by cause */
};

static atomic_int dumping; /* 1 while heapsift_dump runs */
static atomic_int stop;
static atomic_ulong dump_epoch; /* bumped at each dump's start and end */
static unsigned path_bits;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A slow pair either slept (a voluntary context switch: waiting for a lock, for instance)
 * or was preempted (an involuntary one: another process took the CPU; on a busy machine
 * that alone can cost milliseconds). getrusage is called only after a slow pair, so the
 * switches it counts happened since the previous slow pair: mostly in this one.
 */
static void classify_slow(struct allocator *a, uint32_t v, long *nv, long *niv)
{
    struct rusage ru;

    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return;
    if (ru.ru_nvcsw != *nv && v > a->max_slept_in)
        a->max_slept_in = v;
    else if (ru.ru_nvcsw == *nv && ru.ru_nivcsw != *niv && v > a->max_preempted_in)
        a->max_preempted_in = v;
    *nv = ru.ru_nvcsw;
    *niv = ru.ru_nivcsw;
}

static void *allocator_main(void *arg)
{
    struct allocator *a = arg;
    uint64_t i = 0;
    long nv = 0, niv = 0;
    struct rusage ru;

    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        nv = ru.ru_nvcsw;
        niv = ru.ru_nivcsw;
    }
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        unsigned long e0 = atomic_load(&dump_epoch);
        int d0 = atomic_load(&dumping);
        uint64_t t0 = now_ns();
        void *p = malloc(32 + (i++ % 8) * 16);
        *(volatile char *)p = 1;
        free(p);
        uint64_t dt = now_ns() - t0;
        /* Overlapped a dump if one was running at either end or started or ended within. */
        int in = d0 || atomic_load(&dumping) || atomic_load(&dump_epoch) != e0;
        uint32_t v = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
        if (in && v >= SLOW_NS)
            classify_slow(a, v, &nv, &niv);
        else if (v >= SLOW_NS) /* keep the counts current, not attributed */
            classify_slow(&(struct allocator){0}, v, &nv, &niv);
        if (in && a->n_in < MAX_SAMPLES)
            a->in_dump[a->n_in++] = v;
        else if (!in && a->n_out < MAX_SAMPLES)
            a->outside[a->n_out++] = v;
    }
    return NULL;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

    return (a > b) - (a < b);
}

static uint32_t pct(const uint32_t *s, size_t n, double p)
{
    size_t i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);

    return s[i < n ? i : n - 1];
}

static void report(const char *what, uint32_t *v, size_t n)
{
    if (n == 0) {
        printf("%s: count=0\n", what);
        return;
    }
    qsort(v, n, sizeof(*v), cmp_u32);
    printf("%s: count=%zu p50=%u p99=%u p99.9=%u max=%u\n", what, n, pct(v, n, 50), pct(v, n, 99),
           pct(v, n, 99.9), v[n - 1]);
}

static int parse(const char *s, unsigned long *out)
{
    char *end;

    errno = 0;
    *out = strtoul(s, &end, 10);
    return errno || end == s || *end || *out == 0 ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
    unsigned long live = 100000, stacks = 10000, nalloc = 1, dumps = 5;
    struct allocator *al;
    uint32_t *all_in, *all_out;
    size_t tot_in = 0, tot_out = 0;
    uint32_t max_slept = 0, max_preempted = 0;
    void **objs;
    char path[4096];

    if (argc < 2 || argc > 6 || (argc > 2 && parse(argv[2], &live)) ||
        (argc > 3 && parse(argv[3], &stacks)) || (argc > 4 && parse(argv[4], &nalloc)) ||
        (argc > 5 && parse(argv[5], &dumps)) || stacks > (1ul << PATH_BITS) || nalloc > 8) {
        fprintf(stderr, "usage: %s OUT_DIR [LIVE [STACKS [ALLOCATORS [DUMPS]]]]\n", argv[0]);
        return 1;
    }
    if (!heapsift_dump) {
        printf("dump_latency: no heapsift (heapsift_dump not linked or preloaded)\n");
        return 2;
    }
    for (path_bits = 1; (1ul << path_bits) < stacks; path_bits++)
        ;
    objs = calloc(live, sizeof(*objs));
    al = calloc(nalloc, sizeof(*al));
    if (!objs || !al)
        return 3;
    uint64_t t0 = now_ns();
    for (unsigned long i = 0; i < live; i++)
        if (!(objs[i] = path_zero(i % stacks, path_bits, 16 + (i % 64) * 8)))
            return 3;
    printf("state: %lu live objects from %lu stacks (%u frames of path each) in %.3f s\n", live,
           stacks, path_bits, (double)(now_ns() - t0) * 1e-9);

    for (unsigned long t = 0; t < nalloc; t++) {
        al[t].in_dump = malloc(MAX_SAMPLES * sizeof(uint32_t));
        al[t].outside = malloc(MAX_SAMPLES * sizeof(uint32_t));
        if (!al[t].in_dump || !al[t].outside ||
            pthread_create(&al[t].thread, NULL, allocator_main, &al[t]) != 0)
            return 3;
    }
    usleep(100000);
    for (unsigned long d = 0; d < dumps; d++) {
        snprintf(path, sizeof(path), "%s/dump_latency.%lu.pb.gz", argv[1], d);
        atomic_fetch_add(&dump_epoch, 1);
        atomic_store(&dumping, 1);
        uint64_t s = now_ns();
        int rc = heapsift_dump(path);
        uint64_t e = now_ns();
        atomic_store(&dumping, 0);
        atomic_fetch_add(&dump_epoch, 1);
        printf("dump %lu: rc=%d duration_ms=%.3f\n", d, rc, (double)(e - s) * 1e-6);
        usleep(100000);
    }
    atomic_store(&stop, 1);
    for (unsigned long t = 0; t < nalloc; t++) {
        pthread_join(al[t].thread, NULL);
        tot_in += al[t].n_in;
        tot_out += al[t].n_out;
        if (al[t].max_slept_in > max_slept)
            max_slept = al[t].max_slept_in;
        if (al[t].max_preempted_in > max_preempted)
            max_preempted = al[t].max_preempted_in;
    }
    all_in = malloc((tot_in + 1) * sizeof(uint32_t));
    all_out = malloc((tot_out + 1) * sizeof(uint32_t));
    if (!all_in || !all_out)
        return 3;
    tot_in = tot_out = 0;
    for (unsigned long t = 0; t < nalloc; t++) {
        memcpy(all_in + tot_in, al[t].in_dump, al[t].n_in * sizeof(uint32_t));
        memcpy(all_out + tot_out, al[t].outside, al[t].n_out * sizeof(uint32_t));
        tot_in += al[t].n_in;
        tot_out += al[t].n_out;
        free(al[t].in_dump);
        free(al[t].outside);
    }
    report("pair_ns_during_dumps", all_in, tot_in);
    report("pair_ns_outside_dumps", all_out, tot_out);
    printf("slow pairs during dumps (>= %d ns): worst that slept=%u worst preempted=%u\n", SLOW_NS,
           max_slept, max_preempted);
    for (unsigned long i = 0; i < live; i++)
        free(objs[i]);
    free(objs);
    free(al);
    free(all_in);
    free(all_out);
    return 0;
}
