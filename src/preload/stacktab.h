/*
 * Stack table: interns sampled call stacks (hash of the PC array -> dense id) and keeps
 * each stack's cumulative, unbiased allocation estimates. Bounded by HEAPSIFT_MAX_STACKS:
 * a stack that does not fit is counted (hs_stacktab_dropped), never silently lost.
 * Storage comes from mmap, never malloc. One mutex (rank 1 in lock order, see
 * recorder.c); PC arrays are immutable once interned, so a snapshot may read them
 * without the lock for any id below the count it read under the lock.
 */
#ifndef HS_STACKTAB_H
#define HS_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uintptr_t *pcs; /* innermost first; stable until hs_stacktab_reset */
    uint32_t depth;
    double alloc_objects; /* sum of sample weights */
    double alloc_bytes;   /* sum of weight * requested size */
} hs_stack_t;

/* Sets the capacity. Returns 0 or -ENOMEM. Call once, before any other function. */
int hs_stacktab_init(uint32_t max_stacks);

/* Interns the stack and adds (objects, bytes) to its cumulative counts. Returns the id
 * (>= 0), or -1 when the table is full (the sample is then counted as dropped). */
int32_t hs_stacktab_record(const uintptr_t *pcs, uint32_t depth, double objects, double bytes);

/* Number of interned stacks, and samples dropped because the table was full. */
uint32_t hs_stacktab_count(void);
uint64_t hs_stacktab_dropped(void);

/* Copies stack id's entry (counters read under the lock). Returns false for a bad id. */
bool hs_stacktab_get(int32_t id, hs_stack_t *out);

/* Zeroes every stack's cumulative counters (stacks stay interned). */
void hs_stacktab_clear_counts(void);

/* For fork handlers: take and release the table lock. */
void hs_stacktab_lock(void);
void hs_stacktab_unlock(void);

#endif
