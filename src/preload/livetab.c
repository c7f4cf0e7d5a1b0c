/*
 * Live table: the sampled objects not yet freed, address -> (stack id, size, weight), and
 * the counting filter in front of it that lets every free skip the table with one load.
 * The table is split into 64 shards by a hash of the address, each an open-addressing
 * hash (linear probing, backward-shift deletion, so no tombstones) kept at most 70% full,
 * growing by mmap-ing a table twice the size, rehashing and munmap-ing the old one. Each
 * shard has its own mutex (rank 2, after the stack table); the filter (a bit per counter,
 * livetab.h) is updated under its own spin lock, innermost, and read without any. It never calls
 * malloc. Called from the sampled malloc path (insert), the free path once the filter
 * said "maybe" (remove), the dump (aggregate) and the fork handlers (lock_all).
 */
#include "livetab.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define HS_LIVE_SHARD_BITS 6
#define HS_LIVE_SHARDS (1u << HS_LIVE_SHARD_BITS)
#define HS_LIVE_INIT_CAP 64u
#define HS_LIVE_MAX_CAP (1u << 30)

typedef struct {
    pthread_mutex_t lock;
    hs_live_t *slots; /* addr == 0 marks an empty slot */
    uint32_t cap;     /* a power of two, 0 until the first insert */
    uint32_t count;   /* written under the lock, read anywhere with relaxed loads */
} __attribute__((aligned(64))) hs_live_shard_t;

uint32_t hs_live_filter[HS_FILTER_SIZE / 32];
uint8_t hs_live_counts[HS_FILTER_SIZE];

