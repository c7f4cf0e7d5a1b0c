/*
 * Live table: sampled address -> (stack id, requested size, weight, allocation time), for
 * the objects sampled and not yet freed. In front of it sits a counting filter indexed by a
 * hash of the address, read without a lock by every free through one bit per counter: a
 * clear bit proves the pointer was never sampled, so the non-sampled free path costs one
 * load from an 8 KiB array. Storage
 * comes from mmap, never malloc. The table is sharded by address, one mutex per shard
 * (rank 2 in lock order, after the stack table).
 */
#ifndef HS_LIVETAB_H
#define HS_LIVETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t addr;
    uint64_t size; /* requested bytes */
    double weight; /* objects this sample stands for */
    int64_t t_ns;  /* allocation time, CLOCK_MONOTONIC (lifetimes.c) */
    int32_t stack_id;
    uint32_t trackers; /* trackers that counted this sample (trackers.h) */
} hs_live_t;

#define HS_FILTER_BITS 16
#define HS_FILTER_SIZE (1u << HS_FILTER_BITS)

/* The filter as every free reads it: bit i is set while counter i (hs_live_counts) is not
 * zero. 8 KiB, where the counters take 64 KiB: each free reads one random word of it, and
 * with the program's own data streaming through the caches a 64 KiB array read that way
 * missed L1 and L2 on most frees (churn at the default rate: the byte test alone took
 * 3% of the run's CPU; with sampling off it did not, because the untouched array was the
 * kernel's one zero page). 128 cache lines stay cached. */
extern uint32_t hs_live_filter[HS_FILTER_SIZE / 32] __attribute__((visibility("hidden")));
/* The counters behind the bits, written only under their shard's lock (livetab.c). */
extern uint8_t hs_live_counts[HS_FILTER_SIZE] __attribute__((visibility("hidden")));

static inline size_t hs_filter_index(uintptr_t p)
{
    /* Fibonacci hash of the low 32 bits: the top bits of (uint32_t)p * K depend on every
     * bit below them, so neighbouring objects land apart (and the always-zero low bits
     * need no shift). A 32-bit multiply takes its constant as an immediate: 2
     * instructions on every free where the 64-bit one takes 3; addresses equal in their
     * low 32 bits share a counter, which costs a slow free at worst. Over a million
     * glibc blocks with 2,000 to 50,000 of them marked, the share of frees sent to the
     * slow path is the 64-bit hash's within 1%. */
    return (size_t)((uint32_t)((uint32_t)p * 0x9E3779B1u) >> (32 - HS_FILTER_BITS));
}

/* Lock-free: false means p is certainly not in the table (nor a bootstrap block). One
 * relaxed 32-bit load and a bit test (the shift count's low 5 bits pick the bit). */
static inline bool hs_livetab_maybe(const void *p)
{
    size_t i = hs_filter_index((uintptr_t)p);
    return (__atomic_load_n(&hs_live_filter[i / 32], __ATOMIC_RELAXED) >> (i % 32)) & 1;
}

/* Counter updates (saturating at 255, never decremented once saturated), each setting or
 * clearing the counter's bit as it leaves or reaches zero, under the address's shard lock.
 * For the bootstrap pool's blocks; the table updates the counters of its entries itself. */
void hs_filter_mark(uintptr_t p);
void hs_filter_unmark(uintptr_t p);

int hs_livetab_init(void);
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

/* Calls fn on every live entry (each = 0) or on addr's entry only, with its shard lock
 * held; fn may change the entry but not its address, and must take no other lock.
 * hs_livetab_update returns whether addr was there. */
void hs_livetab_each(void (*fn)(hs_live_t *e, void *arg), void *arg);
bool hs_livetab_update(uintptr_t addr, void (*fn)(hs_live_t *e, void *arg), void *arg);

/* For fork handlers: take and release every shard lock, in shard order. */
void hs_livetab_lock_all(void);
void hs_livetab_unlock_all(void);

#endif
