/*
 * tracked_lru: a cache that knows its own size from the heap profiler. The seed story is
 * TiDB's plan cache: its entries are too costly to measure one by one, so TiDB summed the
 * inuse_space of SimpleLRUCache.Put out of a heap profile taken now and then. Here the
 * cache registers a heapsift tracker on its insertion function, lru_put, and reads
 * heapsift_tracker_bytes() after every insertion, an O(1) read of the live bytes
 * allocated under lru_put (entries, key copies, values), and evicts the least recently
 * used entries while that figure is above its quota. It also counts the bytes it really
 * holds, and prints both as it runs, with the estimate's 95% sampling interval.
 *
 * Each query looks a statement id up (a skewed, deterministic stream); a miss builds a
 * value of 64 B to 8 KiB in a scratch buffer (make_value: not under lru_put, so not
 * counted) and inserts a copy. Built with HEAPSIFT_WEAK: without the library (or with
 * profiling off) the tracker is unavailable and it evicts on the true byte count.
 *
 * Usage: tracked_lru [QUERIES [QUOTA_BYTES]]   (defaults 200000, 8388608)
 * Run:   heapsift run --rate 65536 -- build/tracked_lru
 *        LD_PRELOAD=build/libheapsift.so HEAPSIFT_RATE=4096 build/tracked_lru
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define STATEMENTS 100000
#define REPORTS 20 /* progress lines over the run */

struct entry {
    struct entry *prev, *next; /* LRU list; the sentinel's next is the newest */
    struct entry *hnext;       /* hash chain */
    uint32_t id;
    char *key;
    unsigned char *value;
    size_t value_len;
    size_t bytes; /* requested for this entry: the struct, the key, the value */
};

struct cache {
    struct entry **buckets;
    size_t mask;
    struct entry lru;
    size_t len;
    size_t bytes; /* the truth: requested bytes of the entries held */
    uint64_t hits, misses, evictions;
    long long quota;
    int tracker; /* heapsift handle, or < 0: evict on the truth */
};

static uint64_t rng = 0x5eed;

static uint64_t next_rand(void)
{
    rng += 0x9e3779b97f4a7c15ull;
    uint64_t x = rng;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "tracked_lru: out of memory\n");
        exit(3);
    }
    return p;
}

/* A skewed stream: a few hot statements, a long tail. */
static uint32_t draw_statement(void)
{
    double u = (double)(next_rand() >> 11) * 0x1.0p-53;
    return (uint32_t)(STATEMENTS * u * u * u);
}

static size_t value_size(uint32_t id)
{
    return 64 + (size_t)((id * 2654435761u) % 8129);
}

/* The "plan" of a statement, built in a scratch buffer the caller frees. */
static NOINLINE unsigned char *make_value(uint32_t id, size_t *len)
{
    *len = value_size(id);
    unsigned char *v = xmalloc(*len);
    for (size_t i = 0; i < *len; i++)
        v[i] = (unsigned char)(id + i);
    return v;
}

static size_t bucket_of(const struct cache *c, uint32_t id)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & c->mask;
}

static void lru_unlink(struct entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
}

static void lru_push_front(struct cache *c, struct entry *e)
{
    e->prev = &c->lru;
    e->next = c->lru.next;
    c->lru.next->prev = e;
    c->lru.next = e;
}

static struct entry *lru_get(struct cache *c, uint32_t id)
{
    for (struct entry *e = c->buckets[bucket_of(c, id)]; e; e = e->hnext)
        if (e->id == id) {
            lru_unlink(e);
            lru_push_front(c, e);
            c->hits++;
            return e;
        }
    c->misses++;
    return NULL;
}

/* The entry and its copies: everything the tracker on lru_put counts. */
static NOINLINE struct entry *entry_new(uint32_t id, const unsigned char *value, size_t len)
{
    char key[32];
    int klen = snprintf(key, sizeof(key), "stmt-%" PRIu32, id);
    struct entry *e = xmalloc(sizeof(*e));
    e->id = id;
    e->key = xmalloc((size_t)klen + 1);
    memcpy(e->key, key, (size_t)klen + 1);
    e->value = xmalloc(len);
    memcpy(e->value, value, len);
    e->value_len = len;
    e->bytes = sizeof(*e) + (size_t)klen + 1 + len;
    return e;
}

