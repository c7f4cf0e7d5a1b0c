/*
 * Stop the world for the reachability scan (reachscan.c): every other thread of the
 * process is sent SIGRTMAX-2 with tgkill; the handler saves the thread's general
 * registers and stack pointer in the thread's slot, says so (a counter and a futex wake)
 * and waits on a futex word until the scan moves the generation on. What this file must
 * never do, once the first signal is sent: allocate, take a lock, log, or wait without a
 * bound. The scanning thread reads /proc/self/task with raw system calls into its own
 * stack buffers, and the slots live in memory mapped by hs_sw_prepare, before the stop.
 *
 * Who is not stopped: the caller; threads with the signal blocked, which are heapsift's
 * own (they block every signal) or the program's (counted as "blocked"); threads that do
 * not answer within the timeout (in an uninterruptible sleep, or exiting): counted as
 * "unanswered" and left running, never waited for past the bound. A thread created while
 * the first ones are being stopped is found by the next reading of /proc/self/task (four
 * rounds at most).
 *
 * The handler stays installed once installed (a late signal, sent to a thread that only
 * took it after the release, must not meet the default action, which ends the process);
 * a signal it receives that heapsift did not send (not SI_TKILL from this process) goes
 * to the action that was there before. A program that installs its own handler on the
 * signal afterwards gets it back at the next scan, which re-installs heapsift's.
 * Callers: reachscan.c, on the exiting thread or on one of heapsift's own threads; reach.c,
 * to patch a library loaded later (a stopped thread inside the patched bytes is moved to
 * the trampoline through its slot's pc_to).
 */
#define _GNU_SOURCE
#include "stopworld.h"
#include "base/monoclock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define SW_ROUNDS 4
#define SW_SLICE_NS 2000000 /* a wait's slice: threads that died are noticed this often */

static struct {
    uint32_t gen;     /* odd while a stop is on; handlers wait for it to change */
    uint32_t arrived; /* handlers that saved their registers in this stop */
    uint32_t inside;  /* handlers running now */
    uint32_t busy;    /* one stop at a time in the process */
    hs_sw_t *cur;
    struct sigaction old; /* the action before ours, for signals heapsift did not send */
    bool installed;
} sw;

static int sw_signal(void)
{
    return SIGRTMAX - HS_SW_SIGNAL_FROM_MAX;
}

static long sw_futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

static pid_t sw_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* A signal heapsift did not send: to the action before ours (a default or ignored one
 * is dropped: the default action of a realtime signal would end the process, which a
 * program that sent it without a handler asked for; heapsift does not emulate it). */
static void sw_chain(int sig, siginfo_t *si, void *uc)
{
    if (sw.old.sa_flags & SA_SIGINFO) {
        if (sw.old.sa_sigaction)
            sw.old.sa_sigaction(sig, si, uc);
    } else if (sw.old.sa_handler != SIG_DFL && sw.old.sa_handler != SIG_IGN) {
        sw.old.sa_handler(sig);
    }
}

static hs_sw_slot_t *sw_find(hs_sw_t *w, pid_t tid)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->slots[i].tid == tid)
            return &w->slots[i];
    return NULL;
}

static void sw_save(hs_sw_slot_t *s, const void *ucv)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucv;
    for (int i = 0; i < HS_SW_REGS && i < NGREG; i++)
        s->regs[i] = (uint64_t)uc->uc_mcontext.gregs[i];
    s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
    (void)ucv;
    s->sp = 0; /* no registers: the whole stack is read */
#endif
}

/* A thread whose pc the stopper moved (reach.c: it was inside bytes a patch replaced)
 * resumes at the same instruction in the trampoline. */
