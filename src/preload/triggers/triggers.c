/*
 * Triggers: the profiler's one background thread and every reason it dumps: a signal
 * (HEAPSIFT_SIGNAL), bytes allocated (HEAPSIFT_INTERVAL_BYTES), time
 * (HEAPSIFT_INTERVAL_SECONDS), a new peak of live heap (HEAPSIFT_PEAK, _GROWTH,
 * _MIN_SECONDS), memory close to its limit (HEAPSIFT_OOM_FRACTION); plus HEAPSIFT_KEEP,
 * which removes the oldest files of each kind. The thread blocks every signal and holds
 * the reentrancy guard for life, so what it allocates is never sampled. The application's
 * threads only ever touch it through a semaphore: the signal handler and the sampled path
 * (when the live estimate passes the armed peak) set a pending bit and write to it,
 * which is async-signal-safe; a storm of signals coalesces into the bits. The wake-up is a
 * semaphore in memory (sem_post is async-signal-safe), not a descriptor: a daemon that
 * closes every descriptor and reopens files must never receive the profiler's writes. Never called
 * on the non-sampled path. The kept peak itself (the copy of the live set per stack, and the
 * estimate that wakes this thread for it) is peak.c's.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "base/monoclock.h"
#include "runtime/core.h"
#include "output/dump.h"
#include "runtime/fdtable.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/orphan.h"
#include "record/peak.h"
#include "runtime/threads.h"
#include "triggers.h"
#include "base/fdio.h"
#include "termsig.h"
#include "record/bootstrap.h"
#include "runtime/iothread.h"
#include "output/accounting.h"
#include "record/fork.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { TRIG_SIGNAL = 1, TRIG_PEAK = 2, TRIG_STOP = 4, TRIG_TERM = 8 };

#define TRIG_POLL_MS 20     /* bytes and memory-limit polling period */
#define TRIG_LIMITS_MS 1000 /* how often the memory limits are re-read */

static sem_t trig_sem;
static int trig_sem_ok;
static unsigned trig_pending;
static int trig_started, trig_stopping, trig_running;
static pid_t trig_pid;             /* the process the thread runs in (a clone without fork handlers
                                    * inherits trig_running, not the thread) */
static struct sigaction trig_prev; /* the handler we replaced, chained to */
/* heapsift detach (hs_triggers_pause) ended the thread; a re-attach starts it again. */
static int trig_paused;
static bool trig_signal_ours; /* trig_prev holds what the program had */
static pid_t trig_tid;        /* the thread's task id, to wait for its end */
static hs_thread_t trig_th;   /* its stack, reused by a restart */

/* Thread-only state: next deadlines and thresholds. */
static struct {
    uint64_t next_bytes;
    int64_t next_tick_ms;
    int64_t peak_dumped_at_ms;
    double peak_dumped; /* live bytes of the last peak dump, 0 = none */
    bool oom_armed;
    int64_t oom_retry_ms, limits_at_ms;
} trig;

/* HEAPSIFT_KEEP: the newest paths written, per kind; under the dump lock. */
#define TRIG_KINDS 8
static struct {
    char kind[16];
    char **paths; /* ring of hs_opt.keep entries */
    uint32_t n, head;
} keep[TRIG_KINDS];

/* Async-signal-safe: an atomic or and a sem_post (which fails harmlessly with
 * EOVERFLOW under a storm). */
static void trig_wake(unsigned why)
{
    __atomic_fetch_or(&trig_pending, why, __ATOMIC_RELEASE);
    if (__atomic_load_n(&trig_sem_ok, __ATOMIC_ACQUIRE))
        sem_post(&trig_sem);
}

static void trig_on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    trig_wake(TRIG_SIGNAL);
    errno = saved;
    if (trig_prev.sa_flags & SA_SIGINFO) {
        if (trig_prev.sa_sigaction)
            trig_prev.sa_sigaction(sig, si, uc);
    } else if (trig_prev.sa_handler != SIG_DFL && trig_prev.sa_handler != SIG_IGN &&
               trig_prev.sa_handler) {
        trig_prev.sa_handler(sig);
    }
}

void hs_triggers_wake_term(void)
{
    trig_wake(TRIG_TERM);
}

