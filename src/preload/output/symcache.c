/*
 * Symbol cache (symcache.h): return address - 1 -> the frames hs_symbolize gave it, for
 * the addresses of the live mappings, across dumps. A dump that finds every address here
 * never sets up libdwfl nor opens a binary; one that finds most symbolizes the rest.
 *
 * An entry holds while the mapping that holds its address is the same one: a library
 * unloaded and another mapped at its place (or the same path rebuilt) has another key
 * (hs_symcache_map_key), so its addresses are symbolized afresh and the old entries are
 * overwritten. Entries sit in an open-addressing table (at most half full); their frames
 * in one array; their strings interned in chunks that never move, so that a function's
 * names and file are stored once for all its addresses. All of it comes from malloc (the
 * dump holds the guard) and counts in the profiler's heap. At HS_SYMCACHE_MAX_BYTES it
 * keeps what it has and takes no more, unless most of its frames are replaced entries'
 * (libraries unloaded and others mapped in their place, again and again): then it starts
 * over.
 *
 * Called by dump.c, under the dump lock; hs_symcache_mem also by the accounting anywhere,
 * and the lock functions by the fork handlers. It never logs: an address it could not
 * keep only costs each later dump its symbolization, as without the cache.
 */
#include "runtime/debugcheck.h"
#include "symcache.h"
#include "base/hash.h"
#include "record/fork.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SC_CHUNK (64u << 10)
#define SC_MIN_CAP 256u

typedef struct {
    uint64_t addr; /* 0: empty (address 0 is never cached) */
    uint64_t map;
    uint32_t first, n; /* frames[first .. first + n) */
} sc_entry_t;

typedef struct sc_chunk {
    struct sc_chunk *next;
    size_t used, size;
    char data[];
} sc_chunk_t;

static struct {
    sc_entry_t *tab;
    size_t cap, count;
    hs_symbol_t *frames;
    size_t nframes, frames_cap;
    size_t garbage;    /* frames of replaced entries, no longer referenced */
    const char **strs; /* interned strings, open addressing, at most half full */
    size_t strs_cap, nstrs;
    sc_chunk_t *chunks;
} sc;

/* Held while the cache changes (HS_RANK_SYMCACHE in core.h: a leaf, malloc only under it), and by
 * the fork handlers, so that a child never inherits it half changed. */
static pthread_mutex_t sc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bytes held: written under the dump lock, read by heapsift_stats and the HTTP /stats
 * without it (hs_symcache_mem), hence atomic. */
static size_t sc_bytes;

static void sc_bytes_add(size_t add, size_t sub)
{
    __atomic_store_n(&sc_bytes, sc_bytes + add - sub, __ATOMIC_RELAXED);
}

static inline uint64_t sc_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

uint64_t hs_symcache_map_key(const hs_map_t *m)
{
    uint64_t h = sc_mix(m->start);
    h = sc_mix(h ^ m->limit);
    h = sc_mix(h ^ m->offset);
    h = sc_mix(h ^ (uint64_t)m->dev);
    h = sc_mix(h ^ m->inode);
    for (const char *p = m->build_id; *p; p++)
        h = sc_mix(h ^ (unsigned char)*p);
    return h | 1;
}

static void sc_clear(void)
{
    for (sc_chunk_t *c = sc.chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(sc.tab);
    free(sc.frames);
    free(sc.strs);
    memset(&sc, 0, sizeof(sc));
    __atomic_store_n(&sc_bytes, 0, __ATOMIC_RELAXED);
}

size_t hs_symcache_mem(void)
{
    return __atomic_load_n(&sc_bytes, __ATOMIC_RELAXED);
}

/* The slot of addr: its entry, or the empty slot where it would go. cap > 0. */
static size_t sc_slot(uint64_t addr)
{
    size_t mask = sc.cap - 1, i = (size_t)sc_mix(addr) & mask;
    while (sc.tab[i].addr && sc.tab[i].addr != addr)
        i = (i + 1) & mask;
    return i;
}

bool hs_symcache_get(uint64_t addr, uint64_t map_key, const hs_symbol_t **frames, size_t *n)
{
    if (!sc.cap || !addr)
        return false;
    const sc_entry_t *e = &sc.tab[sc_slot(addr)];
    if (e->addr != addr || e->map != map_key)
        return false;
    *frames = sc.frames + e->first;
    *n = e->n;
    return true;
}

/* Whether `more` further bytes fit under the limit (counted once allocated). */
static bool sc_fits(size_t more)
{
    return sc_bytes + more <= HS_SYMCACHE_MAX_BYTES;
}

/* Doubles the entry table (or makes it). false: no memory, or over the limit. */
static bool sc_grow_tab(void)
{
    size_t cap = sc.cap ? sc.cap * 2 : SC_MIN_CAP;
    sc_entry_t *old = sc.tab, *tab = sc_fits(cap * sizeof(*tab)) ? calloc(cap, sizeof(*tab)) : NULL;
    if (!tab)
        return false;
    sc_bytes_add(cap * sizeof(*tab), 0);
    size_t old_cap = sc.cap;
    sc.tab = tab;
    sc.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].addr)
            sc.tab[sc_slot(old[i].addr)] = old[i];
    free(old);
    sc_bytes_add(0, old_cap * sizeof(sc_entry_t));
    return true;
}

