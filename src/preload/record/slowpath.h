/*
 * The slow halves of the entry points in interpose.c: reached when a thread's countdown
 * runs out (an allocation to sample, a new thread, the first call) or when free's filter
 * says a pointer may be sampled. All are non-inlined and cold.
 */
#ifndef HS_SLOWPATH_H
#define HS_SLOWPATH_H

#include <stddef.h>

typedef enum {
    HS_OP_MALLOC,
    HS_OP_CALLOC,
    HS_OP_ALIGNED_ALLOC,
    HS_OP_MEMALIGN,
    HS_OP_VALLOC,
    HS_OP_PVALLOC,
} hs_op_t;

typedef enum {
    HS_NEW_PLAIN,
    HS_NEW_ARRAY,
    HS_NEW_ALIGNED,
    HS_NEW_ALIGNED_ARRAY,
} hs_new_kind_t;

/* The thread's countdown has already been charged n bytes (and is <= 0). */
void *hs_slow_alloc(hs_op_t op, size_t align, size_t n) __attribute__((noinline, cold));
int hs_slow_posix_memalign(void **out, size_t align, size_t n) __attribute__((noinline, cold));
/* Charged n; either the countdown ran out or p may be sampled. */
void *hs_slow_realloc(void *p, size_t n) __attribute__((noinline, cold));
/* p passed the filter: a sampled object, a bootstrap block, NULL (whose filter bit is
 * pinned set) or a false positive. */
void hs_slow_free(void *p) __attribute__((noinline, cold));
/* operator new whose fast path did not return memory: sample if due, and on failure
 * defer to the next operator new (new_handler, std::bad_alloc). */
void *hs_slow_new(hs_new_kind_t kind, size_t align, size_t n) __attribute__((noinline, cold));

#endif