bool hs_triggers_running(void)
{
    return __atomic_load_n(&trig_running, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&trig_paused, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&trig_pid, __ATOMIC_ACQUIRE) == getpid();
}

/* The live estimate passed the armed peak (record/peak.c has disarmed it). */
static void trig_peak_wake(void)
{
    trig_wake(TRIG_PEAK);
}

/* The triggers the thread must run for from the start. The exit profiles of a terminating
 * signal or an _exit (termsig.c) need it only then: it is started then
 * (hs_triggers_start_term), so that a program that asked for nothing has no thread of
 * heapsift's (Chromium's zygote, single-threaded by design, checks /proc/self/task). */
static bool trig_needs_thread(void)
{
    return hs_opt.signal || hs_opt.interval_bytes || hs_opt.interval_ms || hs_opt.peak ||
           hs_opt.oom_fraction;
}

/* A trigger's dump; failures are logged once by dump.c and retried at the next one. */
static int trig_dump(const char *kind)
{
    if (__atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&trig_paused, __ATOMIC_ACQUIRE))
        return -ECANCELED;
    return hs_dump_ex(NULL, kind, HS_DUMP_TRIGGER);
}

/* ---- peak dumps (the kept peak itself is peak.c's) ------------------------------- */

/* HEAPSIFT_PEAK_GROWTH: a dump once the kept peak grew enough since the last one, at
 * most one per HEAPSIFT_PEAK_MIN_SECONDS. Returns the ms until it may be due. */
static int64_t peak_maybe_dump(int64_t now)
{
    double b = (double)hs_peak_bytes();
    if (!hs_opt.peak_growth || b <= 0)
        return -1;
    if (b <= trig.peak_dumped * (1.0 + hs_opt.peak_growth / 1000.0))
        return -1;
    int64_t wait = trig.peak_dumped_at_ms + (int64_t)hs_opt.peak_min_ms - now;
    if (trig.peak_dumped > 0 && wait > 0)
        return wait;
    if (trig_dump("peak") == 0) {
        trig.peak_dumped = b;
        trig.peak_dumped_at_ms = now;
    }
    return -1;
}

/* ---- memory limits (HEAPSIFT_OOM_FRACTION) ----------------------------------------- */

static struct {
    char dir[1024];    /* the cgroup v2 directory with the tightest limit */
    uint64_t cg_limit; /* its memory.max or memory.high; 0 = none */
    uint64_t as_limit; /* RLIMIT_AS; 0 = none */
    int logged_none;
} lim;

/* Reads a small file into buf, NUL-terminated. Returns its length or -1. */
static ssize_t trig_read(const char *path, char *buf, size_t cap)
{
    int fd = hs_open_high(path, O_RDONLY, 0);
    ssize_t n = -1;
    if (fd < 0)
        return -1;
    n = hs_fd_read(fd, buf, cap - 1);
    hs_fd_close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* A cgroup memory file: a number, or "max" (no limit: 0). */
static uint64_t trig_read_u64(const char *dir, const char *file)
{
    char path[1100], buf[64];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (trig_read(path, buf, sizeof(buf)) <= 0 || buf[0] < '0' || buf[0] > '9')
        return 0;
    return strtoull(buf, NULL, 10);
}

/* The cgroup v2 path of this process ("0::/path" in /proc/self/cgroup) under the
 * unified hierarchy's mount point; false without cgroup v2 (or if it does not fit). */
static bool trig_cgroup_dir(char *dir, size_t cap)
{
    char buf[2048];
    const char *base = NULL;
    if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
        base = "/sys/fs/cgroup";
    else if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0)
        base = "/sys/fs/cgroup/unified";
    if (!base || trig_read("/proc/self/cgroup", buf, sizeof(buf)) <= 0)
        return false;
    char *line = strstr(buf, "0::");
    if (!line || (line != buf && line[-1] != '\n'))
        return false;
    line += 3;
    line[strcspn(line, "\n")] = '\0';
    int len = snprintf(dir, cap, "%s%s", base, strcmp(line, "/") == 0 ? "" : line);
    return len > 0 && (size_t)len < cap; /* a truncated path would name another cgroup */
}

