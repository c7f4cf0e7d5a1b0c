/*
 * Stack table: interns sampled call stacks (hash of the PC array and the label set ->
 * dense id) and keeps each stack's cumulative, unbiased allocation estimates and the
 * bitmask of trackers (trackers.h) its PCs pass through. Bounded by HEAPSIFT_MAX_STACKS:
 * a stack that does not fit is counted (hs_stacktab_dropped), never silently lost.
 * Storage comes from mmap, never malloc. A known stack is found and counted without a
 * lock; one mutex (HS_RANK_STACKTAB in core.h) serialises interning. PC arrays are
 * immutable once interned, so a reader may use them without the lock for any id below
 * the count it read.
 */
#ifndef HS_STACKTAB_H
#define HS_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uintptr_t *pcs; /* innermost first; stable until hs_stacktab_reset */
    uint32_t depth;
    uint32_t labels;      /* label set id (labels.h); 0 = no labels */
    uint32_t trackers;    /* trackers its PCs pass through, one bit each */
    double alloc_objects; /* sum of sample weights */
    double alloc_bytes;   /* sum of weight * requested size */
} hs_stack_t;

/* Sets the capacity. Returns 0 or -ENOMEM. Call once, before any other function. */
int hs_stacktab_init(uint32_t max_stacks);

/* Interns the stack and adds (objects, bytes) to its cumulative counts. Returns the id
 * (>= 0), or -1 when the table is full (the sample is then counted as dropped). */
int32_t hs_stacktab_record(const uintptr_t *pcs, uint32_t depth, double objects, double bytes);
/* The same for a sample taken under label set `labels` (a stack with other labels is
 * another entry); *trackers gets the stack's tracker mask (0 when the table is full). A
 * new stack's mask is computed here, under the lock (hs_trackers_mask). */
int32_t hs_stacktab_record_labeled(const uintptr_t *pcs, uint32_t depth, uint32_t labels,
                                   double objects, double bytes, uint32_t *trackers);

/* Lock-free, for id < hs_stacktab_count(): the stack's tracker mask now, and its PCs. */
uint32_t hs_stacktab_trackers(int32_t id);
const uintptr_t *hs_stacktab_pcs(int32_t id, uint32_t *depth);
/* Adds bits to stack id's tracker mask. The table lock (hs_stacktab_lock) must be held:
 * that orders it against the masks new stacks get. */
void hs_stacktab_add_trackers_locked(int32_t id, uint32_t bits);

/* Number of interned stacks, and samples dropped because the table was full. */
uint32_t hs_stacktab_count(void);
uint64_t hs_stacktab_dropped(void);
/* Bytes of the table in use (entries, their counters, slots and PCs): what it has
 * touched of its reservations, give or take the pages' rounding. */
size_t hs_stacktab_mem(void);

/* Copies stack id's entry. Its two counters are read one after the other while samples
 * may be adding to them, so they can be one sample apart. Returns false for a bad id. */
bool hs_stacktab_get(int32_t id, hs_stack_t *out);

/* Zeroes every stack's cumulative counters (stacks stay interned). A sample recorded
 * meanwhile may land before or after the zeroing, its objects and bytes apart. */
void hs_stacktab_clear_counts(void);

/* For fork handlers and tracker registration: take and release the table lock. */
void hs_stacktab_lock(void);
void hs_stacktab_unlock(void);

#endif
