/*
 * Live table: the sampled objects not yet freed, address -> (stack id, size, weight), and
 * the upkeep of the live filter in front of it (livefilter.c) that lets every free skip
 * the table with one load. The table is split into 64 shards by the address's filter
 * hash, each an open-addressing hash (linear probing, backward-shift deletion, so no
 * tombstones) kept at most 70% full, growing by mmap-ing a table twice the size,
 * rehashing and munmap-ing the old one. Each shard has its own mutex (HS_RANK_LIVETAB, after the
 * stack table), under which the shard's part of the filter changes too; frees read it
 * without any. When a shard's part fills up, the filter is replaced by a bigger one with
 * every shard lock held. It never calls malloc. Called from the sampled malloc path
 * (insert), the free path once the filter said "maybe" (remove), the dump (aggregate)
 * and the fork handlers (lock_all).
 */
#include "runtime/debugcheck.h"
#include "livetab.h"
#include "runtime/core.h"
#include "runtime/log.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HS_LIVE_SHARDS (1u << HS_FILTER_SHARD_BITS)
#define HS_LIVE_INIT_CAP 64u
#define HS_LIVE_MAX_CAP (1u << 30)

typedef struct {
    pthread_mutex_t lock;
    hs_live_t *slots; /* addr == 0 marks an empty slot */
    uint32_t cap;     /* a power of two, 0 until the first insert */
    uint32_t count;   /* written under the lock, read anywhere with relaxed loads */
} __attribute__((aligned(64))) hs_live_shard_t;

static hs_live_shard_t hs_live_shards[HS_LIVE_SHARDS] = {
    [0 ... HS_LIVE_SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

static int hs_live_grow_failed, hs_live_pins_full;

/* The addresses marked in the filter but not in the table (bootstrap blocks: a few dozen
 * at most), one entry per mark, so that a bigger filter counts them too. Changed under
 * their shard's lock and this one (taken after it); read by the grower, which holds every
 * shard lock. When full, the filter stops growing: a mark it could not carry over would
 * send a bootstrap block's free to the real allocator. Its lock is HS_RANK_PINS. */
#define HS_LIVE_PINS 1024
static struct {
    pthread_mutex_t lock;
    uint32_t n;
    uintptr_t addr[HS_LIVE_PINS];
} hs_live_pins = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The shard owning address p: the top bits of its filter hash, so that every address
 * sharing a filter counter (and every counter sharing a bit word) is in one shard, at
 * every filter size. Counters and bits change only under their shard's lock, which the
 * sampled path takes anyway: no second lock, and no line that every sample of every
 * thread writes. */
static inline hs_live_shard_t *hs_live_shard_of(uintptr_t p)
{
    return &hs_live_shards[hs_filter_shard(p)];
}

/* For bootstrap blocks, which are not in the table: the same under the shard lock. */
void hs_filter_mark(uintptr_t p)
{
    hs_live_shard_t *s = hs_live_shard_of(p);
    hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    hs_filter_inc(p);
    hs_lock(&hs_live_pins.lock, HS_RANK_PINS);
    if (hs_live_pins.n < HS_LIVE_PINS)
        hs_live_pins.addr[hs_live_pins.n++] = p;
    else {
        __atomic_store_n(&hs_live_grow_failed, 1, __ATOMIC_RELAXED);
        hs_log_once(hs_live_pins_full,
                    "more than %d bootstrap blocks: the live filter stops growing", HS_LIVE_PINS);
    }
    hs_unlock(&hs_live_pins.lock, HS_RANK_PINS);
    hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
}

void hs_filter_unmark(uintptr_t p)
{
    hs_live_shard_t *s = hs_live_shard_of(p);
    hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    hs_filter_dec(p);
    hs_lock(&hs_live_pins.lock, HS_RANK_PINS);
    for (uint32_t i = hs_live_pins.n; i-- > 0;)
        if (hs_live_pins.addr[i] == p) {
            hs_live_pins.addr[i] = hs_live_pins.addr[--hs_live_pins.n];
            break;
        }
    hs_unlock(&hs_live_pins.lock, HS_RANK_PINS);
    hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
}

/* The slot hash, a multiplicative one independent of the filter's (which picks the
 * shard), so shard and slot do not correlate. */
static inline uint64_t hs_live_hash(uintptr_t addr)
{
    uint64_t h = (uint64_t)(addr >> 4) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
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
    hs_assert_held(HS_RANK_LIVETAB);
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
    __atomic_store_n(&s->cap, ncap, __ATOMIC_RELAXED); /* hs_livetab_mem reads it unlocked */
    return 0;
}

/* Marks every address the filter must know: the table's and the pinned ones. Every shard
 * lock held. */
static void hs_live_each_addr(void (*mark)(uintptr_t p))
{
    hs_assert_held(HS_RANK_LIVETAB);
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        const hs_live_shard_t *s = &hs_live_shards[sh];
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->slots[i].addr != 0)
                mark(s->slots[i].addr);
    }
    hs_lock(&hs_live_pins.lock, HS_RANK_PINS);
    for (uint32_t i = 0; i < hs_live_pins.n; i++)
        mark(hs_live_pins.addr[i]);
    hs_unlock(&hs_live_pins.lock, HS_RANK_PINS);
}

/* A shard's share of the filter has filled up: a bigger filter, every lock held while it
 * is filled (one pass over the table, once per doubling of the live set). */
