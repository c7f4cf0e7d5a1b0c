/*
 * The recorder's shared internals: the per-thread state (one initial-exec TLS block),
 * the real allocator's entry points, the reentrancy guard, global state and options.
 * Included by every file of libheapsift.so; nothing here is exported.
 *
 * Lock order (take in this order, release in reverse; fork.c takes them all):
 *   0. tracker registry  (trackers.c)  registering a tracker, which then takes 2 and 3
 *   1. hs_dump_lock      (dump.c)      one dump at a time
 *   2. stack table lock  (stacktab.c)
 *   3. live table shards (livetab.c)   in shard order
 *   4. thread registry   (threads.c)   a leaf: nothing is taken while holding it
 *   5. kept peak lock    (triggers.c)  a leaf: only copies under it, never allocates
 *   6. label interning   (labels.c)    a leaf: interning a new label set, never allocates
 *   7. module list       (modules.c)   a leaf: noting a new stack's libraries
 *   8. symbol cache      (symcache.c)  a leaf: held while a dump changes the cache
 * The stack is captured before any lock; no lock is held while calling the real
 * allocator, the unwinder or the symbolizer, except hs_dump_lock (and the symbol cache's,
 * across its own mallocs).
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
    uint8_t private_fds;                /* a heapsift thread with a descriptor table of its own */
    hs_tls_t *next, *prev;              /* thread registry (threads.c) */
    uint64_t rate;                      /* rate the countdown was drawn with; 0 = not drawn yet */
    uint64_t sample_rate;               /* rate the allocation being sampled was judged at */
    uint64_t saved_allocs, saved_frees; /* counters saved while the guard is held */
    uint32_t labels;                    /* label set of the samples it takes (labels.h) */
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

/* Options, read once by hs_options_load (options.c). */
typedef struct {
    const char *out; /* output path pattern */
    uint64_t rate;   /* mean bytes between samples; 0 off, 1 every allocation */
    uint64_t seed;   /* 0 = random */
    uint32_t depth;  /* frames per stack, 1..256 */
    uint32_t max_stacks;
    const char *unwind;    /* unwinder variant name */
    const char *symbolize; /* lines, full (+ separate debug files), names, none */
    bool children;         /* exec'd children stay profiled */
    bool verbose;          /* say where each profile went */
    /* Triggers (triggers.c); 0 = off. */
    uint32_t signal;         /* dump on this signal */
    uint64_t interval_bytes; /* dump every this many bytes allocated */
    uint64_t interval_ms;    /* dump every this many milliseconds */
    bool peak;               /* keep the live set at the highest live heap */
    bool dump_on_term;       /* write the exit profile on SIGINT/TERM/HUP (termsig.c) */
    uint32_t peak_growth;    /* dump at new peaks this many per-mille above the last */
    uint64_t peak_min_ms;    /* at most one peak dump per this many milliseconds */
    uint32_t oom_fraction;   /* dump at this many per-mille of the memory limit */
    uint32_t keep;           /* keep the newest N files of each kind */
    /* Leak report at exit (leaks.c). */
    const char *leaks;        /* "0", "1" or "error" (exit status 23 when leaks remain) */
    const char *suppressions; /* LSan-format suppressions file; NULL = none */
    uint32_t leaks_max;       /* sites listed; 0 = all */
    /* The HTTP endpoint (http.c); NULL = unset. */
    const char *http;          /* HOST:PORT to serve on */
    const char *http_portfile; /* file that gets the port */
    const char *http_token;    /* token the control paths require */
} hs_options_t;

extern hs_options_t hs_opt HS_HIDDEN;

/* Reads every HEAPSIFT_* variable. Returns 0, or -EINVAL after logging one line naming
 * the bad variable and value (the caller then turns profiling off). */
int hs_options_load(void);

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
/* The loaded object holding code address p (an opaque identity, NULL if none) and, when
 * name is not NULL, its file name ("" for the executable). _dl_find_object where glibc
 * has it (2.35), a lookup in a sorted array; else dladdr, which also scans the object's
 * symbol table for the nearest name (0.1 ms for libc's). Lock-free with the former. */
const void *hs_code_object(void *p, const char **name);
/* True if p is a block of the static bootstrap pool. */
bool hs_boot_owns(const void *p);
void hs_boot_free(void *p);
size_t hs_boot_size(const void *p);
/* The next operator new (for its new_handler/bad_alloc behaviour on failure). */
void *hs_real_sym(const char *name);

/* --- threads.c: heapsift's own threads ---------------------------------------------- */

#include <pthread.h>
#define HS_THREAD_STACK (8u << 20) /* reserved, not committed: pages count once touched */
typedef struct {
    pthread_t th;
    void *stack;
    size_t size;
} hs_thread_t;

/* Starts fn(arg) with every signal blocked, on a stack of its own (threads.c says why);
 * detached or not. 0 or -errno. */
int hs_thread_start(hs_thread_t *t, void *(*fn)(void *), void *arg, bool detach);
/* Joins a thread hs_thread_start made joinable, and unmaps its stack. */
void hs_thread_join(hs_thread_t *t);

