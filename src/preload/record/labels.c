/*
 * Label sets (see labels.h). Two interning tables in mmap'd memory (MAP_NORESERVE: pages
 * never touched cost nothing), created on first use: strings (open addressing over
 * pointers into a string arena) and sets (open addressing over ids into a set array,
 * each set a run of (key, value) pointer pairs sorted by key). Equal strings have equal
 * pointers, so sets compare by pointers. Nothing is ever removed or changed once
 * published (release store of the slot after the contents), so lookups take no lock;
 * inserting takes labels_lock, a leaf (nothing else is locked under it, it never
 * allocates). A thread that sets labels it set before (the common case: a tenant per
 * request) finds its set without the lock: two string probes and one set probe.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "labels.h"
#include "runtime/log.h"
#include "base/hash.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define LABELS_SET_SLOTS (2u * HS_LABELS_MAX_SETS)
#define LABELS_MAX_STRS (2u * HS_LABELS_MAX_SETS)
#define LABELS_STR_SLOTS (2u * LABELS_MAX_STRS)
#define LABELS_ARENA (4u << 20)
#define LABELS_PAIRS ((size_t)HS_LABELS_MAX_SETS * HS_LABELS_MAX_PAIRS)

typedef struct {
    const char *key, *value;
} labels_pair_t;

typedef struct {
    uint64_t hash;
    uint32_t off; /* first pair */
    uint32_t n;   /* pairs */
} labels_set_t;

static struct {
    pthread_mutex_t lock;
    labels_set_t *sets;     /* [HS_LABELS_MAX_SETS] */
    uint32_t *set_slots;    /* [LABELS_SET_SLOTS]: id + 1, 0 = empty */
    labels_pair_t *pairs;   /* [LABELS_PAIRS] */
    const char **str_slots; /* [LABELS_STR_SLOTS]: NULL = empty */
    char *arena;            /* [LABELS_ARENA] */
    size_t arena_used, pairs_used;
    uint32_t nstrs;
    uint32_t nsets;  /* written under the lock with release, read anywhere with acquire */
    int ready;       /* tables mapped and the empty set in place (release/acquire) */
    int failed;      /* mmap failed: every new set is refused */
    int full_logged; /* hs_log_once flag */
} labels = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t labels_hash_set(const labels_pair_t *p, uint32_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ (uintptr_t)p[i].key) * 0xff51afd7ed558ccdull;
        h = (h ^ (uintptr_t)p[i].value) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 32;
    }
    return h;
}

static void *labels_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Maps the tables and interns the empty set as id 0. Lock held. */
static bool labels_setup(void)
{
    if (labels.ready || labels.failed)
        return labels.ready;
    labels.sets = labels_map(HS_LABELS_MAX_SETS * sizeof(labels_set_t));
    labels.set_slots = labels_map(LABELS_SET_SLOTS * sizeof(uint32_t));
    labels.pairs = labels_map(LABELS_PAIRS * sizeof(labels_pair_t));
    labels.str_slots = labels_map(LABELS_STR_SLOTS * sizeof(char *));
    labels.arena = labels_map(LABELS_ARENA);
    if (!labels.sets || !labels.set_slots || !labels.pairs || !labels.str_slots || !labels.arena) {
        labels.failed = 1;
        hs_log("cannot map the label tables: labels are not recorded");
        return false;
    }
    uint64_t h = labels_hash_set(NULL, 0);
    labels.sets[0] = (labels_set_t){.hash = h, .off = 0, .n = 0};
    labels.set_slots[h & (LABELS_SET_SLOTS - 1)] = 1;
    __atomic_store_n(&labels.nsets, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&labels.ready, 1, __ATOMIC_RELEASE);
    return true;
}

/* The interned copy of s[0..len), or NULL; *slot gets the slot where it is or would go.
 * Lock-free. */
static const char *labels_str_find(const char *s, size_t len, uint64_t h, uint32_t *slot)
{
    uint32_t mask = LABELS_STR_SLOTS - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        const char *c = __atomic_load_n(&labels.str_slots[i], __ATOMIC_ACQUIRE);
        if (!c || (strncmp(c, s, len) == 0 && c[len] == '\0')) {
            *slot = i;
            return c;
        }
    }
}

