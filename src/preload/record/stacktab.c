/*
 * Stack table: interns the call stacks of sampled allocations and keeps each stack's
 * cumulative counts. An open-addressing hash (linear probing, at most half full) maps
 * the hash of a PC array and a label set id to a dense id; entries and PC arrays live in mmap'd
 * memory sized once from HEAPSIFT_MAX_STACKS (the PC arena reserves 32 PCs per stack on average,
 * MAP_NORESERVE, so untouched pages cost nothing). It never allocates with malloc and never grows:
 * a stack that does not fit is counted as dropped.
 *
 * A stack already interned is found without a lock: an entry and its PCs are written
 * before its slot is published (release; readers probe with acquire) and never change,
 * and its counters are added with compare-and-swap. Only interning takes the mutex
 * (HS_RANK_STACKTAB), which re-probes before it adds. A new stack's tracker mask is computed under
 * it too, and tracker registration (trackers.c) sets bits of existing stacks under it, so
 * every stack sees every tracker exactly once (trackers.c: hs_trackers_inserted). Called
 * from the sampled allocation path (record), the dump (count, get), tracker registration
 * and the fork handlers (lock, unlock).
 *
 * A slot repeats what a probe compares (hash, depth, labels, where the PCs are), so a
 * lookup reads the slot and then the PCs and the counters together, never the entry:
 * when the program has filled the caches since the last sample each of those is a cache
 * and a TLB miss, and they were a chain of four. The entry's tracker mask is read only
 * once some stack has one (tracked).
 */
#include "runtime/debugcheck.h"
#include "spool.h"
#include "stacktab.h"
#include "runtime/core.h"
#include "trackers.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define HS_STACKTAB_AVG_DEPTH 32
#define HS_STACKTAB_LIMIT (1u << 27) /* beyond this the reservations get silly */

/* Immutable once published, except trackers (bits only added, under the lock). */
typedef struct {
    uint64_t hash;
    uint64_t off; /* first PC in the arena */
    uint32_t depth;
    uint32_t labels;
    uint32_t trackers; /* written under the lock, read anywhere with relaxed loads */
} hs_stentry_t;

/* A stack's counters, apart from its entry so that adding to them does not take the
 * entry's line away from the threads that are comparing it. Changed with atomics only.
 * There are HS_STACKTAB_STRIPES copies, one array each; a thread adds to the copy of its
 * stripe (threads take stripes in turn), so two threads sampling the same stacks do not
 * pass the counters' line back and forth at every sample; readers sum the copies. */
typedef struct {
    double objects, bytes;
} hs_stcount_t;

#define HS_STACKTAB_STRIPES 4

/* A slot of the open-addressing table: 32 bytes, two to a line. */
typedef struct {
    uint32_t id1; /* id + 1, 0 = empty; stored with release after the rest */
    uint32_t depth;
    uint32_t labels;
    uint32_t pad;
    uint64_t hash;
    uint64_t off; /* the entry's */
} hs_stslot_t;

static struct {
    pthread_mutex_t lock;
    hs_stentry_t *entries; /* [max] */
    hs_stcount_t *counts;  /* [HS_STACKTAB_STRIPES][max] */
    hs_stslot_t *slots;    /* [mask + 1] */
    uintptr_t *arena;      /* [arena_cap] */
    uint64_t arena_cap, arena_used;
    uint32_t max, mask;
    uint32_t count;   /* written under the lock with release, read anywhere with acquire */
    uint32_t tracked; /* 1 once some entry's tracker mask is not 0; never reset */
    uint64_t dropped; /* atomic */
} hs_st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *hs_stacktab_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void hs_stacktab_unmap_all(void)
{
    size_t n = hs_st.max ? hs_st.max : 1;

    if (hs_st.entries)
        munmap(hs_st.entries, n * sizeof(hs_stentry_t));
    if (hs_st.counts)
        munmap(hs_st.counts, HS_STACKTAB_STRIPES * n * sizeof(hs_stcount_t));
    if (hs_st.slots)
        munmap(hs_st.slots, ((size_t)hs_st.mask + 1) * sizeof(hs_stslot_t));
    if (hs_st.arena)
        munmap(hs_st.arena, (size_t)hs_st.arena_cap * sizeof(uintptr_t));
    hs_st.entries = NULL;
    hs_st.counts = NULL;
    hs_st.slots = NULL;
    hs_st.arena = NULL;
}