/* --- fdtable.c ------------------------------------------------------------------- */

/* Gives the calling thread (one of heapsift's) a descriptor table of its own, emptied but
 * for /dev/null on 0, 1, 2. Returns 0 or -errno (it then shares the program's, as any
 * thread does). */
int hs_fd_private(void);
/* Whether unshare was refused once (then it always will be: a seccomp filter). */
bool hs_fd_refused(void);

/* Runs fn(arg) on a thread with a descriptor table of its own (a new one, joined before
 * this returns, unless the caller already has one), or on the caller where none can be
 * had. For work that reaches libraries making descriptor calls of their own. Guard held
 * or not; no lock of the table's is needed. */
void hs_fdtable_run(void (*fn)(void *), void *arg);

/* --- orphan.c ---------------------------------------------------------------------- */

/* Called by each of heapsift's own threads when it starts (at most 8 at once). */
void hs_orphan_register(void);
/* The same for a thread heapsift started without glibc (iothread.c), and its removal. */
void hs_orphan_register_tid(int tid);
void hs_orphan_forget(int tid);
/* In a forked child, before its own threads start: the parent's threads are not there,
 * and their slots would leave none for the child's (nor a grandchild's). */
void hs_orphan_after_fork(void);
/* True when the main thread has ended (pthread_exit) and no thread of the program's is
 * left but heapsift's own: they should end too, and the last one's end exits. */
bool hs_orphan_program_gone(void);

/* --- log.c: allocation-free, async-signal-safe ------------------------------------ */

/* Writes "heapsift: <formatted>\n" to stderr with one write(2). */
void hs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* write(2) on the program's descriptor 2, from any thread (fdtable.c's too). With kept,
 * a stderr the program has closed falls back to the I/O thread's copy (not from a signal
 * handler: that takes a lock). Bytes written, or -1 with errno. */
#include <sys/types.h>
ssize_t hs_stderr_write(const void *p, size_t n, bool kept);
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
/* Takes a live entry just removed from the live table out of the live estimate and its
 * trackers (realloc's removal). */
void hs_forgotten(const void *entry);
/* Re-inserts a live entry removed by a failed realloc. */
void hs_unforget(const void *entry);

/* heapsift_set_active(false) sets it: sampled paths then take no new sample. */
extern int hs_inactive HS_HIDDEN;

/* Initialises the library once. Safe to call from any allocation or the constructor. */
void hs_init(void);

/* --- dump.c ----------------------------------------------------------------------- */

/* Writes a profile to path (NULL: next name from the pattern). Returns 0 or -errno. */
int hs_dump(const char *path, const char *kind);
/* Sets the pid used by the path pattern after fork, and whether the pattern must be
 * made unique (forked or exec'd child without %p). */
void hs_dump_after_fork(void);

enum {
    HS_DUMP_FINAL = 1,   /* an exit dump: its pattern name gets no sequence number */
    HS_DUMP_TRIGGER = 2, /* a trigger's dump: refused (-ECANCELED) once closed */
    HS_DUMP_CLOSE = 4,   /* after this dump, refuse trigger dumps (the process exits) */
};
/* hs_dump with flags. kind "peak" writes the kept peak (hs_peak_copy). Failures are
 * logged once until a dump succeeds again. Holds the guard and the dump lock. */
int hs_dump_ex(const char *path, const char *kind, unsigned flags);
/* Writes a profile to fd: format 0 gzipped pprof, 1 uncompressed pprof. 0 or -errno. */
int hs_dump_fd(int fd, int format);
/* Profiles written and dumps failed since start. */
void hs_dump_counts(uint64_t *written, uint64_t *failed);
/* In-memory profiles (the HTTP endpoint). A base is a copy of every stack's four values
 * now; hs_dump_profile builds the profile of kind "heap" or "peak", or with a base the
 * difference between now and it (Go's delta profile: all four values subtracted). The
 * caller frees *out with hs_profile_free. 0 or -errno. */
typedef struct hs_dump_base hs_dump_base_t;
struct hs_profile;
int hs_dump_base_take(hs_dump_base_t **out);
void hs_dump_base_free(hs_dump_base_t *b);
int hs_dump_profile(const char *kind, const hs_dump_base_t *base, struct hs_profile **out);

/* --- triggers.c: the background thread and every dump trigger --------------------- */

/* Weighted live bytes of the sampled objects (sum of weight * size), kept by the
 * sampled alloc and free paths; the peak trigger resynchronises it with the table. */
extern int64_t hs_live_est HS_HIDDEN;
/* hs_live_est above this wakes the profiler thread (INT64_MAX: disarmed). */
extern int64_t hs_peak_arm HS_HIDDEN;
void hs_triggers_peak_poke(void) HS_COLD;

/* Sampled path only: adds d to the live estimate and wakes the peak trigger when armed.
 * Without HEAPSIFT_PEAK (fixed at start) nothing reads the estimate, and the add is
 * skipped: one line fewer that every sample and sampled free of every thread writes. */