/* The tightest memory.max/memory.high from this cgroup up to the root, and RLIMIT_AS. */
static void oom_read_limits(void)
{
    char dir[1024];
    struct rlimit rl;
    lim.cg_limit = 0;
    if (trig_cgroup_dir(dir, sizeof(dir))) {
        size_t root = strlen(strstr(dir, "/unified") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup");
        for (;;) {
            uint64_t m = trig_read_u64(dir, "memory.max");
            uint64_t h = trig_read_u64(dir, "memory.high");
            uint64_t v = m && (!h || m < h) ? m : h;
            if (v && (!lim.cg_limit || v < lim.cg_limit)) {
                lim.cg_limit = v;
                snprintf(lim.dir, sizeof(lim.dir), "%s", dir);
            }
            char *slash = strrchr(dir, '/');
            if (strlen(dir) <= root || !slash)
                break;
            *slash = '\0';
        }
    }
    lim.as_limit = 0;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        lim.as_limit = rl.rlim_cur;
    if (!lim.cg_limit && !lim.as_limit && !lim.logged_none && hs_opt.verbose) {
        lim.logged_none = 1;
        hs_log("HEAPSIFT_OOM_FRACTION: no memory limit (cgroup v2 memory.max/memory.high, "
               "RLIMIT_AS) yet; watching for one");
    }
}

/* The highest use/limit ratio over the limits found (cgroup: memory.current; address
 * space: VmSize from /proc/self/statm). */
static double oom_usage(void)
{
    double f = 0;
    char buf[256];
    if (lim.cg_limit) {
        uint64_t cur = trig_read_u64(lim.dir, "memory.current");
        f = (double)cur / (double)lim.cg_limit;
    }
    if (lim.as_limit && trig_read("/proc/self/statm", buf, sizeof(buf)) > 0) {
        double vm = (double)strtoull(buf, NULL, 10) * (double)sysconf(_SC_PAGESIZE);
        if (vm / (double)lim.as_limit > f)
            f = vm / (double)lim.as_limit;
    }
    return f;
}

/* Dumps once on crossing the fraction; re-arms below 95% of it. A failed dump is retried
 * at most once a second while memory stays above. */
static void oom_check(int64_t now)
{
    if (now - trig.limits_at_ms >= TRIG_LIMITS_MS) {
        oom_read_limits();
        trig.limits_at_ms = now;
    }
    double thr = hs_opt.oom_fraction / 1000.0;
    double f = oom_usage();
    if (f >= thr) {
        if (trig.oom_armed && now >= trig.oom_retry_ms) {
            if (trig_dump("oom") == 0)
                trig.oom_armed = false;
            else
                trig.oom_retry_ms = now + 1000;
        }
    } else if (f < thr * 0.95) {
        trig.oom_armed = true;
    }
}

/* ---- HEAPSIFT_KEEP ------------------------------------------------------------------ */

/* dump.c, under the dump lock: a pattern-named file of this kind was written
 * (HEAPSIFT_KEEP removes the oldest beyond N). */
static void trig_wrote(const char *kind, const char *path)
{
    hs_assert_held(HS_RANK_DUMP);
    uint32_t cap = hs_opt.keep;
    int k = -1;
    if (!cap)
        return;
    for (int i = 0; i < TRIG_KINDS && k < 0; i++)
        if (!keep[i].kind[0] || strcmp(keep[i].kind, kind) == 0)
            k = i;
    if (k < 0)
        return;
    snprintf(keep[k].kind, sizeof(keep[k].kind), "%s", kind);
    if (!keep[k].paths && !(keep[k].paths = calloc(cap, sizeof(char *))))
        return;
    for (uint32_t i = 0; i < keep[k].n; i++)
        if (strcmp(keep[k].paths[(keep[k].head + i) % cap], path) == 0)
            return; /* rewritten in place: still one file */
    char *copy = strdup(path);
    if (!copy)
        return;
    if (keep[k].n == cap) {
        char **oldest = &keep[k].paths[keep[k].head];
        unlink(*oldest);
        free(*oldest);
        *oldest = copy;
        keep[k].head = (keep[k].head + 1) % cap;
    } else {
        keep[k].paths[(keep[k].head + keep[k].n++) % cap] = copy;
    }
}

/* ---- the thread --------------------------------------------------------------------- */

static void trig_check_bytes(void)
{
    hs_counters_t k;
    uint64_t step = hs_opt.interval_bytes;
    hs_counters_read(&k);
    if (k.bytes < trig.next_bytes)
        return;
    trig_dump("bytes");
    trig.next_bytes += step * ((k.bytes - trig.next_bytes) / step + 1);
}

static void trig_check_time(int64_t now)
{
    int64_t step = (int64_t)hs_opt.interval_ms;
    if (now < trig.next_tick_ms)
        return;
    trig_dump("interval");
    trig.next_tick_ms += step * ((now - trig.next_tick_ms) / step + 1);
}

/* One round: handle what woke the thread, poll what needs polling; returns the poll
 * timeout in ms until the next round (-1: only a wake-up). */
static int trig_round(unsigned why, int64_t now)
{
    int64_t t = -1;
    if (why & TRIG_SIGNAL)
        trig_dump("signal");
    if (hs_opt.interval_bytes)
        trig_check_bytes();
    if (hs_opt.interval_ms) {
        trig_check_time(now);
        t = trig.next_tick_ms - now;
    }
    if (hs_opt.oom_fraction)
        oom_check(now);
    if (hs_opt.peak) {
        if (why & TRIG_PEAK) {
            hs_peak_check();
            hs_peak_rearm();
        }
        int64_t w = peak_maybe_dump(now);
        if (w >= 0 && (t < 0 || w < t))
            t = w;
    }
    if ((hs_opt.interval_bytes || hs_opt.oom_fraction) && (t < 0 || t > TRIG_POLL_MS))
        t = TRIG_POLL_MS;
    return t > 1000000 ? 1000000 : (int)t;
}

/* The thread's end at a detach: what it holds is let go, as if it had never run. */
static void trig_leave_paused(bool held)
{
    if (held)
        hs_iothread_release();
    hs_orphan_forget((int)syscall(SYS_gettid));
}

static void *trig_main(void *arg)
{
    (void)arg;
    hs_guard_enter(&hs_tls); /* for life: what this thread allocates is never sampled */
    pthread_setname_np(pthread_self(), "heapsift");
    /* The profiles it writes are then opened, written and closed in its own table, where
     * no close-all loop or reused number of the program's can reach them; without one,
     * in the I/O thread, kept for as long as this one runs. */
    bool held = hs_fd_private() != 0;
    if (held)
        hs_iothread_hold();
    __atomic_store_n(&trig_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    int64_t now = hs_mono_ms();
    if (!trig.next_bytes)
        trig.next_bytes = hs_opt.interval_bytes;
    trig.next_tick_ms = now + (int64_t)hs_opt.interval_ms;
    trig.oom_armed = true;
    trig.limits_at_ms = now - TRIG_LIMITS_MS;
    hs_orphan_register();
    hs_stderr_pin_refresh(); /* and each second: its lines to a log file need no wait */
    int64_t orphan_at = now + 1000;
    for (;;) {
        unsigned why = __atomic_exchange_n(&trig_pending, 0, __ATOMIC_ACQ_REL);
        if (why & TRIG_TERM) {
            hs_termsig_dump(); /* the program ends by the signal right after */
            break;
        }
        if (__atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE))
            break;
        if (__atomic_load_n(&trig_paused, __ATOMIC_ACQUIRE)) {
            trig_leave_paused(held); /* heapsift detach: this thread ends, the process runs */
            break;
        }
        now = hs_mono_ms();
        int timeout = trig_round(why, now);
        /* At most a second asleep: the program may have ended but for this thread. */
        if (now >= orphan_at) {
            orphan_at = now + 1000;
            if (hs_orphan_program_gone())
                break;
            hs_stderr_pin_refresh();
        }
        if (timeout < 0 || timeout > 1000)
            timeout = 1000;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += timeout / 1000;
        ts.tv_nsec += (long)(timeout % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        sem_clockwait(&trig_sem, CLOCK_MONOTONIC, &ts);
        while (sem_trywait(&trig_sem) == 0)
            ; /* one round serves every wake-up so far */
    }
    __atomic_store_n(&trig_running, 0, __ATOMIC_RELEASE);
    return NULL;
}

/* Starts the thread with every signal blocked (threads.c). Guard held. */
static int trig_spawn(bool again)
{
    hs_assert_guard();
    int rc = again ? hs_thread_restart(&trig_th, trig_main, NULL)
                   : hs_thread_start(&trig_th, trig_main, NULL, true);
    if (rc == 0) {
        __atomic_store_n(&trig_pid, getpid(), __ATOMIC_RELEASE);
        __atomic_store_n(&trig_running, 1, __ATOMIC_RELEASE);
    }
    return rc;
}

/* ---- the thread started for the exit profiles -------------------------------------- */

/* A terminating signal may interrupt its thread anywhere: inside the allocator, holding
 * glibc's locks (and a crash handler may call _exit there). Creating a thread there
 * (pthread_create allocates the new thread's DTV and takes the loader's stack-list lock)
 * could deadlock that thread on itself, where no timeout would end it, or re-enter an
 * allocator that is half-way through a call. So termsig.c makes only a raw clone, which
 * is async-signal-safe: the starter below. It runs with the calling thread's thread
 * pointer, as that thread would, while that thread waits (and never runs program code
 * again: the process ends), and makes the trigger thread with pthread_create, its
 * allocations served from the blocks set aside at start (bootstrap.c). Should it block
 * on a lock the calling thread holds, that thread's bounded wait ends the process as
 * without heapsift. The clone's flags are glibc's own for a thread, which seccomp
 * sandboxes allow. */
#define TRIG_STARTER_STACK (256 * 1024)
#define TRIG_ASIDE_BYTES 4096 /* a DTV: 16 bytes per TLS module, plus 16 spare entries */
static pid_t trig_starter_tid;

static void *trig_thread_pointer(void)
{
#if defined(__x86_64__)
    void *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp)); /* the TCB's self pointer (x86-64 TLS ABI) */
    return tp;
#else
    return __builtin_thread_pointer();
#endif
}