/* Interns s (lock held). NULL when the string table or arena is full. */
static const char *labels_str_intern(const char *s, size_t len)
{
    uint32_t slot;
    uint64_t h = hs_hash_bytes(s, len);
    const char *c = labels_str_find(s, len, h, &slot);
    if (c)
        return c;
    if (labels.nstrs >= LABELS_MAX_STRS || LABELS_ARENA - labels.arena_used < len + 1)
        return NULL;
    char *p = labels.arena + labels.arena_used;
    memcpy(p, s, len);
    p[len] = '\0';
    labels.arena_used += len + 1;
    labels.nstrs++;
    __atomic_store_n(&labels.str_slots[slot], p, __ATOMIC_RELEASE);
    return p;
}

/* The id of the set p[0..n), or -1; *slot as for labels_str_find. Lock-free. */
static int64_t labels_set_find(const labels_pair_t *p, uint32_t n, uint64_t h, uint32_t *slot)
{
    uint32_t mask = LABELS_SET_SLOTS - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        uint32_t v = __atomic_load_n(&labels.set_slots[i], __ATOMIC_ACQUIRE);
        if (v == 0) {
            *slot = i;
            return -1;
        }
        const labels_set_t *s = &labels.sets[v - 1];
        if (s->hash == h && s->n == n &&
            (n == 0 || memcmp(labels.pairs + s->off, p, n * sizeof(*p)) == 0))
            return v - 1;
    }
}

/* Interns the set of n pairs whose strings are not interned yet (lock held). */
static int64_t labels_set_intern(labels_pair_t *p, uint32_t n)
{
    uint32_t slot;
    for (uint32_t i = 0; i < n; i++) {
        p[i].key = labels_str_intern(p[i].key, strlen(p[i].key));
        p[i].value = labels_str_intern(p[i].value, strlen(p[i].value));
        if (!p[i].key || !p[i].value)
            return -ENOSPC;
    }
    uint64_t h = labels_hash_set(p, n);
    int64_t id = labels_set_find(p, n, h, &slot);
    if (id >= 0)
        return id;
    uint32_t k = labels.nsets;
    if (k >= HS_LABELS_MAX_SETS || LABELS_PAIRS - labels.pairs_used < n)
        return -ENOSPC;
    memcpy(labels.pairs + labels.pairs_used, p, n * sizeof(*p));
    labels.sets[k] = (labels_set_t){.hash = h, .off = (uint32_t)labels.pairs_used, .n = n};
    labels.pairs_used += n;
    __atomic_store_n(&labels.set_slots[slot], k + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&labels.nsets, k + 1, __ATOMIC_RELEASE);
    return k;
}

/* p[0..*n) with key set to value (NULL: removed), kept sorted by key. The strings in p
 * are interned ones, key and value are the caller's. */
static int labels_edit(labels_pair_t *p, uint32_t *n, const char *key, const char *value)
{
    uint32_t i = 0;
    int c = 1;
    while (i < *n && (c = strcmp(p[i].key, key)) < 0)
        i++;
    if (c == 0 && value) {
        p[i].value = value;
    } else if (c == 0) {
        memmove(p + i, p + i + 1, (*n - i - 1) * sizeof(*p));
        (*n)--;
    } else if (value) {
        if (*n == HS_LABELS_MAX_PAIRS)
            return -E2BIG;
        memmove(p + i + 1, p + i, (*n - i) * sizeof(*p));
        p[i] = (labels_pair_t){key, value};
        (*n)++;
    }
    return 0;
}

/* The interned copy of s when there is one, else s itself (then the set is new). */
static const char *labels_lookup_str(const char *s, bool *all_interned)
{
    uint32_t slot;
    size_t len = strlen(s);
    const char *c = labels_str_find(s, len, hs_hash_bytes(s, len), &slot);
    if (!c)
        *all_interned = false;
    return c ? c : s;
}

static bool labels_valid(const char *s)
{
    return s && s[0] && strnlen(s, HS_LABELS_MAX_LEN + 1) <= HS_LABELS_MAX_LEN;
}