static void sw_move(const hs_sw_slot_t *s, void *ucv)
{
#if defined(__x86_64__)
    uintptr_t to = __atomic_load_n(&s->pc_to, __ATOMIC_ACQUIRE);
    if (to)
        ((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] = (greg_t)to;
#else
    (void)s, (void)ucv;
#endif
}

/* Async-signal-safe: system calls and atomics only. */
static void sw_handler(int sig, siginfo_t *si, void *uc)
{
    int e = errno;
    if (si->si_code != SI_TKILL || si->si_pid != getpid()) {
        sw_chain(sig, si, uc);
        errno = e;
        return;
    }
    __atomic_add_fetch(&sw.inside, 1, __ATOMIC_ACQ_REL);
    uint32_t gen = __atomic_load_n(&sw.gen, __ATOMIC_ACQUIRE);
    hs_sw_t *w = __atomic_load_n(&sw.cur, __ATOMIC_ACQUIRE);
    hs_sw_slot_t *s = (gen & 1) && w ? sw_find(w, sw_tid()) : NULL;
    if (s && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == HS_SW_SENT) {
        sw_save(s, uc);
        __atomic_store_n(&s->state, HS_SW_STOPPED, __ATOMIC_RELEASE);
        __atomic_add_fetch(&sw.arrived, 1, __ATOMIC_RELEASE);
        sw_futex(&sw.arrived, FUTEX_WAKE, 1, NULL);
        while (__atomic_load_n(&sw.gen, __ATOMIC_ACQUIRE) == gen)
            sw_futex(&sw.gen, FUTEX_WAIT, gen, NULL);
        sw_move(s, uc);
    }
    __atomic_sub_fetch(&sw.inside, 1, __ATOMIC_RELEASE);
    if (hs_sw_test_left)
        hs_sw_test_left();
    errno = e;
}

static int sw_install(void)
{
    struct sigaction sa, now;
    if (sigaction(sw_signal(), NULL, &now) != 0)
        return -errno;
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == sw_handler)
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = sw_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    if (sigaction(sw_signal(), &sa, &sw.old) != 0)
        return -errno;
    sw.installed = true;
    return 0;
}

/* Calls fn(tid) for every task of the process; raw system calls, a stack buffer. */
static int sw_tasks(void (*fn)(pid_t tid, void *arg), void *arg)
{
    char buf[4096];
    int fd =
        (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            const struct dirent64 *d = (const void *)(buf + off);
            pid_t tid = 0;
            for (const char *p = d->d_name; *p >= '0' && *p <= '9'; p++)
                tid = tid * 10 + (*p - '0');
            if (tid > 0)
                fn(tid, arg);
            off += d->d_reclen;
        }
    }
    syscall(SYS_close, fd);
    return 0;
}

static void sw_count_one(pid_t tid, void *arg)
{
    (void)tid;
    ++*(size_t *)arg;
}

/* Whether tid blocks the signal: /proc/self/task/TID/status's SigBlk (hex, bit sig-1). */
static bool sw_blocked(pid_t tid)
{
    char path[64] = "/proc/self/task/", num[16], buf[2048];
    int k = 0;
    for (pid_t t = tid; t > 0 && k < 15; t /= 10)
        num[k++] = (char)('0' + t % 10);
    size_t len = strlen(path);
    while (k > 0)
        path[len++] = num[--k];
    memcpy(path + len, "/status", 8);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    long n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strstr(buf, "SigBlk:");
    if (!p)
        return false;
    p += 7;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t mask = 0;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
        mask = mask << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    return mask >> (sw_signal() - 1) & 1;
}

