/*
 * The recorder: initialisation (hs_init: the real allocator, the options, the tables, the
 * fork handlers of fork.c), the sampled path's shared steps (decide, capture, record),
 * forgetting freed samples (and the running live estimate they keep). The library's
 * start and exit are triggers/lifecycle.c's; the public API is api/control.c's.
 * Called from slowpath.c and the hooks on application threads; never on the non-sampled
 * path. The stack is captured before any lock is taken; the tables never call malloc.
 * Knows only the runtime, the unwinder and the recorder's own tables: what it calls of the
 * parts above (a look at objects loaded later) is registered (hs_recorder_on_sample).
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "runtime/sandbox.h"
#include "bootstrap.h"
#include "fork.h"
#include "lifetimes.h"
#include "livetab.h"
#include "modules.h"
#include "peak.h"
#include "recorder.h"
#include "sampler.h"
#include "spool.h"
#include "stacktab.h"
#include "trackers.h"
#include "runtime/hold.h"
#include "runtime/iothread.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/threads.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* A fake return address standing for "stack table full": the profile names it. */
const uintptr_t hs_overflow_pc = 1;
static int hs_insert_failed;
/* What each sample calls first, registered (reach.c: a look at objects loaded since). */
static void (*recorder_recheck_fn)(void);
/* heapsift_set_active: 0 = take no new samples (frees of sampled objects still count). */
int hs_inactive;

static inline uint64_t recorder_rate(void)
{
    return __atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
}

void hs_recorder_on_sample(void (*fn)(void))
{
    __atomic_store_n(&recorder_recheck_fn, fn, __ATOMIC_RELEASE);
}