static int trig_starter(void *arg)
{
    (void)arg;
    hs_tls_t *t = &hs_tls; /* the calling thread's, which waits meanwhile */
    hs_guard_enter(t);
    int64_t countdown = t->countdown;
    t->countdown = INT64_MIN / 2; /* every allocation takes the slow path, */
    t->boot_only = 1;             /* which serves it from the blocks set aside */
    int rc = trig_spawn(false);
    t->boot_only = 0;
    t->countdown = countdown;
    hs_guard_exit(t);
    if (rc != 0)
        hs_termsig_finish(); /* no profile: the handler need not wait for one */
    return 0;                /* glibc's clone ends the starter with SYS_exit */
}

int hs_triggers_start_term(void)
{
    if (!__atomic_load_n(&trig_sem_ok, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE))
        return -ECANCELED;
    __atomic_fetch_or(&trig_pending, TRIG_TERM, __ATOMIC_RELEASE);
    void *stack = mmap(NULL, TRIG_STARTER_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -ENOMEM;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: no signal is the starter's */
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    int tid = clone(trig_starter, (char *)stack + TRIG_STARTER_STACK, flags, NULL,
                    &trig_starter_tid, trig_thread_pointer(), &trig_starter_tid);
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (tid < 0) {
        munmap(stack, TRIG_STARTER_STACK);
        return -err;
    }
    return 0; /* its stack is left to the process's end, which follows */
}

static int trig_open(void)
{
    if (sem_init(&trig_sem, 0, 0) != 0)
        return -errno;
    __atomic_store_n(&trig_sem_ok, 1, __ATOMIC_RELEASE);
    return 0;
}

static int trig_install_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = trig_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction((int)hs_opt.signal, &sa, &trig_prev) != 0)
        return -errno;
    trig_signal_ours = true;
    return 0;
}

