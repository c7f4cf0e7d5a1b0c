/*
 * What the hot path shares, and nothing else: the per-thread state (one initial-exec TLS
 * block), the real allocator's entry points, the global state, the reentrancy guard and
 * the HS_* macros; plus the lock-rank table every lock of the library is listed in. Each
 * module declares its own API in its own header (options.h, log.h, recorder.h, dump.h,
 * ...). Included by every file of libheapsift.so; nothing here is exported.
 *
 * Lock order (take in increasing rank, release in reverse; record/fork.c's fork handlers
 * take the table locks, HS_RANK_TRACKERS to HS_RANK_SYMCACHE but the dump lock and the
 * pins, in this order). Taking a lock of a rank not above every rank the thread holds is
 * a violation, which builds with HS_DEBUG_CHECKS catch (debugcheck.h); the live table's
 * shards share a rank and are taken in shard order.
 *   HS_RANK_PATCH      patch.c       installing or removing a patch, at start (or attach),
 *                                    under the guard: no other lock is taken under it
 *   HS_RANK_HTTP_GATE  http.c        around each call into libmicrohttpd, whose request
 *                                    handlers dump (the dump lock and what it takes)
 *   HS_RANK_TRACKERS   trackers.c    registering a tracker, which then takes the stack
 *                                    table's and the live table's
 *   HS_RANK_DUMP       dump.c        one dump at a time; held across the real allocator,
 *                                    the symbolizer and file I/O
 *   HS_RANK_STACKTAB   stacktab.c    interning a new stack
 *   HS_RANK_LIVETAB    livetab.c     the live table's shards, in shard order
 *   HS_RANK_PINS       livetab.c     the filter's pinned addresses, under a shard's lock
 *   HS_RANK_THREADS    threads.c     thread registry, a leaf
 *   HS_RANK_PEAK       peak.c        the kept peak, a leaf: only copies under it
 *   HS_RANK_LABELS     labels.c      label interning, a leaf; never allocates
 *   HS_RANK_MODULES    modules.c     module list, a leaf: noting a new stack's libraries
 *   HS_RANK_SYMCACHE   symcache.c    symbol cache, held while a dump changes it (its own
 *                                    mallocs and file reads under it)
 *   HS_RANK_SPOOL      spool.c       appending a new stack to the spool (under the stack
 *                                    table's lock), or its mappings (under no other: the
 *                                    maps reader allocates and reads files)
 *   HS_RANK_IOTHREAD   iothread.c    one call in the I/O thread, a leaf: any file
 *                                    operation may take it, under any other lock
 * The stack is captured before any lock; no lock is held while calling the real
 * allocator, the unwinder or the symbolizer, except the dump lock and the symbol cache's
 * (across its own mallocs), and the HTTP gate (the handlers' dumps).
 */
#ifndef HS_CORE_H
#define HS_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_EXPORT __attribute__((visibility("default")))
/* On extern declarations too, so that the compiler addresses them PC-relative. */
#define HS_HIDDEN __attribute__((visibility("hidden")))
#define HS_COLD __attribute__((noinline, cold))

/* The library's constructors, in the order they run (lower first; all before the
 * unprioritised ones): first the registrations of the parts above the recorder (what it
 * and the other lower parts call without knowing them: fork hooks, wakers), lowest part
 * first; then the ones that start things, in the order the link gave them before the
 * folders (dump, HTTP, leaks, output path, then the library's start). */
#define HS_CTOR(prio) __attribute__((constructor(prio)))
#define HS_CTOR_REACH 201    /* reach/reach.c: its fork hook */
#define HS_CTOR_OUTPUT 202   /* output/dump.c, symcache.c: fork hooks; the start time */
#define HS_CTOR_TRIGGERS 203 /* triggers/triggers.c: peak waker, files kept, fork restart */
#define HS_CTOR_HTTP 204     /* serve/http.c: the endpoint */
#define HS_CTOR_LEAKS 205    /* leaks/leaks.c: suppressions, from the start directory */
#define HS_CTOR_OUTPATH 206  /* runtime/outpath.c: the start directory */
#define HS_CTOR_START 207    /* triggers/lifecycle.c: hs_init and what the library starts */

/* Per-thread state. Zero-initialised: countdown 0 sends a new thread's first
 * allocation to the slow path, which sets the thread up. */
