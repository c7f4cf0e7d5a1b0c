/*
 * sample_cost: the latency of one sampled allocation. The thread recurses DEPTH frames
 * through four functions in turn (64 by default, the unwinder's default depth, so a sample
 * unwinds a full 64-frame stack)
 * and, at the bottom, makes N malloc/free pairs of SIZE bytes, timing each malloc and each
 * free on its own with clock_gettime(CLOCK_MONOTONIC). Run with HEAPSIFT_RATE=1 every
 * malloc is sampled (unwind, stack-table lookup, live-table insert) and every free removes
 * a live sample; run with HEAPSIFT_RATE=0 (hooks, no sampling) or without the library it
 * gives the floor: the allocator plus the clock reads. bench/targets.sh takes the
 * difference of the medians as the cost per sample. The first WARMUP pairs are not
 * recorded (the first sample of a stack inserts it into the stack table; later ones find
 * it, which is the common case in a long-running program). It prints, for malloc, free and
 * their sum, the 50th, 90th, 99th and 99.9th percentiles and the maximum in nanoseconds.
 *
 * Usage: sample_cost [N [DEPTH [SIZE]]]   (defaults 200000, 64, 64)
 * Environment: SAMPLE_COST_LABELS=K sets K labels on the thread first, and
 * SAMPLE_COST_TRACKERS=T registers T trackers on measure() (so every sample is counted
 * by T trackers), to time those features (bench/labels_cost.sh); without the library they
 * do nothing (HEAPSIFT_WEAK). SAMPLE_COST_EVICT=BYTES writes one byte per 64-byte line of a
 * BYTES buffer before each timed pair (after the warm-up, outside the timed window), so
 * that each pair starts with the caches full of other data, as a sample in a program
 * whose working set is larger than the caches does (bench/targets.sh: "cold" rows).
 */
#define _GNU_SOURCE
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 1000

#define NOINLINE __attribute__((noinline))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

static unsigned long n_ops = 200000;
static size_t alloc_size = 64;
static uint32_t *lat_malloc, *lat_free, *lat_pair;
static void *volatile sink;
static unsigned char *evict_buf;
static size_t evict_bytes;

static inline uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* SAMPLE_COST_EVICT: one write per line of the buffer, so each line is fetched anew. */
static void evict(void)
{
    for (size_t j = 0; j < evict_bytes; j += 64)
        evict_buf[j]++;
    __asm__ volatile("" ::: "memory");
}

static NOINLINE void measure(void)
{
    for (unsigned long i = 0; i < n_ops + WARMUP; i++) {
        if (evict_buf && i >= WARMUP)
            evict();
        uint64_t t0 = now_ns();
        void *p = malloc(alloc_size);
        uint64_t t1 = now_ns();
        sink = p;
        free(p);
        uint64_t t2 = now_ns();
        if (i >= WARMUP) {
            lat_malloc[i - WARMUP] = clamp32(t1 - t0);
            lat_free[i - WARMUP] = clamp32(t2 - t1);
            lat_pair[i - WARMUP] = clamp32(t2 - t0);
        }
    }
}

/* DEPTH frames above measure(), the stack every sample unwinds, made by four functions in
 * turn: no frame returns to the same address as the one before it, so the unwinder looks
 * every frame's rule up as it would for a stack of distinct functions (it reuses the
 * previous frame's rule when a function calls itself). */
static void recurse_a(int depth);
#define SAMPLE_COST_FRAME(name, next)                                                              \
    static NOINLINE void name(int depth)                                                           \
    {                                                                                              \
        if (depth > 0)                                                                             \
            next(depth - 1);                                                                       \
        else                                                                                       \
            measure();                                                                             \
        KEEP_FRAME();                                                                              \
    }
SAMPLE_COST_FRAME(recurse_d, recurse_a)
SAMPLE_COST_FRAME(recurse_c, recurse_d)
SAMPLE_COST_FRAME(recurse_b, recurse_c)
SAMPLE_COST_FRAME(recurse_a, recurse_b)

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

static uint32_t pct(const uint32_t *sorted, unsigned long n, double p)
{
    unsigned long i = (unsigned long)(p / 100.0 * (double)(n - 1) + 0.5);

    return sorted[i < n ? i : n - 1];
}

static void report(const char *what, uint32_t *lat)
{
    qsort(lat, n_ops, sizeof(*lat), cmp_u32);
    printf("%s_ns: p50=%u p90=%u p99=%u p99.9=%u max=%u\n", what, pct(lat, n_ops, 50),
           pct(lat, n_ops, 90), pct(lat, n_ops, 99), pct(lat, n_ops, 99.9), lat[n_ops - 1]);
}

/* SAMPLE_COST_LABELS and SAMPLE_COST_TRACKERS (see the top). */
static void set_features(void)
{
    const char *l = getenv("SAMPLE_COST_LABELS"), *t = getenv("SAMPLE_COST_TRACKERS");
    char key[16];
    for (int i = 0; l && i < atoi(l); i++) {
        snprintf(key, sizeof(key), "key%d", i);
        if (heapsift_label_set(key, "value") != 0)
            fprintf(stderr, "sample_cost: heapsift_label_set failed\n");
    }
    for (int i = 0; t && i < atoi(t); i++)
        if (heapsift_tracker_new("measure", "measure") < 0)
            fprintf(stderr, "sample_cost: heapsift_tracker_new failed\n");
}

int main(int argc, char **argv)
{
    int depth = 64;

    if (argc > 1)
        n_ops = strtoul(argv[1], NULL, 10);
    if (argc > 2)
        depth = atoi(argv[2]);
    if (argc > 3)
        alloc_size = strtoul(argv[3], NULL, 10);
    if (argc > 4 || n_ops == 0 || depth < 0 || depth > 100000 || alloc_size == 0) {
        fprintf(stderr, "usage: %s [N [DEPTH [SIZE]]]  (defaults 200000, 64, 64)\n", argv[0]);
        return 1;
    }
    lat_malloc = calloc(n_ops, sizeof(uint32_t));
    lat_free = calloc(n_ops, sizeof(uint32_t));
    lat_pair = calloc(n_ops, sizeof(uint32_t));
    if (!lat_malloc || !lat_free || !lat_pair) {
        fprintf(stderr, "sample_cost: out of memory\n");
        return 3;
    }
    const char *ev = getenv("SAMPLE_COST_EVICT");
    if (ev && (evict_bytes = strtoul(ev, NULL, 10)) > 0 && !(evict_buf = calloc(1, evict_bytes))) {
        fprintf(stderr, "sample_cost: out of memory for SAMPLE_COST_EVICT\n");
        return 3;
    }
    set_features();
    recurse_a(depth);
    printf("sample_cost: %lu x malloc(%zu)+free at recursion depth %d, %zu bytes evicted before "
           "each\n",
           n_ops, alloc_size, depth, evict_bytes);
    report("malloc", lat_malloc);
    report("free", lat_free);
    report("pair", lat_pair);
    free(lat_malloc);
    free(lat_free);
    free(lat_pair);
    free(evict_buf);
    return 0;
}