/*
 * Calling it again discards the previous table (tests do; no other thread may be using
 * the table then). max_stacks == 0 makes every record a drop.
 */
int hs_stacktab_init(uint32_t max_stacks)
{
    size_t nslots = 16;
    size_t nentries = max_stacks ? max_stacks : 1;

    if (max_stacks > HS_STACKTAB_LIMIT)
        return -ENOMEM;
    hs_stacktab_unmap_all();
    while (nslots < 2 * (size_t)max_stacks)
        nslots *= 2;
    hs_st.max = max_stacks;
    hs_st.mask = (uint32_t)(nslots - 1);
    hs_st.arena_cap = (uint64_t)nentries * HS_STACKTAB_AVG_DEPTH;
    hs_st.arena_used = 0;
    __atomic_store_n(&hs_st.count, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hs_st.dropped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&hs_st.tracked, 0, __ATOMIC_RELAXED);
    hs_st.entries = hs_stacktab_map(nentries * sizeof(hs_stentry_t));
    hs_st.counts = hs_stacktab_map(HS_STACKTAB_STRIPES * nentries * sizeof(hs_stcount_t));
    hs_st.slots = hs_stacktab_map(nslots * sizeof(hs_stslot_t));
    hs_st.arena = hs_stacktab_map((size_t)hs_st.arena_cap * sizeof(uintptr_t));
    if (!hs_st.entries || !hs_st.counts || !hs_st.slots || !hs_st.arena) {
        hs_stacktab_unmap_all();
        hs_st.max = 0;
        return -ENOMEM;
    }
    return 0;
}

/* Two independent lanes (even and odd PCs), so that the multiplies of one overlap the
 * other's: the chain of dependent multiplies, not the instruction count, is what a long
 * stack costs here. About 2 cycles per PC. */
static uint64_t hs_stacktab_hash(const uintptr_t *pcs, uint32_t depth)
{
    uint64_t a = 0x9E3779B97F4A7C15ull ^ depth, b = 0xC2B2AE3D27D4EB4Full;
    uint32_t i = 0;

    for (; i + 1 < depth; i += 2) {
        a = (a ^ pcs[i]) * 0xff51afd7ed558ccdull;
        b = (b ^ pcs[i + 1]) * 0xc4ceb9fe1a85ec53ull;
        a ^= a >> 32;
        b ^= b >> 29;
    }
    if (i < depth)
        a = (a ^ pcs[i]) * 0xff51afd7ed558ccdull;
    a ^= (b ^ (b >> 31)) * 0x9E3779B97F4A7C15ull;
    return a ^ (a >> 32);
}

/* The key's hash: the PCs' mixed with the label set's. */
static uint64_t hs_stacktab_key(const uintptr_t *pcs, uint32_t depth, uint32_t labels)
{
    return hs_stacktab_hash(pcs, depth) ^ ((uint64_t)labels * 0xc4ceb9fe1a85ec53ull);
}

/* The calling thread's copy of stack id's counters. */
static hs_stcount_t *hs_stacktab_counts_of(int32_t id)
{
    static __thread uint32_t stripe __attribute__((tls_model("initial-exec")));
    static uint32_t next;

    if (HS_UNLIKELY(stripe == 0))
        stripe = 1 + __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % HS_STACKTAB_STRIPES;
    return &hs_st.counts[(size_t)(stripe - 1) * hs_st.max + (uint32_t)id];
}

/*
 * Probes for the stack without the lock. Returns its id, or -1 with *slot the empty slot
 * that ended the probe (the table is at most half full, so there is one). A slot that
 * matches but for the PCs has its counters requested before they are compared.
 */