static inline void hs_live_add(int64_t d)
{
    if (!hs_opt.peak)
        return;
    int64_t v = __atomic_add_fetch(&hs_live_est, d, __ATOMIC_RELAXED);
    if (HS_UNLIKELY(v > __atomic_load_n(&hs_peak_arm, __ATOMIC_RELAXED)))
        hs_triggers_peak_poke();
}

/* Installs the signal handler and starts the thread when a trigger needs it (once;
 * the caller must not hold the guard). Returns 0 or -errno (triggers then stay off). */
int hs_triggers_start(void);
/* At exit: no trigger dumps from now on; the thread is woken to leave (not joined). */
void hs_triggers_stop(void);
/* From termsig.c's handler (async-signal-safe): write the exit profiles now. */
void hs_triggers_wake_term(void);
/* Whether the trigger thread runs and will serve a wake-up. */
bool hs_triggers_running(void);
/* The exit profiles (the live heap, then the kept peak), once per process: from the
 * destructor, or from the trigger thread for a terminating signal (termsig.c). */
void hs_exit_dumps(void);
/* Whether this is the process the user started (not a forked child, nor a descendant
 * under `heapsift run`): the one that always writes its exit profile (dump.c). */
bool hs_dump_is_root(void);
/* Fork handlers (rank 5 lock; in the child: a new semaphore and thread). */
void hs_triggers_fork_prepare(void);
void hs_triggers_fork_parent(void);
void hs_triggers_fork_child(void);
/* dump.c, under the dump lock: a pattern-named file of this kind was written
 * (HEAPSIFT_KEEP removes the oldest beyond N). */
void hs_triggers_wrote(const char *kind, const char *path);
/* Considers the live set now as a peak (before writing the kept peak; guard held). */
void hs_triggers_peak_now(void);
/* Forgets the kept peak (heapsift_reset). */
void hs_triggers_peak_reset(void);

/* The kept peak: per stack id, alloc_objects, alloc_space, inuse_objects, inuse_space
 * as of the peak. */
typedef struct {
    double (*v)[4];
    uint32_t n;
    uint64_t samples;       /* live samples at the peak */
    double objects, bytes;  /* live totals at the peak */
    int64_t time_ns;        /* wall clock of the peak */
    hs_counters_t counters; /* exact counters at the peak */
} hs_peak_t;
/* Copies the kept peak into *out (out->v from malloc; the caller frees it; guard held).
 * Returns false when no peak was kept yet. */
bool hs_peak_copy(hs_peak_t *out);

/* --- control.c -------------------------------------------------------------------- */

/* The highest rate heapsift_set_rate ever set (0: never called). */
extern uint64_t hs_rate_max HS_HIDDEN;
/* The rate the live estimate's interval is computed at: the highest ever in effect. */
uint64_t hs_ci_rate(void);

/* --- accounting.c: what the process holds, for the profile comments ---------------- */

enum { HS_ALLOC_UNKNOWN, HS_ALLOC_GLIBC, HS_ALLOC_JEMALLOC };

typedef struct {
    /* /proc/self/smaps_rollup */
    uint64_t rss, anon, file, swap;
    /* /proc/self/smaps, resident bytes by kind of mapping */
    uint64_t heap;       /* the allocator's own mappings (glibc: [heap], arenas, mmapped
                          * chunks; jemalloc: stats.resident) */
    uint64_t stacks;     /* [stack] and thread stacks (an rw mapping above a guard page) */
    uint64_t code;       /* file-backed mappings: code, read-only data, mapped files */
    uint64_t other_anon; /* every other anonymous mapping: the program's own mmaps, data */
    /* the profiler: its mmap'd tables (inside other_anon) and what it keeps on the heap */
    uint64_t prof_maps, prof_heap;
    int allocator; /* HS_ALLOC_* */
    /* glibc (mallinfo2): arena, mmap, mmap_chunks, in_use, free, releasable;
     * jemalloc (mallctl stats.*): allocated, active, metadata, resident, retained, mapped */
    uint64_t a[6];
} hs_acct_t;

/* Reads /proc and the allocator's statistics. Guard held; no lock held (mallinfo2 takes
 * the allocator's). Fields it cannot read stay 0. */
void hs_acct_read(hs_acct_t *a);
/* The same from maps, the text of /proc/self/maps the caller read just before (NULL: read
 * it here), in own bytes of its own memory, counted as the profiler's. */
void hs_acct_read_maps(hs_acct_t *a, const char *maps, size_t len, uint64_t own);
/* Formats the accounting as profile comments, one per line; returns the count. */
int hs_acct_format(const hs_acct_t *a, char lines[][200], int max);
/* Fills a->prof_maps and a->prof_heap (and takes prof_maps out of a->other_anon). */
void hs_acct_profiler(hs_acct_t *a);
/* The process's resident set size in bytes (/proc/self/statm), 0 if unreadable. */
uint64_t hs_acct_rss_fast(void);
/* Bytes the trigger thread keeps on the heap (the kept peak, the kept file names). */
uint64_t hs_triggers_mem(void);

#endif