int64_t hs_labels_with(uint32_t from, const char *key, const char *value)
{
    labels_pair_t p[HS_LABELS_MAX_PAIRS];
    uint32_t n = 0, slot;
    if (!key)
        return HS_LABELS_EMPTY;
    if (!labels_valid(key) || (value && !labels_valid(value)))
        return -EINVAL;
    if (!__atomic_load_n(&labels.ready, __ATOMIC_ACQUIRE)) {
        hs_lock(&labels.lock, HS_RANK_LABELS);
        bool ok = labels_setup();
        hs_unlock(&labels.lock, HS_RANK_LABELS);
        if (!ok)
            return -ENOSPC;
    }
    if (from != HS_LABELS_OVERFLOW) { /* the fallback set starts afresh */
        if (from >= __atomic_load_n(&labels.nsets, __ATOMIC_ACQUIRE))
            return -EINVAL;
        n = labels.sets[from].n;
        memcpy(p, labels.pairs + labels.sets[from].off, n * sizeof(*p));
    }
    bool interned = true;
    key = labels_lookup_str(key, &interned);
    if (!value && !interned)
        return from == HS_LABELS_OVERFLOW ? HS_LABELS_EMPTY : from; /* a key no set has */
    if (value)
        value = labels_lookup_str(value, &interned);
    int rc = labels_edit(p, &n, key, value);
    if (rc != 0)
        return rc;
    int64_t id = interned ? labels_set_find(p, n, labels_hash_set(p, n), &slot) : -1;
    if (id >= 0)
        return id;
    hs_lock(&labels.lock, HS_RANK_LABELS);
    id = labels_set_intern(p, n);
    hs_unlock(&labels.lock, HS_RANK_LABELS);
    if (id == -ENOSPC)
        hs_log_once(labels.full_logged,
                    "more than %u label sets (or their strings): samples of threads past the "
                    "bound carry the label " HS_LABELS_OVERFLOW_KEY "=" HS_LABELS_OVERFLOW_VALUE,
                    HS_LABELS_MAX_SETS);
    return id;
}

size_t hs_labels_get(uint32_t id, const char **keys, const char **values, size_t max)
{
    if (id == HS_LABELS_OVERFLOW) {
        if (max == 0)
            return 0;
        keys[0] = HS_LABELS_OVERFLOW_KEY;
        values[0] = HS_LABELS_OVERFLOW_VALUE;
        return 1;
    }
    if (id >= hs_labels_count())
        return 0;
    const labels_set_t *s = &labels.sets[id];
    size_t n = s->n < max ? s->n : max;
    for (size_t i = 0; i < n; i++) {
        keys[i] = labels.pairs[s->off + i].key;
        values[i] = labels.pairs[s->off + i].value;
    }
    return n;
}

uint32_t hs_labels_count(void)
{
    return __atomic_load_n(&labels.ready, __ATOMIC_ACQUIRE)
               ? __atomic_load_n(&labels.nsets, __ATOMIC_ACQUIRE)
               : 0;
}

/* Pages a table of `bytes` touched by n entries scattered by their hashes. */
static uint64_t labels_scattered(uint64_t n, uint64_t bytes)
{
    return n * 4096 < bytes ? n * 4096 : bytes;
}

/* Touched memory, roughly: the used parts of the arrays and the slot pages hit. */
uint64_t hs_labels_mem(void)
{
    if (!hs_labels_count())
        return 0;
    hs_lock(&labels.lock, HS_RANK_LABELS);
    uint64_t m = labels.arena_used + labels.pairs_used * sizeof(labels_pair_t) +
                 (uint64_t)labels.nsets * sizeof(labels_set_t) +
                 labels_scattered(labels.nsets, LABELS_SET_SLOTS * sizeof(uint32_t)) +
                 labels_scattered(labels.nstrs, LABELS_STR_SLOTS * sizeof(char *));
    hs_unlock(&labels.lock, HS_RANK_LABELS);
    return m;
}

void hs_labels_lock(void)
{
    hs_lock(&labels.lock, HS_RANK_LABELS);
}

void hs_labels_unlock(void)
{
    hs_unlock(&labels.lock, HS_RANK_LABELS);
}
