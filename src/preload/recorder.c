/*
 * The recorder: initialisation, the sampled path's shared steps (decide, capture,
 * record), forgetting freed samples (and the running live estimate they keep), fork
 * handling and the exit dumps; the public API is in control.c.
 * Called from slowpath.c on application threads; never on the non-sampled path. The
 * stack is captured before any lock is taken; the tables never call malloc.
 */
#define _GNU_SOURCE
#include "core.h"
#include "bootstrap.h"
#include "dump.h"
#include "log.h"
#include "options.h"
#include "orphan.h"
#include "peak.h"
#include "recorder.h"
#include "sampler.h"
#include "threads.h"
#include "triggers.h"
#include "iothread.h"
#include "reach.h"
#include "attach.h"
#include "termsig.h"
#include "labels.h"
#include "leaks.h"
#include "lifetimes.h"
#include "livetab.h"
#include "modules.h"
#include "sandbox.h"
#include "spool.h"
#include "stacktab.h"
#include "symcache.h"
#include "trackers.h"
#include "unwind.h"

#include "heapsift.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread hs_tls_t hs_tls __attribute__((tls_model("initial-exec")));
int hs_state = HS_STATE_UNINIT;

/* A fake return address standing for "stack table full": the profile names it. */
const uintptr_t hs_overflow_pc = 1;
static int hs_insert_failed;
/* heapsift_set_active: 0 = take no new samples (frees of sampled objects still count). */
int hs_inactive;

static inline uint64_t recorder_rate(void)
{
    return __atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
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

/* Fork: take every table lock in rank order (core.h), so the child inherits them in a
 * consistent state; the dump lock is not taken (a dump may be long) but re-created in the
 * child, where no dump runs. The symbol cache, which outlives dumps, has a lock of its
 * own that is held only while it changes. */
static void recorder_fork_prepare(void)
{
    hs_reach_fork_prepare(); /* first: a look at new objects may take the patcher's lock */
    hs_trackers_lock();
    hs_stacktab_lock();
    hs_livetab_lock_all();
    hs_threads_lock();
    hs_triggers_fork_prepare();
    hs_labels_lock();
    hs_modules_lock();
    hs_symcache_lock();
}

static void recorder_fork_parent(void)
{
    hs_symcache_unlock();
    hs_modules_unlock();
    hs_labels_unlock();
    hs_triggers_fork_parent();
    hs_threads_unlock();
    hs_livetab_unlock_all();
    hs_stacktab_unlock();
    hs_trackers_unlock();
    hs_reach_fork_release();
}

/* The trigger thread is restarted last, once every table is usable again. */
static void recorder_fork_child(void)
{
    hs_symcache_unlock();
    hs_modules_unlock();
    hs_labels_unlock();
    hs_threads_after_fork_child();
    hs_livetab_unlock_all();
    hs_stacktab_unlock();
    hs_trackers_unlock();
    hs_reach_fork_release();
    hs_spool_after_fork_child();
    hs_sandbox_after_fork_child();
    hs_dump_after_fork();
    hs_orphan_after_fork();
    hs_iothread_after_fork();
    hs_spool_fork_copy();
    hs_triggers_fork_child();
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
    return pthread_atfork(recorder_fork_prepare, recorder_fork_parent, recorder_fork_child);
}

static int recorder_options_rc; /* hs_options_load's verdict, for HEAPSIFT_PROBE */

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
            hs_reach_recheck();
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
    hs_reach_recheck();         /* objects loaded since: their own allocators hooked (reach.c) */
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

/* The trigger thread, when a trigger needs one, starts here rather than in hs_init,
 * which may run inside the first malloc call: creating a thread there is best avoided. */
__attribute__((constructor)) static void recorder_ctor(void)
{
    hs_init();
    /* heapsift run's check before it starts the program (run.c): the options as the
     * library reads them, and the library loaded at all. Nothing else is started. */
    if (getenv("HEAPSIFT_PROBE"))
        _exit(recorder_options_rc == 0 ? 0 : 1);
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON) {
        /* One I/O thread for the files read here, ended before the program starts: it
         * then has no thread of heapsift's unless a trigger needs one. */
        hs_sandbox_init(); /* before any filter: opening a file later is what one refuses */
        hs_iothread_hold();
        hs_reach_detect();
        hs_spool_open();
        hs_termsig_install();
        hs_triggers_start();
        hs_iothread_release();
    }
}

