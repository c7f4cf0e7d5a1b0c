/*
 * The exit profile of a program ended by SIGINT, SIGTERM or SIGHUP: a server stopped with
 * Ctrl-C or by its supervisor dies of the signal and runs no exit handler, so without this
 * it would write nothing. At start, each of the three signals the program leaves at its
 * default action gets a handler; one the program sets later replaces it and takes
 * precedence, an ignored one is left ignored, and a default action the program puts back
 * later gets the handler again.
 *
 * The handler does what a signal handler may: it wakes the trigger thread (a semaphore
 * post), or, where none runs (the default: a process that asked for no trigger has no
 * thread of heapsift's), has one started by a raw clone (triggers.c), and waits on a
 * futex, at most HS_TERM_WAIT_MS, for the thread to write the exit profiles (the dump
 * allocates and takes locks, which the interrupted thread may hold, so it never runs in
 * the handler). Then it puts the default action back and raises the signal again: the
 * process ends by the same signal, with the same status and core-dump behaviour as
 * without heapsift. A second signal meanwhile waits for the same dump.
 * HEAPSIFT_DUMP_ON_TERM=0 turns it off.
 *
 * The process is to die of the signal: a thread of the program's that ends it meanwhile
 * (exit, _exit, _Exit: procexit.c) waits for the profiles and then dies of the signal
 * too.
 *
 * A program that asks what its disposition is (sigaction with an old-action pointer,
 * signal) is told SIG_DFL while heapsift's handler stands in for it: CPython, for one,
 * sets its KeyboardInterrupt handler only over SIG_DFL. So libheapsift exports sigaction
 * and signal; both forward to glibc's __sigaction.
 */
#define _GNU_SOURCE
#include "termsig.h"
#include "runtime/core.h"
#include "runtime/options.h"
#include "lifecycle.h"
#include "triggers.h"

#include <errno.h>
#include <pthread.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HS_TERM_WAIT_MS 20000 /* a dump hung by a lock the signalled thread holds */

/* glibc's own (exported since 2.2.5): what sigaction is without heapsift's wrapper. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int term_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static bool term_ready;      /* hs_termsig_install ran: SIG_DFL set later gets the stand-in */
static int term_requested;   /* the first signal's number, 0 = none yet */
#define TERM_EXIT_CALL (-1)  /* term_requested: _exit in a process of several threads */
static pid_t term_pid;       /* the process it came to (a vfork child shares the memory) */
static uint32_t term_done;   /* futex: 1 once the exit profiles are written */
static uint32_t term_served; /* 1: a trigger thread takes the request; 2: none can */

