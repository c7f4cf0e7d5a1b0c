/*
 * Invariants checked, not only written: hs_assert, and a lock-rank checker in the spirit
 * of jemalloc's witness. Each thread keeps the ranks of the locks it holds (core.h's
 * table) in its TLS block; taking a lock whose rank is not above every rank it holds is a
 * violation, as is releasing one it does not hold. The live table's shards share a rank
 * and are ordered by their index (sub).
 *
 * Compiled in only with HS_DEBUG_CHECKS (CMake option, ON for CMAKE_BUILD_TYPE=Debug and
 * for HS_SANITIZE): then a violation logs one line through hs_log and aborts. Without it
 * every macro here expands to nothing, and hs_lock/hs_unlock are the pthread calls: the
 * release library pays nothing. Allocation-free and lock-free either way.
 */
#ifndef HS_DEBUGCHECK_H
#define HS_DEBUGCHECK_H

#include "core.h"

#include <pthread.h>
#include <stdbool.h>

#ifdef HS_DEBUG_CHECKS
/* Logs "check failed: what (file:line)" once, then aborts. */
void hs_check_fail(const char *what, const char *file, int line)
    __attribute__((noreturn, cold, noinline));
/* Records that the thread is about to take a lock of rank (and sub, for ranks shared by
 * ordered instances); fails when it holds one of the same or a higher rank. */
void hs_rank_acquire(unsigned rank, unsigned sub, const char *file, int line);
/* Records the release; fails when the thread holds no such lock. */
void hs_rank_release(unsigned rank, unsigned sub, const char *file, int line);
/* Whether the thread holds a lock of this rank. */
bool hs_rank_held(unsigned rank);

#define hs_assert(c)                                                                               \
    do {                                                                                           \
        if (HS_UNLIKELY(!(c)))                                                                     \
            hs_check_fail(#c, __FILE__, __LINE__);                                                 \
    } while (0)
#define HS_RANK_ACQUIRE(rank, sub) hs_rank_acquire((rank), (sub), __FILE__, __LINE__)
#define HS_RANK_RELEASE(rank, sub) hs_rank_release((rank), (sub), __FILE__, __LINE__)
#define hs_assert_held(rank) hs_assert(hs_rank_held(rank))

/* The ranks a thread holds, lent to a thread that works on its behalf while it waits
 * (hs_fdtable_run): the worker then holds them as far as the checks are concerned. */
typedef struct {
    uint32_t n;
    uint16_t held[HS_HELD_MAX];
} hs_held_t;
void hs_rank_save(hs_held_t *out);
void hs_rank_restore(const hs_held_t *in);
#else
/* Nothing, and nothing evaluated: sizeof keeps the expression's names used. */
#define hs_assert(c) ((void)sizeof(!(c)))
#define HS_RANK_ACQUIRE(rank, sub) ((void)0)
#define HS_RANK_RELEASE(rank, sub) ((void)0)
#define hs_assert_held(rank) ((void)0)
typedef struct {
    char unused;
} hs_held_t;
static inline void hs_rank_save(hs_held_t *out)
{
    (void)out;
}
static inline void hs_rank_restore(const hs_held_t *in)
{
    (void)in;
}
#endif

/* The thread is inside profiler code (the guard is held). */
#define hs_assert_guard() hs_assert(hs_tls.guard > 0)

/* pthread_mutex_lock/unlock of a lock of this rank (core.h), checked in debug builds. */
#define hs_lock(m, rank) hs_lock_sub((m), (rank), 0)
#define hs_unlock(m, rank) hs_unlock_sub((m), (rank), 0)
#define hs_lock_sub(m, rank, sub)                                                                  \
    do {                                                                                           \
        HS_RANK_ACQUIRE((rank), (sub));                                                            \
        pthread_mutex_lock(m);                                                                     \
    } while (0)
#define hs_unlock_sub(m, rank, sub)                                                                \
    do {                                                                                           \
        pthread_mutex_unlock(m);                                                                   \
        HS_RANK_RELEASE((rank), (sub));                                                            \
    } while (0)

#endif
