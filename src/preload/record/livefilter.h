/*
 * The live filter: a counting filter over the addresses of live samples (and of bootstrap
 * blocks), read without a lock by every free through one bit per counter. A clear bit
 * proves the pointer was never sampled, so the non-sampled free costs one load. The
 * counters change only under the live table's shard lock that owns them (livetab.c).
 *
 * The filter grows with the live set: a filter of fixed size fills up on a big heap (at
 * 16,384 live samples, 22% of a 65,536-bit filter's bits are set, so 22% of all frees
 * took the locked path; bench/bigheap.sh). Each size is a separate object of fixed size
 * published through one pointer, so a reader gets a consistent (size, bits) pair with one
 * load; the bits of a filter replaced by a bigger one are never unmapped, so a free that
 * loaded the old pointer reads valid memory whose bits can only be stale set (a false
 * "maybe"), never stale clear (see livefilter.c).
 *
 * Counter 0, where NULL hashes at every size, is pinned: its bit is set in every filter
 * from the start and no insert or remove changes it. free(NULL) therefore takes the slow
 * path, which returns at once, and the fast path needs no NULL test (2 instructions on
 * every free); an address that hashes there (1 in nbits) is looked up in the table.
 */
#ifndef HS_LIVEFILTER_H
#define HS_LIVEFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_FILTER_MIN_LOG2 16 /* 8 KiB of bits: stays in L1 beside the program's data */
#define HS_FILTER_MAX_LOG2 26 /* 8 MiB of bits and 64 MiB of counters, for ~4M samples */
/* The live table's shards own 2^(log2 - HS_FILTER_SHARD_BITS) consecutive counters each,
 * in the same place whatever the size: a shard is the hash's top bits. */
#define HS_FILTER_SHARD_BITS 6

typedef struct {
    uint8_t *counts;  /* [nbits], saturating at 255 */
    uint64_t nbits;   /* a power of two, HS_FILTER_MIN_LOG2..HS_FILTER_MAX_LOG2 */
    uint32_t words[]; /* [nbits / 32]: bit i set while counts[i] != 0 */
} hs_filter_t;

/* The words of the filter in use (its header just before them, so the free path indexes
 * from the pointer it loads with no offset); replaced (with release) only while every
 * shard lock is held. */
extern uint32_t *hs_filter_words __attribute__((visibility("hidden")));

static inline hs_filter_t *hs_filter_of(uint32_t *words)
{
    return (hs_filter_t *)(void *)((char *)words - offsetof(hs_filter_t, words));
}

/* The filter in use. Stable while the caller holds any shard lock. */
static inline hs_filter_t *hs_filter_current(void)
{
    return hs_filter_of(__atomic_load_n(&hs_filter_words, __ATOMIC_ACQUIRE));
}

/* The 32-bit Fibonacci hash of an address: its top bits depend on every bit below them,
 * so neighbouring objects land apart (and the always-zero low bits need no shift). A
 * 32-bit multiply takes its constant as an immediate; addresses equal in their low 32
 * bits share a counter, which costs a slow free at worst. */
static inline uint32_t hs_filter_hash(uintptr_t p)
{
    return (uint32_t)p * 0x9E3779B1u;
}

/* Counter index of p in f: the hash's top log2(nbits) bits, by a multiply with the size
 * (one instruction, where a variable shift wants the count in %cl). */
static inline size_t hs_filter_index_in(const hs_filter_t *f, uintptr_t p)
{
    return (size_t)(((uint64_t)hs_filter_hash(p) * f->nbits) >> 32);
}

/* The live table's shard of p, the same for every filter size. */
static inline uint32_t hs_filter_shard(uintptr_t p)
{
    return hs_filter_hash(p) >> (32 - HS_FILTER_SHARD_BITS);
}

/* Lock-free: false means p is certainly not marked. Loads: the filter pointer, its size,
 * one 32-bit word (the shift count's low 5 bits pick the bit). */
static inline bool hs_filter_maybe(const void *p)
{
    uint32_t *w = __atomic_load_n(&hs_filter_words, __ATOMIC_ACQUIRE);
    size_t i = hs_filter_index_in(hs_filter_of(w), (uintptr_t)p);
    return (__atomic_load_n(&w[i / 32], __ATOMIC_RELAXED) >> (i % 32)) & 1;
}

/* Counter of p up or down by one in the current filter (saturated counters and the
 * pinned counter 0 stay), its bit following. The caller holds p's shard lock. */
void hs_filter_inc(uintptr_t p);
void hs_filter_dec(uintptr_t p);

/* Whether a shard holding `count` entries asks for a bigger filter: more than one live
 * entry per 32 counters of its range (where 3% of frees would be told "maybe" wrongly).
 * No lock needed: a stale answer only delays or repeats the check in hs_filter_grow. */
bool hs_filter_wants_growth(uint32_t count);

/* Replaces the filter by one twice the size (or more, up to HS_FILTER_MAX_LOG2) counting
 * every address `each` reports; the caller holds every shard lock. `each` calls mark(p)
 * once per live address. Returns 0, or -ENOMEM (the old filter stays, still correct). */
int hs_filter_grow(uint64_t live, void (*each)(void (*mark)(uintptr_t p)));

/* Bytes of filters: the one in use, and the bits of those it replaced. */
size_t hs_filter_mem(void);

#endif