/* One load when nothing is registered (no object loaded later can need a look). */
static inline void recorder_recheck(void)
{
    void (*fn)(void) = __atomic_load_n(&recorder_recheck_fn, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}

static inline bool recorder_active(void)
{
    return !__atomic_load_n(&hs_inactive, __ATOMIC_RELAXED);
}

static int recorder_find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t *range = data;
    uintptr_t me = (uintptr_t)&hs_init;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (me >= lo && me < lo + ph->p_memsz) {
            range[0] = lo;
            range[1] = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* Blanks libheapsift's entry out of LD_PRELOAD in place (no allocation), so programs
 * this one execs are not profiled. */
static void recorder_scrub_preload(void)
{
    Dl_info info;
    char *env = getenv("LD_PRELOAD");
    if (!env || !dladdr((void *)&hs_init, &info) || !info.dli_fname)
        return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (char *tok = env; *tok;) {
        size_t len = strcspn(tok, ": ");
        const char *slash = memrchr(tok, '/', len);
        const char *tb = slash ? slash + 1 : tok;
        if ((size_t)(tok + len - tb) == strlen(base) && memcmp(tb, base, strlen(base)) == 0)
            memset(tok, ' ', len);
        tok += len;
        tok += strspn(tok, ": ");
    }
}

static int recorder_setup(void)
{
    uintptr_t self[2] = {0, 0};
    int rc = hs_unwind_init(hs_opt.unwind);
    if (rc == 0)
        rc = hs_threads_init();
    if (rc == 0)
        rc = hs_stacktab_init(hs_opt.max_stacks);
    if (rc != 0)
        return rc;
    if (hs_lifetimes_init(hs_opt.max_stacks) != 0)
        hs_log("no memory for the lifetime table: profiles will carry no lifetimes");
    dl_iterate_phdr(recorder_find_self, self);
    hs_unwind_set_skip_range(self[0], self[1]);
    hs_unwind_warmup(); /* the unwinder's one-time set-up, now rather than mid-sample */
    /* Stack id 0 is the overflow stack, so it always has a slot. */
    hs_stacktab_record(&hs_overflow_pc, 1, 0, 0);
    return hs_fork_install();
}

static int recorder_options_rc; /* hs_options_load's verdict, for HEAPSIFT_PROBE */

int hs_init_options_rc(void)
{
    return recorder_options_rc;
}

void hs_init(void)
{
    int expected = HS_STATE_UNINIT;
    if (hs_attach_hold())
        return; /* injected by heapsift attach: heapsift_attach_init starts it (attach.c) */
    if (!__atomic_compare_exchange_n(&hs_state, &expected, HS_STATE_INITING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    hs_tls_t *t = &hs_tls;
    int next = HS_STATE_OFF;
    hs_guard_enter(t);
    hs_iothread_install(); /* from here on, heapsift's files never live in the program's table */
    if (hs_bootstrap_resolve() != 0) {
        hs_log("cannot find the real allocator; profiling disabled");
    } else if ((recorder_options_rc = hs_options_load()) == 0) {
        if (!hs_opt.children)
            recorder_scrub_preload();
        int rc = hs_opt.rate ? recorder_setup() : 0;
        if (rc != 0)
            hs_log("initialisation failed (%s); profiling disabled", strerror(-rc));
        else if (hs_opt.rate)
            next = HS_STATE_ON;
    }
    hs_guard_exit(t);
    __atomic_store_n(&hs_state, next, __ATOMIC_RELEASE);
}

/* A thread's first slow path: seed it, register it, draw its first sample point, and
 * judge this allocation (n bytes, already charged) against it. */
static bool recorder_new_thread(hs_tls_t *t, uint64_t n)
{
    uint64_t rate = recorder_rate();
    hs_sampler_seed_thread(t, hs_opt.seed);
    t->bytes += (uint64_t)(t->drawn - t->countdown); /* this allocation included */
    int64_t next = hs_sampler_next(t, rate) - (int64_t)n;
    t->drawn = t->countdown = next;
    t->rate = t->sample_rate = rate;
    hs_guard_enter(t); /* pthread_setspecific may allocate */
    hs_thread_register(t);
    hs_guard_exit(t);
    if (next > 0 || !recorder_active())
        return false;
    hs_countdown_reset(t, hs_sampler_next(t, rate));
    return true;
}

bool hs_sample_begin(hs_tls_t *t, uint64_t n)
{
    if (t->guard)
        return false; /* the countdown is restored when the guard is released */
    int s = __atomic_load_n(&hs_state, __ATOMIC_ACQUIRE);
    if (HS_UNLIKELY(s != HS_STATE_ON)) {
        if (s == HS_STATE_UNINIT) {
            hs_init();
            s = __atomic_load_n(&hs_state, __ATOMIC_ACQUIRE);
        }
        if (s == HS_STATE_OFF)
            hs_countdown_reset(t, INT64_MAX / 2);
        if (s != HS_STATE_ON)
            return false;
    }
    if (HS_UNLIKELY(t->rng == 0)) {
        bool sampled = recorder_new_thread(t, n);
        if (sampled) /* a thread's first sample may follow a dlopen (attach: the first call) */
            recorder_recheck();
        return sampled;
    }
    /* This allocation was judged at the rate its countdown was drawn with; the next
     * countdown uses the current one (heapsift_set_rate). */
    uint64_t rate = recorder_rate();
    t->sample_rate = t->rate ? t->rate : rate;
    t->rate = rate;
    hs_countdown_reset(t, hs_sampler_next(t, rate));
    if (!recorder_active())
        return false;
    recorder_recheck();         /* objects loaded since: their own allocators hooked (reach.c) */
    hs_unwind_dwarf_prefetch(); /* overlaps the real allocator's work (unwind_dwarf.c) */
    return true;
}

/* Inserts live entry e and adds it to the live estimate and its trackers. */
static void recorder_insert(const hs_live_t *old)
{
    hs_live_t c = *old, *e = &c;
    c.spool = hs_spool_put(e); /* in the spool before the program can see the block */
    if (hs_livetab_insert(e) != 0) {
        hs_spool_drop(c.spool);
        hs_log_once(hs_insert_failed, "live table full: some live samples are not tracked");
        return;
    }
    hs_live_add((int64_t)(e->weight * (double)e->size));
    hs_trackers_inserted(e);
}

void hs_sample_end(hs_tls_t *t, void *p, uint64_t n)
{
    if (!p)
        return;
    uintptr_t pcs[HS_MAX_DEPTH];
    uint32_t trackers;
    hs_guard_enter(t);
    __atomic_store_n(&t->samples, t->samples + 1, __ATOMIC_RELAXED); /* one writer */
    hs_sandbox_note_sample();
    size_t depth = hs_unwind_capture(pcs, hs_opt.depth);
    double w = hs_sampler_weight(n, t->sample_rate ? t->sample_rate : recorder_rate());
    uint32_t known = hs_stacktab_count();
    int32_t id =
        hs_stacktab_record_labeled(pcs, (uint32_t)depth, t->labels, w, w * (double)n, &trackers);
    if (id >= 0 && (uint32_t)id >= known) {
        hs_modules_note(pcs, depth, id); /* a new stack: remember its libraries */
        hs_spool_maps(pcs, depth);
    }
    if (id < 0)
        id = hs_stacktab_record(&hs_overflow_pc, 1, w, w * (double)n);
    if (id >= 0) {
        hs_live_t e = {
            .addr = (uintptr_t)p, .size = n, .weight = w, .t = hs_lifetime_now(), .stack_id = id};
        e.trackers = trackers;
        recorder_insert(&e);
    }
    hs_guard_exit(t);
}

/* Takes live entry e, just removed from the table, out of the live estimate and its
 * trackers. */
static void recorder_forgotten(const hs_live_t *e)
{
    hs_spool_drop(e->spool);
    hs_live_add(-(int64_t)(e->weight * (double)e->size));
    hs_trackers_removed(e);
}

void hs_forget(void *p)
{
    hs_live_t e;
    if (hs_livetab_remove((uintptr_t)p, &e)) {
        recorder_forgotten(&e);
        hs_lifetimes_freed(&e);
    }
}

bool hs_realloc_forget(void *p, hs_live_t *old)
{
    if (!hs_livetab_remove((uintptr_t)p, old))
        return false;
    recorder_forgotten(old);
    return true;
}

void hs_realloc_done(const hs_live_t *old, const void *q, size_t n)
{
    if (!q && n != 0)
        recorder_insert(old); /* failed: the old block is still there, still sampled */
    else
        hs_lifetimes_freed(old); /* the old block is gone: its lifetime ends */
}
