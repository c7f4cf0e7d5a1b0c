/*
 * Trackers: a running estimate of the live heap held under one function, readable in
 * O(1) (heapsift_tracker_new / heapsift_tracker_bytes). A tracker is a function name
 * resolved once to the address ranges of its code in the loaded modules
 * (tracker_resolve.c). Each stack-table entry carries a bitmask of the trackers its
 * return addresses fall in (computed when the stack is interned, and for the stacks
 * already there when a tracker is registered); each live sample carries the bits whose
 * trackers counted it, so its free takes back exactly what its allocation added, even
 * across a registration racing with both. At most HS_TRACKERS_MAX trackers.
 */
#ifndef HS_TRACKERS_H
#define HS_TRACKERS_H

#include "livetab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_TRACKERS_MAX 32 /* one bit each in a uint32_t mask */
#define HS_TRACKERS_NAME_MAX 63
#define HS_TRACKERS_FUNCTION_MAX 255

/* The trackers whose code holds one of the return addresses pcs[0..depth) (each taken
 * minus one: inside the call). Called by the stack table, under its lock. */
uint32_t hs_trackers_mask(const uintptr_t *pcs, uint32_t depth);

/* Sampled paths. Live entry e was just inserted, e->trackers being its stack's mask as
 * hs_stacktab_record_labeled gave it: adds e to those trackers, and to any registered
 * since whose walk of the live table may have missed it. Atomics only, but for that
 * catching up (rare: under e's shard lock). */
void hs_trackers_inserted(const hs_live_t *e);
/* Live entry e was just removed: takes it back from the trackers that counted it. */
void hs_trackers_removed(const hs_live_t *e);

/* Registers a tracker: name (1..HS_TRACKERS_NAME_MAX bytes) labels it, function
 * (1..HS_TRACKERS_FUNCTION_MAX bytes) is the function whose callees' allocations it
 * counts. Guard held, no lock held. Returns the handle (>= 0) or -EINVAL, -ENOENT (no
 * code of that name), -ENOSPC (HS_TRACKERS_MAX reached) or -ENOMEM. */
int hs_trackers_new(const char *name, const char *function);

typedef struct {
    double bytes, objects, variance; /* estimates of the live heap under the function */
    uint64_t samples;                /* live samples they rest on */
    uint64_t ranges;                 /* address ranges the function resolved to */
} hs_tracker_value_t;

/* Reads tracker handle: O(1), atomics only. False for a bad handle. */
bool hs_trackers_read(int handle, hs_tracker_value_t *out);
/* The tracker's live bytes estimate, or -1 for a bad handle. O(1). */
int64_t hs_trackers_bytes(int handle);

/* One profile comment per tracker ("tracker NAME function=F bytes=B ..."); returns the
 * number of lines written (at most max). */
int hs_trackers_format(char lines[][200], int max);

/* Fork handlers: the registration lock (HS_RANK_TRACKERS). */
void hs_trackers_lock(void);
void hs_trackers_unlock(void);

/* tracker_resolve.c: the code of function in the loaded modules, as sorted, disjoint
 * [lo, hi) pairs in *ranges (malloc'd, 2 * *n words). Guard held. 0, -ENOENT, -ENOMEM. */
int hs_tracker_resolve(const char *function, uintptr_t **ranges, size_t *n);

#endif