static int64_t term_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (vDSO) */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits, without anything a handler may not call, for term_done. */
static void term_wait(void)
{
    int64_t end = term_now_ms() + HS_TERM_WAIT_MS;
    for (int64_t now;
         !__atomic_load_n(&term_done, __ATOMIC_ACQUIRE) && (now = term_now_ms()) < end;) {
        int64_t left = end - now;
        struct timespec ts = {left / 1000, (left % 1000) * 1000000};
        syscall(SYS_futex, &term_done, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
}

/* Waits until the first request is taken (a signal on another thread may come between
 * its two steps: bounded all the same, and yielding), then for the profiles if a thread
 * writes them. */
static void term_wait_served(void)
{
    uint32_t served;
    int64_t end = term_now_ms() + HS_TERM_WAIT_MS;
    while ((served = __atomic_load_n(&term_served, __ATOMIC_ACQUIRE)) == 0 && term_now_ms() < end)
        sched_yield();
    if (served == 1)
        term_wait();
}

/* Takes the request for the exit profiles (a signal's number, or TERM_EXIT_CALL) unless
 * one was taken already, and has the trigger thread write them, waking it or having it
 * started (triggers.c). The thread taking it must not be interrupted by a request of its
 * own before term_served is set: the handler blocks the three signals, _exit blocks them
 * around this. Async-signal-safe. */
static void term_take(int why)
{
    int zero = 0;
    __atomic_store_n(&term_pid, getpid(), __ATOMIC_RELEASE); /* before the request is seen */
    if (__atomic_compare_exchange_n(&term_requested, &zero, why, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* Asked before the wake-up: once woken, the thread marks itself stopping as it
         * starts the dump, and a check after it missed the dump in 1 of 8 runs. */
        if (hs_triggers_running()) {
            __atomic_store_n(&term_served, 1, __ATOMIC_RELEASE);
            hs_triggers_wake_term();
        } else {
            __atomic_store_n(&term_served, hs_triggers_start_term() == 0 ? 1 : 2, __ATOMIC_RELEASE);
        }
    }
}

static void term_on_signal(int sig)
{
    int saved = errno;
    term_take(sig);
    term_wait_served();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until this handler returns, then the default action */
    errno = saved;
}

/* A thread ends the process while the exit profiles of a terminating signal are
 * being written: Chromium's renderers, sent SIGTERM by the browser, call _exit(0) on
 * another thread once the browser has gone, which without heapsift they never reach. It
 * waits for the profiles, then dies of the signal itself, as the process would have
 * without heapsift. A no-op when no signal came (or it came to the parent of a vfork). */
void hs_termsig_exiting(void)
{
    int sig = __atomic_load_n(&term_requested, __ATOMIC_ACQUIRE);
    if (sig <= 0 || __atomic_load_n(&term_pid, __ATOMIC_ACQUIRE) != getpid())
        return;
    term_wait_served();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig); /* the default action: the process ends here */
}

void hs_termsig_exit_call(void)
{
    sigset_t term, old;
    sigemptyset(&term);
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
        sigaddset(&term, term_sigs[i]);
    hs_termsig_exiting(); /* a signal came first: the process dies of it */
    pthread_sigmask(SIG_BLOCK, &term, &old);
    term_take(TERM_EXIT_CALL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    term_wait_served();
}

static bool term_is_ours(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == term_on_signal;
}

/* heapsift's handler, as it stands in for sig's default action. */
static void term_stand_in(struct sigaction *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sa_handler = term_on_signal;
    sa->sa_flags = SA_RESTART;
    sigemptyset(&sa->sa_mask);
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
        sigaddset(&sa->sa_mask, term_sigs[i]); /* one at a time on a thread */
}

/* Whether heapsift stands in for sig's default action (hs_termsig_install has run). */
static bool term_covers(int sig)
{
    if (!__atomic_load_n(&term_ready, __ATOMIC_ACQUIRE) || sig == (int)hs_opt.signal)
        return false;
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
        if (term_sigs[i] == sig)
            return true;
    return false;
}

/* A program that puts the default action back keeps heapsift's stand-in for it: Chromium's
 * zygote does so for all three at start (against handlers a parent might have left), and
 * the browser ends its renderers with SIGTERM. Asked, the program is told SIG_DFL. */
HS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction mine;
    if (act != NULL && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
        term_covers(sig)) {
        term_stand_in(&mine);
        act = &mine;
    }
    int rc = __sigaction(sig, act, old);
    if (rc == 0 && old != NULL && term_is_ours(old)) {
        memset(old, 0, sizeof(*old));
        old->sa_handler = SIG_DFL;
    }
    return rc;
}

/* glibc's signal: BSD semantics (restart, the signal blocked in its handler). */
HS_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaddset(&sa.sa_mask, sig) < 0 || sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

void hs_termsig_install(void)
{
    if (!hs_opt.dump_on_term)
        return;
    struct sigaction sa;
    term_stand_in(&sa);
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++) {
        struct sigaction old;
        if (__sigaction(term_sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL || (int)hs_opt.signal == term_sigs[i])
            continue; /* the program's (or HEAPSIFT_SIGNAL's), or ignored */
        __sigaction(term_sigs[i], &sa, NULL);
    }
    __atomic_store_n(&term_ready, true, __ATOMIC_RELEASE);
}

/* heapsift detach: the stand-ins go (a signal's default action is the program's again), so
 * that a process left inert writes nothing when it is ended: a SIGTERM after a detach wrote
 * an empty exit profile over the attach's. A handler the program set meanwhile stays. */
void hs_termsig_uninstall(void)
{
    __atomic_store_n(&term_ready, false, __ATOMIC_RELEASE);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++) {
        struct sigaction old;
        if (__sigaction(term_sigs[i], NULL, &old) == 0 && term_is_ours(&old))
            __sigaction(term_sigs[i], &dfl, NULL);
    }
}

void hs_termsig_finish(void)
{
    __atomic_store_n(&term_done, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &term_done, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
}

void hs_termsig_dump(void)
{
    if (!__atomic_load_n(&term_requested, __ATOMIC_ACQUIRE))
        return;
    /* a signal that came as heapsift detach took the stand-ins away: no profile */
    /* A signal's handler holds its thread wherever it came, inside malloc perhaps, with the
     * arena's lock: the allocator's statistics are not read (mallinfo2 waited for that
     * lock for the handler's 20 s, and no profile was written). _exit's thread waits in
     * heapsift's own code. */
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON)
        hs_exit_dumps(__atomic_load_n(&term_requested, __ATOMIC_ACQUIRE) > 0);
    hs_termsig_finish();
}