int hs_sw_prepare(hs_sw_t *w)
{
    size_t n = 0;
    memset(w, 0, sizeof(*w));
    uint32_t zero = 0;
    if (!__atomic_compare_exchange_n(&sw.busy, &zero, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return -EBUSY;
    int rc = sw_install();
    if (rc == 0)
        rc = sw_tasks(sw_count_one, &n);
    if (rc == 0) {
        w->cap = 2 * n + 256;
        w->map_len = (w->cap * sizeof(hs_sw_slot_t) + 4095) & ~(size_t)4095;
        void *p =
            mmap(NULL, w->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            rc = -ENOMEM;
        else
            w->slots = p;
    }
    if (rc != 0)
        __atomic_store_n(&sw.busy, 0, __ATOMIC_RELEASE);
    return rc;
}

typedef struct {
    hs_sw_t *w;
    pid_t self, pid;
    uint32_t sent; /* new signals in this round */
} sw_round_t;

static void sw_signal_one(pid_t tid, void *arg)
{
    sw_round_t *r = arg;
    hs_sw_t *w = r->w;
    if (tid == r->self || sw_find(w, tid))
        return;
    if (w->n == w->cap) {
        w->overflow++;
        return;
    }
    hs_sw_slot_t *s = &w->slots[w->n++];
    s->tid = tid;
    if (sw_blocked(tid)) {
        s->state = HS_SW_BLOCKED;
        w->blocked++;
        return;
    }
    __atomic_store_n(&s->state, HS_SW_SENT, __ATOMIC_RELEASE);
    if (syscall(SYS_tgkill, r->pid, tid, sw_signal()) != 0)
        s->state = HS_SW_GONE;
    else
        r->sent++;
}

/* Signalled threads that have not answered: those that are gone are marked so. */
static uint32_t sw_pending(hs_sw_t *w, pid_t pid)
{
    uint32_t left = 0;
    for (size_t i = 0; i < w->n; i++) {
        hs_sw_slot_t *s = &w->slots[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != HS_SW_SENT)
            continue;
        if (syscall(SYS_tgkill, pid, s->tid, 0) != 0 && errno == ESRCH)
            __atomic_store_n(&s->state, HS_SW_GONE, __ATOMIC_RELEASE);
        else
            left++;
    }
    return left;
}

/* Waits until every signalled thread answered or is gone, or the deadline. */
static void sw_wait(hs_sw_t *w, pid_t pid, int64_t deadline)
{
    for (;;) {
        uint32_t seen = __atomic_load_n(&sw.arrived, __ATOMIC_ACQUIRE);
        if (sw_pending(w, pid) == 0 || hs_mono_ns() >= deadline)
            return;
        struct timespec ts = {0, SW_SLICE_NS};
        sw_futex(&sw.arrived, FUTEX_WAIT, seen, &ts);
    }
}

void hs_sw_stop(hs_sw_t *w, int timeout_ms)
{
    sw_round_t r = {w, sw_tid(), getpid(), 0};
    w->t0 = hs_mono_ns();
    int64_t deadline = w->t0 + (int64_t)timeout_ms * 1000000;
    __atomic_store_n(&sw.arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sw.cur, w, __ATOMIC_RELEASE);
    __atomic_add_fetch(&sw.gen, 1, __ATOMIC_ACQ_REL); /* odd: a stop is on */
    w->active = true;
    for (int round = 0; round < SW_ROUNDS; round++) {
        r.sent = 0;
        if (sw_tasks(sw_signal_one, &r) != 0 || r.sent == 0)
            break;
        sw_wait(w, r.pid, deadline);
    }
    for (size_t i = 0; i < w->n; i++) {
        uint32_t st = __atomic_load_n(&w->slots[i].state, __ATOMIC_ACQUIRE);
        w->stopped += st == HS_SW_STOPPED;
        w->unanswered += st == HS_SW_SENT;
    }
    w->stop_ns = hs_mono_ns() - w->t0;
}

/* A handler that has left has yet to return: until its sigreturn the thread's mask blocks
 * the signal, and a stop that read the mask then took the thread for one that blocks it
 * and left it running (test_patch_live: a thread inside the bytes being patched, 8 runs
 * in 300 under load; test_stopworld_again). So the release waits for each thread it
 * stopped to unblock it again, 10 s at most in all: a thread starved on a loaded machine
 * can take more than a second to reach its sigreturn, and the wait ends as soon as every
 * thread has (a thread that blocked the signal itself since is waited for the 10 s; the
 * caller waits, the program's threads run). */
static void sw_wait_unmasked(const hs_sw_t *w)
{
    int64_t deadline = hs_mono_ns() + 10 * (int64_t)1000000000;
    for (size_t i = 0; i < w->n; i++) {
        if (__atomic_load_n(&w->slots[i].state, __ATOMIC_ACQUIRE) != HS_SW_STOPPED)
            continue;
        while (sw_blocked(w->slots[i].tid) && hs_mono_ns() < deadline) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

void hs_sw_resume(hs_sw_t *w)
{
    if (!w->active)
        return;
    __atomic_add_fetch(&sw.gen, 1, __ATOMIC_ACQ_REL); /* even: released */
    sw_futex(&sw.gen, FUTEX_WAKE, INT_MAX, NULL);
    w->pause_ns = hs_mono_ns() - w->t0;
    w->active = false;
    /* Handlers still inside read sw.cur's slots: wait for them (1 s at most). */
    for (int i = 0; i < 10000 && __atomic_load_n(&sw.inside, __ATOMIC_ACQUIRE) != 0; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    sw_wait_unmasked(w);
    __atomic_store_n(&sw.cur, NULL, __ATOMIC_RELEASE);
}

void hs_sw_free(hs_sw_t *w)
{
    hs_sw_resume(w);
    if (w->slots) {
        /* A handler still inside after hs_sw_resume's wait (its thread held, say, by a
           debugger) still reads its slot: the slots are then left mapped, never unmapped
           under it (a page or so, once). */
        if (__atomic_load_n(&sw.inside, __ATOMIC_ACQUIRE) == 0)
            munmap(w->slots, w->map_len);
        w->slots = NULL;
        __atomic_store_n(&sw.busy, 0, __ATOMIC_RELEASE);
    }
}

bool hs_sw_owns(const hs_sw_t *w, uintptr_t lo, uintptr_t hi)
{
    uintptr_t a = (uintptr_t)w->slots;
    return w->slots && lo < a + w->map_len && hi > a;
}