static int32_t hs_stacktab_find(uint64_t h, const uintptr_t *pcs, uint32_t depth, uint32_t labels,
                                uint32_t *slot)
{
    uint32_t i = (uint32_t)h & hs_st.mask, v;

    while ((v = __atomic_load_n(&hs_st.slots[i].id1, __ATOMIC_ACQUIRE)) != 0) {
        const hs_stslot_t *e = &hs_st.slots[i];
        if (e->hash == h && e->depth == depth && e->labels == labels) {
            __builtin_prefetch(hs_stacktab_counts_of((int32_t)(v - 1)), 1);
            if (memcmp(hs_st.arena + e->off, pcs, depth * sizeof(*pcs)) == 0)
                return (int32_t)(v - 1);
        }
        i = (i + 1) & hs_st.mask;
    }
    *slot = i;
    return -1;
}

/* Returns the id of the stack, interning it if there is room, or -1. Lock held. */
static int32_t hs_stacktab_find_or_add(uint64_t h, const uintptr_t *pcs, uint32_t depth,
                                       uint32_t labels)
{
    hs_assert_held(HS_RANK_STACKTAB);
    uint32_t i, id = __atomic_load_n(&hs_st.count, __ATOMIC_RELAXED);
    int32_t found = hs_stacktab_find(h, pcs, depth, labels, &i);
    hs_stentry_t *e;

    if (found >= 0)
        return found;
    if (id >= hs_st.max || hs_st.arena_cap - hs_st.arena_used < depth)
        return -1;
    e = &hs_st.entries[id];
    e->hash = h;
    e->off = hs_st.arena_used;
    e->depth = depth;
    e->labels = labels;
    e->trackers = hs_trackers_mask(pcs, depth);
    if (e->trackers != 0)
        __atomic_store_n(&hs_st.tracked, 1, __ATOMIC_SEQ_CST);
    /* Nobody adds to the counters before the slot is published. */
    for (uint32_t k = 0; k < HS_STACKTAB_STRIPES; k++)
        hs_st.counts[(size_t)k * hs_st.max + id] = (hs_stcount_t){0, 0};
    memcpy(hs_st.arena + e->off, pcs, depth * sizeof(*pcs));
    __atomic_store_n(&hs_st.arena_used, hs_st.arena_used + depth, __ATOMIC_RELAXED);
    hs_spool_stack((int32_t)id, pcs, depth); /* before any sample can name it */
    /* Publishes the entry and its PCs: to probes by the slot, to readers by the count. */
    hs_stslot_t *s = &hs_st.slots[i];
    s->depth = depth;
    s->labels = labels;
    s->hash = h;
    s->off = e->off;
    __atomic_store_n(&s->id1, id + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&hs_st.count, id + 1, __ATOMIC_RELEASE);
    return (int32_t)id;
}

/* Stack id's tracker mask, for an id published to the caller (by its slot or the count).
 * tracked is sequentially consistent with its stores: a recorder that reads 0 here after
 * inserting its sample is seen by the registration's walk of the live table (trackers.c),
 * which begins after the store. */
static uint32_t hs_stacktab_mask(int32_t id)
{
    if (!__atomic_load_n(&hs_st.tracked, __ATOMIC_SEQ_CST))
        return 0;
    return __atomic_load_n(&hs_st.entries[id].trackers, __ATOMIC_RELAXED);
}

int32_t hs_stacktab_record_labeled(const uintptr_t *pcs, uint32_t depth, uint32_t labels,
                                   double objects, double bytes, uint32_t *trackers)
{
    uint64_t h = hs_stacktab_key(pcs, depth, labels);
    uint32_t slot;
    int32_t id = -1;

    *trackers = 0;
    if (!hs_st.entries)
        goto drop;
    id = hs_stacktab_find(h, pcs, depth, labels, &slot);
    if (id < 0) {
        hs_lock(&hs_st.lock, HS_RANK_STACKTAB);
        id = hs_stacktab_find_or_add(h, pcs, depth, labels);
        hs_unlock(&hs_st.lock, HS_RANK_STACKTAB);
        if (id < 0)
            goto drop;
    }
    hs_stcount_t *c = hs_stacktab_counts_of(id);
    hs_atomic_add_double(&c->objects, objects);
    hs_atomic_add_double(&c->bytes, bytes);
    *trackers = hs_stacktab_mask(id);
    return id;
drop:
    __atomic_fetch_add(&hs_st.dropped, 1, __ATOMIC_RELAXED);
    return -1;
}