static __attribute__((noinline, cold)) void hs_livetab_grow_filter(void)
{
    uint32_t most = 0;
    uint64_t live = 0;

    if (__atomic_load_n(&hs_live_grow_failed, __ATOMIC_RELAXED))
        return;
    hs_livetab_lock_all();
    if (__atomic_load_n(&hs_live_grow_failed, __ATOMIC_RELAXED))
        return hs_livetab_unlock_all();
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        live += hs_live_shards[sh].count;
        most = hs_live_shards[sh].count > most ? hs_live_shards[sh].count : most;
    }
    if (hs_filter_wants_growth(most) && hs_filter_grow(live, hs_live_each_addr) != 0)
        hs_log_once(hs_live_grow_failed, "no memory for a bigger live filter: frees of "
                                         "unsampled objects will take the locked path more often");
    hs_livetab_unlock_all();
}

/* An address already present (a free we never saw) is overwritten, not duplicated. */
int hs_livetab_insert(const hs_live_t *e)
{
    uint64_t h = hs_live_hash(e->addr);
    hs_live_shard_t *s = hs_live_shard_of(e->addr);
    int rc = 0;

    if (e->addr == 0)
        return -EINVAL;
    hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    if ((uint64_t)(s->count + 1) * 10 > (uint64_t)s->cap * 7) {
        rc = hs_live_grow(s);
        if (rc != 0 && s->count + 1 < s->cap)
            rc = 0; /* over the load target but not full: keep going */
    }
    if (rc == 0) {
        uint32_t i = hs_live_probe(s, h, e->addr);
        if (s->slots[i].addr == 0) {
            __atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
            hs_filter_inc(e->addr);
        }
        s->slots[i] = *e;
    }
    bool grow = hs_filter_wants_growth(s->count);
    hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    if (HS_UNLIKELY(grow))
        hs_livetab_grow_filter();
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
    hs_live_shard_t *s = hs_live_shard_of(addr);
    bool found = false;

    if (addr == 0 || !hs_livetab_maybe((const void *)addr))
        return false;
    hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    if (s->cap != 0) {
        uint32_t i = hs_live_probe(s, h, addr);
        if (s->slots[i].addr == addr) {
            if (out)
                *out = s->slots[i];
            hs_live_delete(s, i);
            __atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
            hs_filter_dec(addr);
            found = true;
        }
    }
    hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    return found;
}

/* totals (when given) covers every live entry, whatever its stack id. */
void hs_livetab_aggregate(double *objects, double *bytes, size_t nstacks, hs_live_totals_t *totals)
{
    hs_live_totals_t t = {0, 0, 0};

    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
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
        hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    }
    if (totals)
        *totals = t;
}

void hs_livetab_each(void (*fn)(hs_live_t *e, void *arg), void *arg)
{
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->slots[i].addr != 0)
                fn(&s->slots[i], arg);
        hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    }
}

bool hs_livetab_update(uintptr_t addr, void (*fn)(hs_live_t *e, void *arg), void *arg)
{
    uint64_t h = hs_live_hash(addr);
    hs_live_shard_t *s = hs_live_shard_of(addr);
    bool found = false;

    hs_lock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    if (s->cap != 0) {
        uint32_t i = hs_live_probe(s, h, addr);
        if ((found = addr != 0 && s->slots[i].addr == addr))
            fn(&s->slots[i], arg);
    }
    hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, (unsigned)(s - hs_live_shards));
    return found;
}

void hs_livetab_tables(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        hs_lock_sub(&s->lock, HS_RANK_LIVETAB, sh);
        if (s->slots)
            fn((uintptr_t)s->slots, (uintptr_t)(s->slots + s->cap), arg);
        hs_unlock_sub(&s->lock, HS_RANK_LIVETAB, sh);
    }
}

void hs_livetab_each_locked(void (*fn)(hs_live_t *e, void *arg),
                            void (*table)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
    hs_assert_held(HS_RANK_LIVETAB);
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        hs_live_shard_t *s = &hs_live_shards[sh];

        for (uint32_t i = 0; i < s->cap; i++)
            if (s->slots[i].addr != 0)
                fn(&s->slots[i], arg);
        if (s->slots)
            table((uintptr_t)s->slots, (uintptr_t)(s->slots + s->cap), arg);
    }
}

uint64_t hs_livetab_count(void)
{
    uint64_t n = 0;

    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++)
        n += __atomic_load_n(&hs_live_shards[sh].count, __ATOMIC_RELAXED);
    return n;
}

size_t hs_livetab_mem(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++) {
        size_t b =
            (size_t)__atomic_load_n(&hs_live_shards[sh].cap, __ATOMIC_RELAXED) * sizeof(hs_live_t);
        n += (b + page - 1) / page * page; /* mmap's whole pages */
    }
    return n;
}

void hs_livetab_lock_all(void)
{
    for (uint32_t sh = 0; sh < HS_LIVE_SHARDS; sh++)
        hs_lock_sub(&hs_live_shards[sh].lock, HS_RANK_LIVETAB, sh);
}

void hs_livetab_unlock_all(void)
{
    for (uint32_t sh = HS_LIVE_SHARDS; sh-- > 0;)
        hs_unlock_sub(&hs_live_shards[sh].lock, HS_RANK_LIVETAB, sh);
}