/* Room for n more frames. */
static bool sc_reserve_frames(size_t n)
{
    if (sc.nframes + n <= sc.frames_cap)
        return true;
    size_t cap = sc.frames_cap ? sc.frames_cap : 256;
    while (cap < sc.nframes + n)
        cap *= 2;
    size_t more = (cap - sc.frames_cap) * sizeof(hs_symbol_t);
    hs_symbol_t *f = sc_fits(more) ? realloc(sc.frames, cap * sizeof(*f)) : NULL;
    if (!f)
        return false;
    sc_bytes_add(more, 0);
    sc.frames = f;
    sc.frames_cap = cap;
    return true;
}

static uint64_t sc_str_hash(const char *s)
{
    return hs_hash_bytes(s, strlen(s));
}

/* The slot of s in the string set: its copy, or the empty slot where it would go. */
static size_t sc_str_slot(const char *s, uint64_t h)
{
    size_t mask = sc.strs_cap - 1, i = (size_t)h & mask;
    while (sc.strs[i] && strcmp(sc.strs[i], s) != 0)
        i = (i + 1) & mask;
    return i;
}

static bool sc_grow_strs(void)
{
    size_t cap = sc.strs_cap ? sc.strs_cap * 2 : SC_MIN_CAP;
    const char **old = sc.strs,
               **strs = sc_fits(cap * sizeof(char *)) ? calloc(cap, sizeof(char *)) : NULL;
    if (!strs)
        return false;
    sc_bytes_add(cap * sizeof(char *), 0);
    size_t old_cap = sc.strs_cap;
    sc.strs = strs;
    sc.strs_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            sc.strs[sc_str_slot(old[i], sc_str_hash(old[i]))] = old[i];
    free(old);
    sc_bytes_add(0, old_cap * sizeof(char *));
    return true;
}

/* A copy of len + 1 bytes of s in the chunks. */
static char *sc_copy(const char *s, size_t len)
{
    sc_chunk_t *c = sc.chunks;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > SC_CHUNK ? len + 1 : SC_CHUNK;
        if (!sc_fits(sizeof(*c) + size) || !(c = malloc(sizeof(*c) + size)))
            return NULL;
        sc_bytes_add(sizeof(*c) + size, 0);
        c->next = sc.chunks;
        c->used = 0;
        c->size = size;
        sc.chunks = c;
    }
    char *d = memcpy(c->data + c->used, s, len + 1);
    c->used += len + 1;
    return d;
}

/* The interned copy of s (NULL stays NULL); *ok = false when out of room. */
static const char *sc_intern(const char *s, bool *ok)
{
    if (!s || !*ok)
        return NULL;
    if ((sc.nstrs + 1) * 2 > sc.strs_cap && !sc_grow_strs()) {
        *ok = false;
        return NULL;
    }
    uint64_t h = sc_str_hash(s);
    size_t i = sc_str_slot(s, h);
    if (!sc.strs[i]) {
        char *d = sc_copy(s, strlen(s));
        if (!d) {
            *ok = false;
            return NULL;
        }
        sc.strs[i] = d;
        sc.nstrs++;
    }
    return sc.strs[i];
}

/* Stores the entry; false when out of room or memory (sc_put decides what then). */
static bool sc_store(uint64_t addr, uint64_t map_key, const hs_symbol_t *frames, size_t n)
{
    bool ok = true;
    if ((sc.count + 1) * 2 > sc.cap && !sc_grow_tab())
        return false;
    if (!sc_reserve_frames(n))
        return false;
    for (size_t k = 0; k < n && ok; k++) {
        hs_symbol_t *f = &sc.frames[sc.nframes + k];
        *f = frames[k];
        f->name = sc_intern(frames[k].name, &ok);
        f->system_name = sc_intern(frames[k].system_name, &ok);
        f->file = sc_intern(frames[k].file, &ok);
    }
    if (!ok)
        return false;
    sc_entry_t *e = &sc.tab[sc_slot(addr)];
    if (!e->addr)
        sc.count++;
    else
        sc.garbage += e->n; /* a re-mapped address: its old frames stay behind, counted */
    *e =
        (sc_entry_t){.addr = addr, .map = map_key, .first = (uint32_t)sc.nframes, .n = (uint32_t)n};
    sc.nframes += n;
    return true;
}

static void sc_put(uint64_t addr, uint64_t map_key, const hs_symbol_t *frames, size_t n)
{
    if (!addr || n > UINT32_MAX || sc.nframes + n > UINT32_MAX)
        return;
    if (sc_store(addr, map_key, frames, n) || sc.garbage * 2 < sc.nframes)
        return; /* stored, or full of live entries: they stay, new ones are not kept */
    /* Full of frames of libraries gone or replaced: start over, with this entry first. */
    sc_clear();
    if (!sc_store(addr, map_key, frames, n))
        sc_clear();
}

void hs_symcache_put(uint64_t addr, uint64_t map_key, const hs_symbol_t *frames, size_t n)
{
    hs_lock(&sc_lock, HS_RANK_SYMCACHE);
    sc_put(addr, map_key, frames, n);
    hs_unlock(&sc_lock, HS_RANK_SYMCACHE);
}

void hs_symcache_lock(void)
{
    hs_lock(&sc_lock, HS_RANK_SYMCACHE);
}

void hs_symcache_unlock(void)
{
    hs_unlock(&sc_lock, HS_RANK_SYMCACHE);
}

/* Fork: its lock ranks after the recorder's tables', so it is taken after them and
 * released first (record/fork.c). */
HS_CTOR(HS_CTOR_OUTPUT) static void symcache_ctor(void)
{
    hs_fork_register(HS_FORK_INNER, hs_symcache_lock, hs_symcache_unlock, hs_symcache_unlock);
}