int32_t hs_stacktab_record(const uintptr_t *pcs, uint32_t depth, double objects, double bytes)
{
    uint32_t trackers;
    return hs_stacktab_record_labeled(pcs, depth, 0, objects, bytes, &trackers);
}

uint32_t hs_stacktab_trackers(int32_t id)
{
    if (id < 0 || (uint32_t)id >= hs_stacktab_count())
        return 0;
    return hs_stacktab_mask(id);
}

const uintptr_t *hs_stacktab_pcs(int32_t id, uint32_t *depth)
{
    if (id < 0 || (uint32_t)id >= hs_stacktab_count())
        return NULL;
    *depth = hs_st.entries[id].depth;
    return hs_st.arena + hs_st.entries[id].off;
}

void hs_stacktab_add_trackers_locked(int32_t id, uint32_t bits)
{
    if (id >= 0 && (uint32_t)id < hs_st.count && bits != 0) {
        __atomic_store_n(&hs_st.tracked, 1, __ATOMIC_SEQ_CST);
        __atomic_or_fetch(&hs_st.entries[id].trackers, bits, __ATOMIC_RELAXED);
    }
}

uint32_t hs_stacktab_count(void)
{
    return __atomic_load_n(&hs_st.count, __ATOMIC_ACQUIRE);
}

size_t hs_stacktab_mem(void)
{
    size_t n = hs_stacktab_count();
    size_t per = sizeof(hs_stentry_t) + HS_STACKTAB_STRIPES * sizeof(hs_stcount_t) +
                 2 * sizeof(hs_stslot_t); /* the slots: at most half full */

    return n * per +
           (size_t)__atomic_load_n(&hs_st.arena_used, __ATOMIC_RELAXED) * sizeof(uintptr_t);
}

uint64_t hs_stacktab_dropped(void)
{
    return __atomic_load_n(&hs_st.dropped, __ATOMIC_RELAXED);
}

bool hs_stacktab_get(int32_t id, hs_stack_t *out)
{
    bool ok = false;

    hs_lock(&hs_st.lock, HS_RANK_STACKTAB);
    if (id >= 0 && (uint32_t)id < hs_st.count) {
        const hs_stentry_t *e = &hs_st.entries[id];
        out->pcs = hs_st.arena + e->off;
        out->depth = e->depth;
        out->labels = e->labels;
        out->trackers = e->trackers;
        out->alloc_objects = out->alloc_bytes = 0;
        for (uint32_t k = 0; k < HS_STACKTAB_STRIPES; k++) {
            hs_stcount_t *c = &hs_st.counts[(size_t)k * hs_st.max + (uint32_t)id], v;
            __atomic_load(&c->objects, &v.objects, __ATOMIC_RELAXED);
            __atomic_load(&c->bytes, &v.bytes, __ATOMIC_RELAXED);
            out->alloc_objects += v.objects;
            out->alloc_bytes += v.bytes;
        }
        ok = true;
    }
    hs_unlock(&hs_st.lock, HS_RANK_STACKTAB);
    return ok;
}

void hs_stacktab_clear_counts(void)
{
    hs_lock(&hs_st.lock, HS_RANK_STACKTAB);
    double zero = 0;

    for (uint32_t k = 0; k < HS_STACKTAB_STRIPES; k++)
        for (uint32_t i = 0; i < hs_st.count; i++) {
            hs_stcount_t *c = &hs_st.counts[(size_t)k * hs_st.max + i];
            __atomic_store(&c->objects, &zero, __ATOMIC_RELAXED);
            __atomic_store(&c->bytes, &zero, __ATOMIC_RELAXED);
        }
    hs_unlock(&hs_st.lock, HS_RANK_STACKTAB);
}

void hs_stacktab_lock(void)
{
    hs_lock(&hs_st.lock, HS_RANK_STACKTAB);
}

void hs_stacktab_unlock(void)
{
    hs_unlock(&hs_st.lock, HS_RANK_STACKTAB);
}