/* Puts the program's handler back, unless it installed another since. */
static void trig_remove_signal(void)
{
    struct sigaction now;
    if (!trig_signal_ours || sigaction((int)hs_opt.signal, NULL, &now) != 0 ||
        !(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != trig_on_signal)
        return;
    sigaction((int)hs_opt.signal, &trig_prev, NULL);
    trig_signal_ours = false;
}

int hs_triggers_start(void)
{
    bool now = trig_needs_thread();
    if (__atomic_exchange_n(&trig_started, 1, __ATOMIC_ACQ_REL))
        return 0;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    int rc = trig_open();
    if (rc == 0 && !now) {
        rc = hs_boot_set_aside(TRIG_ASIDE_BYTES); /* started for the exit profiles only */
        hs_guard_exit(t);
        if (rc != 0)
            hs_log("no memory set aside to start a thread for the exit profile of a "
                   "terminating signal or an _exit (%s)",
                   strerror(-rc));
        return rc;
    }
    if (rc == 0 && hs_opt.peak)
        __atomic_store_n(&hs_peak_arm, 0, __ATOMIC_RELAXED);
    if (rc == 0)
        rc = trig_spawn(false);
    if (rc == 0 && hs_opt.signal)
        rc = trig_install_signal();
    hs_guard_exit(t);
    if (rc != 0)
        hs_log("cannot start the trigger thread (%s); profiles are written at exit and on "
               "request only",
               strerror(-rc));
    return rc;
}

void hs_triggers_stop(void)
{
    __atomic_store_n(&hs_peak_arm, INT64_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&trig_stopping, 1, __ATOMIC_RELEASE);
    trig_wake(TRIG_STOP);
}

void hs_triggers_pause(void)
{
    if (!__atomic_load_n(&trig_running, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&trig_pid, __ATOMIC_ACQUIRE) != getpid() ||
        __atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&hs_peak_arm, INT64_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&trig_paused, 1, __ATOMIC_RELEASE);
    trig_remove_signal();
    trig_wake(TRIG_STOP);
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 5000 && __atomic_load_n(&trig_running, __ATOMIC_ACQUIRE); i++)
        nanosleep(&ts, NULL); /* it may be writing a profile: up to 5 s */
    if (__atomic_load_n(&trig_running, __ATOMIC_ACQUIRE)) {
        hs_log("the trigger thread did not end at detach; it stays, idle");
        return;
    }
    hs_thread_wait_gone(__atomic_load_n(&trig_tid, __ATOMIC_ACQUIRE));
}