typedef struct hs_tls hs_tls_t;
struct hs_tls {
    int64_t countdown; /* bytes left before the next sample; <= 0: slow path */
    uint64_t allocs;   /* allocation calls (exact; the fast paths count them) */
    uint64_t frees;    /* free calls of non-NULL pointers (exact) */
    int64_t drawn;     /* countdown value at its last reset */
    uint64_t bytes;    /* bytes requested before that reset (exact) */
    int64_t saved;     /* countdown saved while the guard is held */
    uint64_t rng;      /* xorshift64* state; 0 = thread not set up yet */
    uint32_t guard;    /* reentrancy depth: > 0 means "profiler code, forward" */
    uint8_t resolving; /* this thread is looking up the real functions */
    uint8_t registered;
    uint8_t private_fds;   /* a heapsift thread with a descriptor table of its own (HS_FDS_*) */
    uint8_t boot_only;     /* allocate from blocks set aside (triggers.c) */
    hs_tls_t *next, *prev; /* thread registry (threads.c) */
    uint64_t rate;         /* rate the countdown was drawn with; 0 = not drawn yet */
    uint64_t sample_rate;  /* rate the allocation being sampled was judged at */
    uint64_t saved_allocs, saved_frees; /* counters saved while the guard is held */
    uint32_t labels;                    /* label set of the samples it takes (labels.h) */
    int32_t err_pin;                    /* log.c: its reference to the program's 2, plus 1 */
    int64_t err_pin_ms;                 /* when it was taken (CLOCK_MONOTONIC) */
    uint64_t samples; /* allocations sampled (the sampled path; summed by threads.c) */
#ifdef HS_DEBUG_CHECKS
#define HS_HELD_MAX 96
    uint32_t nheld; /* locks held (debugcheck.h), after every field the hot path reads */
    uint16_t held[HS_HELD_MAX]; /* their ranks, increasing */
#endif
};

/* hs_tls.private_fds: a table of its own, in a thread that runs for as long as heapsift
 * does, or in a job's thread (fdtable.c) while the program thread that asked waits. */
#define HS_FDS_OWN 1
#define HS_FDS_JOB 2

extern __thread hs_tls_t hs_tls __attribute__((tls_model("initial-exec")));

/* The next allocator in symbol resolution. Starts as bootstrap trampolines that look the
 * real functions up on first use (bootstrap.c). */
typedef struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    /* operator delete(void *, size_t) and delete[]: the allocator's own when it defines
     * them (jemalloc and tcmalloc free a block of known size without looking it up), else
     * trampolines to free. */
    void (*sized_delete)(void *, size_t);
    void (*sized_delete_array)(void *, size_t);
    /* operator new and new[]: the allocator's own when it defines them without coming
     * back through malloc (decided at the first call, bootstrap.c), else malloc with
     * operator new's failure path. */
    void *(*new_plain)(size_t);
    void *(*new_array)(size_t);
} hs_real_t;

extern hs_real_t hs_real HS_HIDDEN;

/* Global state machine. */
enum {
    HS_STATE_UNINIT = 0, /* nothing done yet */
    HS_STATE_INITING,    /* one thread is in hs_init */
    HS_STATE_ON,         /* sampling */
    HS_STATE_OFF,        /* hooks forward only: rate 0, bad option, failure, or after exit */
};
extern int hs_state HS_HIDDEN;

/* Lock ranks: the table above. */
enum {
    HS_RANK_PATCH = 1,
    HS_RANK_HTTP_GATE,
    HS_RANK_TRACKERS,
    HS_RANK_DUMP,
    HS_RANK_STACKTAB,
    HS_RANK_LIVETAB,
    HS_RANK_PINS,
    HS_RANK_THREADS,
    HS_RANK_PEAK,
    HS_RANK_LABELS,
    HS_RANK_MODULES,
    HS_RANK_SYMCACHE,
    HS_RANK_SPOOL,
    HS_RANK_IOTHREAD,
};

/* --- atomics ---------------------------------------------------------------------- */

/* Adds d to *p atomically (compare-and-swap: there is no atomic add of doubles). */
static inline void hs_atomic_add_double(double *p, double d)
{
    double v, n;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    do
        n = v + d;
    while (!__atomic_compare_exchange(p, &v, &n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* --- guard ------------------------------------------------------------------------ */

/* Enter/leave profiler code on this thread. Allocations inside are forwarded unsampled
 * and do not consume the thread's countdown. */
static inline void hs_guard_enter(hs_tls_t *t)
{
    if (t->guard++ == 0) {
        t->saved = t->countdown;
        t->saved_allocs = t->allocs;
        t->saved_frees = t->frees;
    }
}

/* The profiler's own allocations are undone from the counters, so they count only the
 * program's. */
static inline void hs_guard_exit(hs_tls_t *t)
{
    if (--t->guard == 0) {
        t->countdown = t->saved;
        t->allocs = t->saved_allocs;
        t->frees = t->saved_frees;
    }
}

/* Starts a new countdown: the bytes charged since the last reset move to t->bytes, so
 * t->bytes + (t->drawn - t->countdown) is always the exact total requested. */
static inline void hs_countdown_reset(hs_tls_t *t, int64_t next)
{
    t->bytes += (uint64_t)(t->drawn - t->countdown);
    t->drawn = next;
    t->countdown = next;
}

#endif