/* The exit under a sandbox, a seccomp filter installed since start: writing a profile
 * would take calls it refuses and reports (the I/O thread's unshare, clone and getgroups,
 * then open), so none is made. The spool, mapped before the filter, is the profile; without
 * one the profile is lost, and that (only that) is said, in one line. */
static void recorder_exit_sandboxed(void)
{
    if (!(hs_dump_is_root() || hs_stacktab_count() > 1)) {
        hs_spool_discard(); /* no sample: no profile, as outside a sandbox */
        return;
    }
    if (hs_spool_sandboxed())
        return;
    hs_log("the profile of process %ld is lost: a seccomp filter installed after it started "
           "(a sandbox) refuses the calls that write files; under `heapsift run`, or with "
           "HEAPSIFT_SPOOL set, its spool keeps it",
           (long)getpid());
}

/* A second thread ending the process waits at most this long for the first one's exit
 * profiles (a dump hung by a lock that thread holds). */
#define HS_EXIT_WAIT_MS 20000

/* Waits for *word to become non-zero, at most HS_EXIT_WAIT_MS. */
static void recorder_wait_set(uint32_t *word)
{
    struct timespec ts = {0, 10 * 1000000};
    for (int i = 0; i < HS_EXIT_WAIT_MS / 10 && !__atomic_load_n(word, __ATOMIC_ACQUIRE); i++)
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* The exit profiles, written as usual, and the spool removed. */
static void recorder_exit_write(bool interrupted)
{
    /* Another process of the tree (a shell's helpers and subshells, a forked worker)
     * that holds no sample at all, its parent's included, writes no exit profile: `heapsift
     * run -- python3` through pyenv's shim wrote one per helper. Stack 0 is the overflow
     * stack, there from the start. The process the user started always writes. */
    if (hs_dump_is_root() || hs_stacktab_count() > 1) {
        hs_leaks_scan(); /* on this thread: its stack is read from its stack pointer up */
        unsigned how = interrupted ? HS_DUMP_INTERRUPTED : 0;
        hs_dump_ex(NULL, "heap", HS_DUMP_FINAL | HS_DUMP_CLOSE | how);
        if (hs_opt.peak)
            hs_dump_ex(NULL, "peak", HS_DUMP_FINAL | how);
    }
    hs_spool_exit();
}

void hs_exit_dumps(bool interrupted)
{
    static pid_t owner;       /* the process whose exit dumps started */
    static uint32_t finished; /* futex: they are written */
    pid_t me = getpid(), was = __atomic_load_n(&owner, __ATOMIC_ACQUIRE);
    if (was == me ||
        !__atomic_compare_exchange_n(&owner, &was, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Another thread writes them (a signal's, then an exit after all; two threads
         * ending the process at once): the process ends once they are written. */
        recorder_wait_set(&finished);
        return;
    }
    __atomic_store_n(&finished, 0, __ATOMIC_RELEASE); /* a forked child's own */
    hs_triggers_stop();
    if (hs_sandbox_entered())
        recorder_exit_sandboxed();
    else
        recorder_exit_write(interrupted);
    __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &finished, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void hs_exit_unprofiled(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON)
        hs_spool_discard();
}

void hs_exit_call(int threads)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    /* The program's own threads: heapsift's may be among those /proc/self/task lists. */
    if (threads - hs_orphan_own_alive() > 1)
        hs_termsig_exit_call();
}

/* The exit dumps: the live heap, then the kept peak. Trigger dumps are refused from the
 * first one on, so none runs while the process is being torn down. */
__attribute__((destructor)) static void recorder_dtor(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    hs_termsig_exiting(); /* a terminating signal's profiles under way: dies of it */
    hs_exit_dumps(false);
    hs_leaks_exit(); /* HEAPSIFT_LEAKS=error: may end the process with status 23 */
}
