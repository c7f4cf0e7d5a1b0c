/*
 * Live table: sampled address -> (stack id, requested size, weight, allocation time), for
 * the objects sampled and not yet freed. In front of it sits the live filter
 * (livefilter.h), read without a lock by every free: a clear bit proves the pointer was
 * never sampled, so the non-sampled free path costs one load from an array of 8 KiB, more
 * on a big live set. Storage comes from mmap, never malloc. The table is sharded by
 * address, one mutex per shard (HS_RANK_LIVETAB in core.h, after the stack table).
 */
#ifndef HS_LIVETAB_H
#define HS_LIVETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "livefilter.h"

typedef struct {
    uintptr_t addr;
    uint64_t size; /* requested bytes */
    double weight; /* objects this sample stands for */
    int64_t t;     /* allocation time, a hs_lifetime_now reading (lifetimes.h) */
    int32_t stack_id;
    uint32_t trackers; /* trackers that counted this sample (trackers.h) */
    uint32_t spool;    /* its slot in the spool (spool.h), 1-based; 0 = none */
} hs_live_t;

/* Lock-free: false means p is certainly not in the table (nor a bootstrap block). */
static inline bool hs_livetab_maybe(const void *p)
{
    return hs_filter_maybe(p);
}

/* Counter updates (saturating at 255, never decremented once saturated), each setting or
 * clearing the counter's bit as it leaves or reaches zero, under the address's shard lock.
 * For the bootstrap pool's blocks; the table updates the counters of its entries itself. */
void hs_filter_mark(uintptr_t p);
void hs_filter_unmark(uintptr_t p);

/* Inserts e (e->addr must not be present; if it is, its entry is replaced). Returns 0,
 * -ENOMEM, or -EINVAL for a zero address. */
int hs_livetab_insert(const hs_live_t *e);
/* Removes addr; true and *out filled if it was present. */
bool hs_livetab_remove(uintptr_t addr, hs_live_t *out);

/* Totals of the live set. */
typedef struct {
    uint64_t samples;
    double objects, bytes;
} hs_live_totals_t;

/*
 * Adds each live entry's weight to objects[stack_id] and weight * size to bytes[stack_id]
 * (ids >= nstacks are ignored), locking one shard at a time. totals may be NULL.
 */
void hs_livetab_aggregate(double *objects, double *bytes, size_t nstacks, hs_live_totals_t *totals);
uint64_t hs_livetab_count(void);
/* Bytes of the shards' mmap'd tables (whole pages), read without a lock. */
size_t hs_livetab_mem(void);

/* Calls fn on every live entry (each = 0) or on addr's entry only, with its shard lock
 * held; fn may change the entry but not its address, and must take no other lock.
 * hs_livetab_update returns whether addr was there. */
void hs_livetab_each(void (*fn)(hs_live_t *e, void *arg), void *arg);
bool hs_livetab_update(uintptr_t addr, void (*fn)(hs_live_t *e, void *arg), void *arg);

/* Calls fn with the address range of each shard's table (its mmap'd slots), each under
 * its shard lock: the reachability scan (reachscan.c) must not read the table's copies
 * of the sampled addresses as pointers. fn must take no lock. */
void hs_livetab_tables(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);

/* Both of the above at once, with every shard lock already held (hs_livetab_lock_all):
 * the reachability scan copies the table and learns its slots' ranges while the program's
 * threads are stopped. fn and table must take no lock. */
void hs_livetab_each_locked(void (*fn)(hs_live_t *e, void *arg),
                            void (*table)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* For fork handlers: take and release every shard lock, in shard order. */
void hs_livetab_lock_all(void);
void hs_livetab_unlock_all(void);

#endif