static void entry_free(struct entry *e)
{
    free(e->key);
    free(e->value);
    free(e);
}

static void lru_evict_oldest(struct cache *c)
{
    struct entry *e = c->lru.prev, **pp = &c->buckets[bucket_of(c, e->id)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(e);
    c->len--;
    c->bytes -= e->bytes;
    c->evictions++;
    entry_free(e);
}

/* What the cache believes it holds: the tracker's estimate, or the truth without one. */
static long long cache_size(const struct cache *c)
{
    return c->tracker >= 0 ? heapsift_tracker_bytes(c->tracker) : (long long)c->bytes;
}

/* Inserts a copy of the value, then evicts until the cache is within its quota. */
static NOINLINE void lru_put(struct cache *c, uint32_t id, const unsigned char *value, size_t len)
{
    struct entry *e = entry_new(id, value, len);
    size_t b = bucket_of(c, id);
    e->hnext = c->buckets[b];
    c->buckets[b] = e;
    lru_push_front(c, e);
    c->len++;
    c->bytes += e->bytes;
    while (c->len > 1 && cache_size(c) > c->quota)
        lru_evict_oldest(c);
}

static void cache_init(struct cache *c, long long quota)
{
    size_t nb = 1u << 16;
    memset(c, 0, sizeof(*c));
    c->buckets = calloc(nb, sizeof(*c->buckets));
    if (!c->buckets)
        exit(3);
    c->mask = nb - 1;
    c->lru.prev = c->lru.next = &c->lru;
    c->quota = quota;
    c->tracker = heapsift_tracker_new("plan_cache", "lru_put");
}

static void report(const struct cache *c, const char *what, unsigned long step)
{
    struct heapsift_tracker_stats st;
    if (c->tracker < 0 || heapsift_tracker_stats(c->tracker, &st) != 0) {
        printf("%s %lu tracked - true %zu entries %zu\n", what, step, c->bytes, c->len);
        return;
    }
    double err = st.bytes - (double)c->bytes;
    printf("%s %lu tracked %.0f true %zu ci95 %.0f samples %llu entries %zu error %+.2f%%\n", what,
           step, st.bytes, c->bytes, st.bytes_ci95, st.samples, c->len,
           c->bytes ? 100.0 * err / (double)c->bytes : 0.0);
}

int main(int argc, char **argv)
{
    unsigned long queries = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
    long long quota = argc > 2 ? strtoll(argv[2], NULL, 10) : 8ll << 20;
    static struct cache cache;
    if (argc > 3 || queries == 0 || quota <= 0) {
        fprintf(stderr, "usage: %s [QUERIES [QUOTA_BYTES]]\n", argv[0]);
        return 1;
    }
    cache_init(&cache, quota);
    if (cache.tracker >= 0)
        printf("tracker plan_cache on lru_put: handle %d, quota %lld bytes\n", cache.tracker,
               quota);
    else
        printf("no tracker (%d: heapsift not loaded or profiling off): evicting on the true "
               "size, quota %lld bytes\n",
               cache.tracker, quota);
    for (unsigned long i = 1; i <= queries; i++) {
        uint32_t id = draw_statement();
        if (!lru_get(&cache, id)) {
            size_t len;
            unsigned char *v = make_value(id, &len);
            lru_put(&cache, id, v, len);
            free(v);
        }
        if (i % (queries / REPORTS ? queries / REPORTS : 1) == 0)
            report(&cache, "step", i);
    }
    report(&cache, "final", queries);
    printf("hits %" PRIu64 " misses %" PRIu64 " evictions %" PRIu64 "\n", cache.hits, cache.misses,
           cache.evictions);
    struct heapsift_stats hs;
    if (cache.tracker >= 0 && heapsift_stats(&hs) == 0)
        printf("rate %llu: the estimate's standard deviation is at most sqrt(rate * true) = "
               "%.0f bytes\n",
               hs.rate, sqrt((double)hs.rate * (double)cache.bytes));
    return 0;
}