static hs_live_shard_t hs_live_shards[HS_LIVE_SHARDS] = {
    [0 ... HS_LIVE_SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

/* Serialises counter changes with their bits: two addresses sharing a counter, one
 * marked while the other is unmarked, must not leave the bit clear under a counter of 1
 * (a sampled free would be missed). A spin lock, the innermost of all: held for a few
 * instructions, taken only on sampled paths and bootstrap blocks. */
static int hs_filter_lock;

static void filter_lock(void)
{
    while (__atomic_exchange_n(&hs_filter_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&hs_filter_lock, __ATOMIC_RELAXED))
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#else
            ;
#endif
}

static void filter_unlock(void)
{
    __atomic_store_n(&hs_filter_lock, 0, __ATOMIC_RELEASE);
}

/* Cost: the filter lock, a counter and, when it leaves 0, an atomic OR of its bit; a
 * saturated counter is left alone for good. */
void hs_filter_mark(uintptr_t p)
{
    size_t i = hs_filter_index(p);

    filter_lock();
    uint8_t v = hs_live_counts[i];
    if (v == 0)
        __atomic_fetch_or(&hs_live_filter[i / 32], 1u << (i % 32), __ATOMIC_RELAXED);
    if (v != 255)
        hs_live_counts[i] = (uint8_t)(v + 1);
    filter_unlock();
}

void hs_filter_unmark(uintptr_t p)
{
    size_t i = hs_filter_index(p);

    filter_lock();
    uint8_t v = hs_live_counts[i];
    if (v != 0 && v != 255) {
        hs_live_counts[i] = (uint8_t)(v - 1);
        if (v == 1)
            __atomic_fetch_and(&hs_live_filter[i / 32], ~(1u << (i % 32)), __ATOMIC_RELAXED);
    }
    filter_unlock();
}

/* A multiplicative hash independent of the filter's: the top bits pick the shard, and
 * folding them down gives the slot bits, so shard and slot do not correlate. */
static inline uint64_t hs_live_hash(uintptr_t addr)
{
    uint64_t h = (uint64_t)(addr >> 4) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline hs_live_shard_t *hs_live_shard(uint64_t h)
{
    return &hs_live_shards[h >> (64 - HS_LIVE_SHARD_BITS)];
}

/* The slot holding addr, or the empty slot where it would go. Lock held, cap > 0. */
static uint32_t hs_live_probe(const hs_live_shard_t *s, uint64_t h, uintptr_t addr)
{
    uint32_t mask = s->cap - 1;
    uint32_t i = (uint32_t)h & mask;

    while (s->slots[i].addr != 0 && s->slots[i].addr != addr)
        i = (i + 1) & mask;
    return i;
}

static hs_live_t *hs_live_map(uint32_t cap)
{
    void *p = mmap(NULL, (size_t)cap * sizeof(hs_live_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Doubles the shard's table (or creates it). Lock held. Returns 0 or -ENOMEM. */
static __attribute__((noinline, cold)) int hs_live_grow(hs_live_shard_t *s)
{
    uint32_t ncap = s->cap ? s->cap * 2 : HS_LIVE_INIT_CAP;
    hs_live_shard_t n = {.cap = ncap};

    if (ncap > HS_LIVE_MAX_CAP || (n.slots = hs_live_map(ncap)) == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->cap; i++) {
        uintptr_t a = s->slots[i].addr;
        if (a != 0)
            n.slots[hs_live_probe(&n, hs_live_hash(a), a)] = s->slots[i];
    }
    if (s->slots)
        munmap(s->slots, (size_t)s->cap * sizeof(hs_live_t));
    s->slots = n.slots;
    s->cap = ncap;
    return 0;
}

int hs_livetab_init(void)
{
    return 0; /* shards are static and their tables are created on first insert */
}

/* An address already present (a free we never saw) is overwritten, not duplicated. */
int hs_livetab_insert(const hs_live_t *e)
{
    uint64_t h = hs_live_hash(e->addr);
    hs_live_shard_t *s = hs_live_shard(h);
    int rc = 0;

    if (e->addr == 0)
        return -EINVAL;
    pthread_mutex_lock(&s->lock);
    if ((uint64_t)(s->count + 1) * 10 > (uint64_t)s->cap * 7) {
        rc = hs_live_grow(s);
        if (rc != 0 && s->count + 1 < s->cap)
            rc = 0; /* over the load target but not full: keep going */
    }
    if (rc == 0) {
        uint32_t i = hs_live_probe(s, h, e->addr);
        if (s->slots[i].addr == 0) {
            __atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
            hs_filter_mark(e->addr);
        }
        s->slots[i] = *e;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Backward-shift deletion of slot i: later entries of the run move up when their home
 * slot allows, so probes never need tombstones. Lock held. */
static void hs_live_delete(hs_live_shard_t *s, uint32_t i)
{
    uint32_t mask = s->cap - 1;
    uint32_t j = i;

    for (;;) {
        uint32_t k;
        j = (j + 1) & mask;
        if (s->slots[j].addr == 0)
            break;
        k = (uint32_t)hs_live_hash(s->slots[j].addr) & mask;
        /* The entry at j may fill the hole at i unless its home k lies cyclically in
         * (i, j]. */
        if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i].addr = 0;
}

bool hs_livetab_remove(uintptr_t addr, hs_live_t *out)
{
    uint64_t h = hs_live_hash(addr);
    hs_live_shard_t *s = hs_live_shard(h);
    bool found = false;

    if (addr == 0 || !hs_livetab_maybe((const void *)addr))
        return false;
    pthread_mutex_lock(&s->lock);
    if (s->cap != 0) {
        uint32_t i = hs_live_probe(s, h, addr);
        if (s->slots[i].addr == addr) {
            if (out)
                *out = s->slots[i];
            hs_live_delete(s, i);
            __atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
            hs_filter_unmark(addr);
            found = true;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* totals (when given) covers every live entry, whatever its stack id. */
void hs_livetab_aggregate(double *objects, double *bytes, size_t nstacks, hs_live_totals_t *totals)
{
    hs_live_totals_t t = {0, 0, 0};

    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        pthread_mutex_lock(&s->lock);
        for (uint32_t i = 0; i < s->cap; i++) {
            const hs_live_t *e = &s->slots[i];
            if (e->addr == 0)
                continue;
            t.samples++;
            t.objects += e->weight;
            t.bytes += e->weight * (double)e->size;
            if (e->stack_id >= 0 && (size_t)e->stack_id < nstacks) {
                objects[e->stack_id] += e->weight;
                bytes[e->stack_id] += e->weight * (double)e->size;
            }
        }
        pthread_mutex_unlock(&s->lock);
    }
    if (totals)
        *totals = t;
}

void hs_livetab_each(void (*fn)(hs_live_t *e, void *arg), void *arg)
{
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        pthread_mutex_lock(&s->lock);
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->slots[i].addr != 0)
                fn(&s->slots[i], arg);
        pthread_mutex_unlock(&s->lock);
    }
}

bool hs_livetab_update(uintptr_t addr, void (*fn)(hs_live_t *e, void *arg), void *arg)
{
    uint64_t h = hs_live_hash(addr);
    hs_live_shard_t *s = hs_live_shard(h);
    bool found = false;

    pthread_mutex_lock(&s->lock);
    if (s->cap != 0) {
        uint32_t i = hs_live_probe(s, h, addr);
        if ((found = addr != 0 && s->slots[i].addr == addr))
            fn(&s->slots[i], arg);
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

uint64_t hs_livetab_count(void)
{
    uint64_t n = 0;

    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++)
        n += __atomic_load_n(&hs_live_shards[sh].count, __ATOMIC_RELAXED);
    return n;
}

void hs_livetab_lock_all(void)
{
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++)
        pthread_mutex_lock(&hs_live_shards[sh].lock);
    filter_lock(); /* a bootstrap block's mark is the only one outside a shard lock */
}

void hs_livetab_unlock_all(void)
{
    filter_unlock();
    for (uint32_t sh = HS_LIVE_SHARDS; sh-- > 0;)
        pthread_mutex_unlock(&hs_live_shards[sh].lock);
}
