/*
 * Trackers (see trackers.h): the registry, the address table new stacks are matched
 * against, and the running sums the sampled paths keep.
 *
 * The address table is every tracker's ranges cut into disjoint intervals, each with the
 * mask of the trackers covering it (a function may be inlined into another tracked one),
 * so a return address costs one binary search. It is read only by the stack table under
 * its lock and replaced under that lock, so the old one can be freed right after.
 *
 * Registration (rare; on an application thread, guard held) takes trackers_lock (HS_RANK_TRACKERS:
 * before every table lock), sets the new bit on the existing stacks and installs the new
 * table under the stack-table lock, then walks the live table so the samples already
 * live under the function join the tracker. A sample being recorded at that moment is
 * counted once either way: its recorder re-reads its stack's mask after inserting it and
 * catches up under the shard lock (recorder.c), as the walk does; the entry's own bits
 * say who counted it.
 *
 * The sums are atomics: bytes as integers (each sample's weight * size rounded once, so
 * a free subtracts exactly what its allocation added), objects in 1/65536ths, the
 * variance as a double (compare-and-swap). Each tracker has its own cache line.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "trackers.h"
#include "base/sort.h"
#include "runtime/core.h"
#include "stacktab.h"
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACKERS_OBJ_ONE 65536.0 /* fixed point of the objects sum */

typedef struct {
    int64_t bytes;   /* sum of weight * size, each rounded */
    int64_t objects; /* sum of weight * TRACKERS_OBJ_ONE, each rounded */
    int64_t samples;
    double variance; /* sum of weight * size^2 * (weight - 1) */
    uintptr_t *ranges;
    size_t nranges;
    char name[HS_TRACKERS_NAME_MAX + 1];
    char function[HS_TRACKERS_FUNCTION_MAX + 1];
} __attribute__((aligned(64))) trackers_one_t;

typedef struct {
    size_t n;
    uintptr_t *bound; /* sorted interval starts */
    uint32_t *mask;   /* mask[i] covers [bound[i], bound[i + 1]); the last one is 0 */
} trackers_table_t;

static pthread_mutex_t trackers_lock = PTHREAD_MUTEX_INITIALIZER;
static trackers_one_t trackers[HS_TRACKERS_MAX];
static int trackers_n;                  /* published with release after registration */
static trackers_table_t *trackers_addr; /* stack-table lock */

/* The mask of the interval holding x: the last start <= x. */
static uint32_t trackers_lookup(const trackers_table_t *t, uintptr_t x)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->bound[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? t->mask[lo - 1] : 0;
}

uint32_t hs_trackers_mask(const uintptr_t *pcs, uint32_t depth)
{
    const trackers_table_t *t = trackers_addr;
    uint32_t m = 0;
    for (uint32_t i = 0; t && i < depth; i++)
        m |= trackers_lookup(t, pcs[i] - 1);
    return m;
}

static void trackers_account(uint32_t mask, const hs_live_t *e, int sign)
{
    double wb = e->weight * (double)e->size; /* >= 0: rounding is + 0.5, truncated */
    int64_t bytes = sign * (int64_t)(wb + 0.5);
    int64_t objects = sign * (int64_t)(e->weight * TRACKERS_OBJ_ONE + 0.5);
    double var = sign * wb * (double)e->size * (e->weight - 1);
    for (; mask; mask &= mask - 1) {
        trackers_one_t *t = &trackers[__builtin_ctz(mask)];
        __atomic_add_fetch(&t->bytes, bytes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&t->objects, objects, __ATOMIC_RELAXED);
        __atomic_add_fetch(&t->samples, sign, __ATOMIC_RELAXED);
        hs_atomic_add_double(&t->variance, var);
    }
}

/* Live entry e (its shard locked) joins the trackers its stack has and it was not
 * counted in; its bits say it was, from now on. */
static void trackers_catch_up(hs_live_t *e, void *unused)
{
    (void)unused;
    uint32_t add = hs_stacktab_trackers(e->stack_id) & ~e->trackers;
    if (add) {
        trackers_account(add, e, 1);
        e->trackers |= add;
    }
}

/*
 * A registration that began after e's stack gave its mask set its bit on the stack,
 * then walked the live table. If the re-read below misses the bit, the bit was set
 * after e's insert, so the walk, later still, found e there; if it sees it, e catches up
 * under its shard lock, where the walk would count it: either way exactly once.
 */