int hs_triggers_resume(void)
{
    if (!__atomic_load_n(&trig_paused, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&trig_running, __ATOMIC_ACQUIRE))
        return 0;
    hs_thread_wait_gone(__atomic_load_n(&trig_tid, __ATOMIC_ACQUIRE)); /* off its stack */
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    __atomic_store_n(&trig_paused, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&trig_pending, 0, __ATOMIC_RELAXED);
    while (sem_trywait(&trig_sem) == 0)
        ;                           /* wake-ups for the ended thread */
    memset(&trig, 0, sizeof(trig)); /* deadlines and thresholds start again */
    int rc = trig_spawn(true);
    if (rc == 0 && hs_opt.signal)
        rc = trig_install_signal();
    hs_guard_exit(t);
    if (rc == 0 && hs_opt.peak)
        hs_peak_rearm();
    if (rc != 0)
        hs_log("cannot start the trigger thread again (%s)", strerror(-rc));
    return rc;
}

/* The child has no trigger thread: a fresh semaphore (the parent's may have been mid-
 * operation), no files of its own yet, and a thread of its own. Last of the fork's child
 * handlers (record/fork.c), the peak lock released just before. */
static void trig_fork_child(void)
{
    memset(keep, 0, sizeof(keep)); /* the parent's; possibly mid-update: leaked, not freed */
    __atomic_store_n(&trig_pending, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&trig_sem_ok, __ATOMIC_ACQUIRE))
        sem_init(&trig_sem, 0, 0); /* for a start for the exit profiles, too */
    if (!__atomic_load_n(&trig_running, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&trig_stopping, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&trig_running, 0, __ATOMIC_RELAXED);
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    if (trig_open() == 0)
        trig_spawn(false);
    hs_guard_exit(t);
    if (hs_opt.peak)
        hs_peak_rearm();
}

/* Bytes the kept file names take on the heap (accounting.c adds the kept peak's). */
static uint64_t trig_mem(void)
{
    uint64_t b = 0;
    for (int i = 0; i < TRIG_KINDS; i++)
        b += (uint64_t)keep[i].n * 256 + (keep[i].paths ? hs_opt.keep * sizeof(char *) : 0);
    return b;
}

/* Before anything of the triggers' can run: what the parts below call. */
HS_CTOR(HS_CTOR_TRIGGERS) static void trig_ctor(void)
{
    hs_peak_set_waker(trig_peak_wake);
    hs_dump_on_written(trig_wrote);
    hs_acct_own_mem(trig_mem);
    hs_fork_register(HS_FORK_RESTART, NULL, NULL, trig_fork_child);
}
