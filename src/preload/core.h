/*
 * The recorder's shared internals: the per-thread state (one initial-exec TLS block),
 * the real allocator's entry points, the reentrancy guard, global state and options.
 * Included by every file of libheapsift.so; nothing here is exported.
 *
 * Lock order (take in this order, release in reverse; fork.c takes them all):
 *   1. hs_dump_lock      (dump.c)      one dump at a time
 *   2. stack table lock  (stacktab.c)
 *   3. live table shards (livetab.c)   in shard order
 *   4. thread registry   (threads.c)   a leaf: nothing is taken while holding it
 * The stack is captured before any lock; no lock is held while calling the real
 * allocator, the unwinder or the symbolizer, except hs_dump_lock.
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
    hs_tls_t *next, *prev; /* thread registry (threads.c) */
};

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

/* Options, read once by hs_options_load (options.c). */
typedef struct {
    const char *out; /* output path pattern */
    uint64_t rate;   /* mean bytes between samples; 0 off, 1 every allocation */
    uint64_t seed;   /* 0 = random */
    uint32_t depth;  /* frames per stack, 1..256 */
    uint32_t max_stacks;
    const char *unwind; /* unwinder variant name */
    bool children;      /* exec'd children stay profiled */
    bool verbose;       /* say where each profile went */
} hs_options_t;

extern hs_options_t hs_opt HS_HIDDEN;

/* Reads every HEAPSIFT_* variable. Returns 0, or -EINVAL after logging one line naming
 * the bad variable and value (the caller then turns profiling off). */
int hs_options_load(void);

/* --- guard ------------------------------------------------------------------------ */

/* Enter/leave profiler code on this thread. Allocations inside are forwarded unsampled
 * and do not consume the thread's countdown. */
static inline void hs_guard_enter(hs_tls_t *t)
{
    if (t->guard++ == 0)
        t->saved = t->countdown;
}

static inline void hs_guard_exit(hs_tls_t *t)
{
    if (--t->guard == 0)
        t->countdown = t->saved;
}

/* Starts a new countdown: the bytes charged since the last reset move to t->bytes, so
 * t->bytes + (t->drawn - t->countdown) is always the exact total requested. */
static inline void hs_countdown_reset(hs_tls_t *t, int64_t next)
{
    t->bytes += (uint64_t)(t->drawn - t->countdown);
    t->drawn = next;
    t->countdown = next;
}

/* --- threads.c: registry of threads and the exact counters ------------------------ */

typedef struct {
    uint64_t allocs, frees, bytes; /* calls and requested bytes, all threads */
    uint64_t threads;              /* threads registered now */
} hs_counters_t;

/* Registers t (its counters are then summed by hs_counters_read; its exit folds them
 * into the totals). Call once per thread, from the slow path, outside any lock. */
void hs_thread_register(hs_tls_t *t);
/* Sums every thread's counters; reads other threads' counters racily (each word is
 * read atomically, the sum is as of "about now"). */
void hs_counters_read(hs_counters_t *out);
/* Sets the registry up (pthread key). 0 or -errno. */
int hs_threads_init(void);
/* Fork handlers: the registry lock; in the child, other threads are folded in. */
void hs_threads_lock(void);
void hs_threads_unlock(void);
void hs_threads_after_fork_child(void);

/* --- bootstrap.c ------------------------------------------------------------------ */

/* Looks the real functions up (idempotent, thread-safe). Returns 0 or -ENOENT. */
int hs_bootstrap_resolve(void);
/* True if p is a block of the static bootstrap pool. */
bool hs_boot_owns(const void *p);
void hs_boot_free(void *p);
size_t hs_boot_size(const void *p);
/* The next operator new (for its new_handler/bad_alloc behaviour on failure). */
void *hs_real_sym(const char *name);

/* --- log.c: allocation-free, async-signal-safe ------------------------------------ */

/* Writes "heapsift: <formatted>\n" to stderr with one write(2). */
void hs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, but only the first call per call site (pass a static flag). */
#define hs_log_once(flag, ...)                                                                     \
    do {                                                                                           \
        if (!__atomic_exchange_n(&(flag), 1, __ATOMIC_RELAXED))                                    \
            hs_log(__VA_ARGS__);                                                                   \
    } while (0)

/* --- sampler.c -------------------------------------------------------------------- */

/* Next countdown for thread t: floor(Exp(mean rate)) + 1, so an object of s bytes is
 * sampled with probability exactly 1 - exp(-s/rate). */
int64_t hs_sampler_next(hs_tls_t *t, uint64_t rate);
/* Objects a sample of s bytes stands for: 1/(1-exp(-s/rate)); 1 when rate is 1. */
double hs_sampler_weight(uint64_t size, uint64_t rate);
/* Seeds t's generator from the seed option (or entropy) and a per-thread counter. */
void hs_sampler_seed_thread(hs_tls_t *t, uint64_t seed);

/* --- recorder.c: the slow paths' shared steps ------------------------------------- */

/* Called once the thread's countdown went <= 0 for an allocation of n bytes. Sets the
 * thread (and, the first time, the library) up; returns true when this allocation is to
 * be sampled. Never allocates itself except through hs_init under the guard. */
bool hs_sample_begin(hs_tls_t *t, uint64_t n);
/* Records a sampled allocation p of n requested bytes (no-op when p is NULL). */
void hs_sample_end(hs_tls_t *t, void *p, uint64_t n);
/* Forgets p if it was sampled. Must run before the real free of p. */
void hs_forget(void *p);
/* Re-inserts a live entry removed by a failed realloc. */
void hs_unforget(const void *entry);

/* Initialises the library once. Safe to call from any allocation or the constructor. */
void hs_init(void);

/* --- dump.c ----------------------------------------------------------------------- */

/* Writes a profile to path (NULL: next name from the pattern). Returns 0 or -errno. */
int hs_dump(const char *path, const char *kind);
/* Sets the pid used by the path pattern after fork, and whether the pattern must be
 * made unique (forked or exec'd child without %p). */
void hs_dump_after_fork(void);

#endif