void hs_trackers_inserted(const hs_live_t *e)
{
    if (e->trackers)
        trackers_account(e->trackers, e, 1);
    if (HS_UNLIKELY(hs_stacktab_trackers(e->stack_id) & ~e->trackers))
        hs_livetab_update(e->addr, trackers_catch_up, NULL);
}

void hs_trackers_removed(const hs_live_t *e)
{
    if (e->trackers)
        trackers_account(e->trackers, e, -1);
}

typedef struct {
    uintptr_t at;
    int bit, delta;
} trackers_event_t;

static int trackers_event_cmp(const void *a, const void *b)
{
    const trackers_event_t *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* The address table of trackers 0..n-1. NULL on ENOMEM. */
static trackers_table_t *trackers_table_build(int n)
{
    size_t ne = 0, k = 0;
    for (int i = 0; i < n; i++)
        ne += 2 * trackers[i].nranges;
    trackers_table_t *t = calloc(1, sizeof(*t));
    trackers_event_t *ev = malloc((ne ? ne : 1) * sizeof(*ev));
    if (t) {
        t->bound = malloc((ne ? ne : 1) * sizeof(*t->bound));
        t->mask = malloc((ne ? ne : 1) * sizeof(*t->mask));
    }
    if (!t || !ev || !t->bound || !t->mask)
        goto fail;
    for (int i = 0; i < n; i++)
        for (size_t r = 0; r < trackers[i].nranges; r++) {
            ev[k++] = (trackers_event_t){trackers[i].ranges[2 * r], i, 1};
            ev[k++] = (trackers_event_t){trackers[i].ranges[2 * r + 1], i, -1};
        }
    hs_sort(ev, ne, sizeof(*ev), trackers_event_cmp);
    int cover[HS_TRACKERS_MAX] = {0};
    uint32_t mask = 0;
    for (size_t i = 0; i < ne;) {
        uintptr_t at = ev[i].at;
        for (; i < ne && ev[i].at == at; i++) {
            cover[ev[i].bit] += ev[i].delta;
            mask = cover[ev[i].bit] ? mask | (1u << ev[i].bit) : mask & ~(1u << ev[i].bit);
        }
        if (t->n == 0 ? mask != 0 : t->mask[t->n - 1] != mask) {
            t->bound[t->n] = at;
            t->mask[t->n++] = mask;
        }
    }
    free(ev);
    return t;
fail:
    free(ev);
    if (t) {
        free(t->bound);
        free(t->mask);
    }
    free(t);
    return NULL;
}

static void trackers_table_free(trackers_table_t *t)
{
    if (t) {
        free(t->bound);
        free(t->mask);
        free(t);
    }
}

/* Whether one of the stack's return addresses lies in the sorted ranges r[0..n). */
static bool trackers_hits(const uintptr_t *r, size_t n, const uintptr_t *pcs, uint32_t depth)
{
    for (uint32_t i = 0; i < depth; i++) {
        uintptr_t x = pcs[i] - 1;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (r[2 * mid] <= x)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo && x < r[2 * (lo - 1) + 1])
            return true;
    }
    return false;
}

static bool trackers_stack_hits(const trackers_one_t *t, int32_t id)
{
    uint32_t depth;
    const uintptr_t *pcs = hs_stacktab_pcs(id, &depth);
    return pcs && trackers_hits(t->ranges, t->nranges, pcs, depth);
}

/*
 * Gives tracker `bit` to every stack it covers and installs table (the old one is freed).
 * The stacks known now are matched without the lock (their PCs never change); those
 * interned meanwhile, under it, where new stacks take their masks from the table.
 */
static int trackers_install(int bit, trackers_table_t *table)
{
    const trackers_one_t *t = &trackers[bit];
    uint32_t n0 = hs_stacktab_count();
    uint8_t *hit = calloc(n0 ? n0 : 1, 1);
    if (!hit)
        return -ENOMEM;
    for (uint32_t id = 0; id < n0; id++)
        hit[id] = trackers_stack_hits(t, (int32_t)id);
    hs_stacktab_lock();
    for (uint32_t id = 0; id < n0; id++)
        if (hit[id])
            hs_stacktab_add_trackers_locked((int32_t)id, 1u << bit);
    for (uint32_t id = n0; id < hs_stacktab_count(); id++)
        if (trackers_stack_hits(t, (int32_t)id))
            hs_stacktab_add_trackers_locked((int32_t)id, 1u << bit);
    trackers_table_t *old = trackers_addr;
    trackers_addr = table;
    hs_stacktab_unlock();
    trackers_table_free(old);
    free(hit);
    return 0;
}

static bool trackers_valid(const char *s, size_t max)
{
    return s && s[0] && strnlen(s, max + 1) <= max;
}

int hs_trackers_new(const char *name, const char *function)
{
    uintptr_t *ranges = NULL;
    size_t nranges = 0;
    if (!trackers_valid(name, HS_TRACKERS_NAME_MAX) ||
        !trackers_valid(function, HS_TRACKERS_FUNCTION_MAX))
        return -EINVAL;
    if (__atomic_load_n(&trackers_n, __ATOMIC_ACQUIRE) >= HS_TRACKERS_MAX)
        return -ENOSPC;
    int rc = hs_tracker_resolve(function, &ranges, &nranges);
    if (rc != 0)
        return rc;
    hs_lock(&trackers_lock, HS_RANK_TRACKERS);
    int bit = trackers_n;
    trackers_table_t *table = NULL;
    rc = -ENOSPC;
    if (bit >= HS_TRACKERS_MAX)
        goto out;
    trackers_one_t *t = &trackers[bit];
    memset(t, 0, sizeof(*t));
    t->ranges = ranges;
    t->nranges = nranges;
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->function, sizeof(t->function), "%s", function);
    rc = -ENOMEM;
    if (!(table = trackers_table_build(bit + 1)) || trackers_install(bit, table) != 0)
        goto out;
    table = NULL;
    ranges = NULL;
    hs_livetab_each(trackers_catch_up, NULL);
    __atomic_store_n(&trackers_n, bit + 1, __ATOMIC_RELEASE);
    rc = bit;
out:
    if (ranges && rc < 0 && bit < HS_TRACKERS_MAX)
        memset(&trackers[bit], 0, sizeof(trackers[bit]));
    hs_unlock(&trackers_lock, HS_RANK_TRACKERS);
    trackers_table_free(table);
    free(ranges);
    return rc;
}

bool hs_trackers_read(int handle, hs_tracker_value_t *out)
{
    if (handle < 0 || handle >= __atomic_load_n(&trackers_n, __ATOMIC_ACQUIRE))
        return false;
    const trackers_one_t *t = &trackers[handle];
    int64_t bytes = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
    int64_t objects = __atomic_load_n(&t->objects, __ATOMIC_RELAXED);
    int64_t samples = __atomic_load_n(&t->samples, __ATOMIC_RELAXED);
    double var;
    __atomic_load(&t->variance, &var, __ATOMIC_RELAXED);
    /* Each sum is never below zero, but the three are read one after the other. */
    out->bytes = bytes > 0 ? (double)bytes : 0;
    out->objects = objects > 0 ? (double)objects / TRACKERS_OBJ_ONE : 0;
    out->samples = samples > 0 ? (uint64_t)samples : 0;
    out->variance = var > 0 ? var : 0;
    out->ranges = t->nranges;
    return true;
}

int64_t hs_trackers_bytes(int handle)
{
    if (handle < 0 || handle >= __atomic_load_n(&trackers_n, __ATOMIC_ACQUIRE))
        return -1;
    int64_t bytes = __atomic_load_n(&trackers[handle].bytes, __ATOMIC_RELAXED);
    return bytes > 0 ? bytes : 0;
}

int hs_trackers_format(char lines[][200], int max)
{
    int n = __atomic_load_n(&trackers_n, __ATOMIC_ACQUIRE);
    int k = 0;
    for (int i = 0; i < n && k < max; i++) {
        hs_tracker_value_t v;
        if (!hs_trackers_read(i, &v))
            continue;
        char line[600];
        double lo, hi;
        hs_report_interval(v.bytes, v.variance, &lo, &hi);
        snprintf(line, sizeof(line),
                 "tracker: name=%s function=%.80s bytes=%.0f objects=%.0f samples=%llu "
                 "ci95_bytes=%.0f lo95_bytes=%.0f hi95_bytes=%.0f",
                 trackers[i].name, trackers[i].function, v.bytes, v.objects,
                 (unsigned long long)v.samples, hi - v.bytes, lo, hi);
        snprintf(lines[k++], 200, "%.199s", line);
    }
    return k;
}

void hs_trackers_lock(void)
{
    hs_lock(&trackers_lock, HS_RANK_TRACKERS);
}

void hs_trackers_unlock(void)
{
    hs_unlock(&trackers_lock, HS_RANK_TRACKERS);
}
