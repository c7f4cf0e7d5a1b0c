/*
 * The exit profile of a program ended by SIGINT, SIGTERM or SIGHUP: a server stopped with
 * Ctrl-C or by its supervisor dies of the signal and runs no exit handler, so without this
 * it would write nothing. At start, each of the three signals the program leaves at its
 * default action gets a handler; one the program sets later replaces it and takes
 * precedence, and an ignored one is left ignored.
 *
 * The handler does what a signal handler may: it wakes the trigger thread (a semaphore
 * post) and waits on a futex, at most HS_TERM_WAIT_MS, for the thread to write the exit
 * profiles (the dump allocates and takes locks, which the interrupted thread may hold,
 * so it never runs in the handler). Then it puts the default action back and raises the
 * signal again: the process ends by the same signal, with the same status and core-dump
 * behaviour as without heapsift. A second signal meanwhile waits for the same dump.
 * HEAPSIFT_DUMP_ON_TERM=0 turns it off.
 *
 * A program that asks what its disposition is (sigaction with an old-action pointer,
 * signal) is told SIG_DFL while heapsift's handler stands in for it: CPython, for one,
 * sets its KeyboardInterrupt handler only over SIG_DFL. So libheapsift exports sigaction
 * and signal; both forward to glibc's __sigaction.
 */
#define _GNU_SOURCE
#include "termsig.h"
#include "core.h"
#include "options.h"
#include "recorder.h"
#include "triggers.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HS_TERM_WAIT_MS 20000 /* a dump hung by a lock the signalled thread holds */

/* glibc's own (exported since 2.2.5): what sigaction is without heapsift's wrapper. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int term_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static bool term_armed;
static int term_requested;   /* the first signal's number, 0 = none yet */
static uint32_t term_done;   /* futex: 1 once the exit profiles are written */
static uint32_t term_served; /* 1: the trigger thread took the request; 2: none was there */

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

static void term_on_signal(int sig)
{
    int saved = errno;
    int zero = 0;
    if (__atomic_compare_exchange_n(&term_requested, &zero, sig, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* Asked before the wake-up: once woken, the thread marks itself stopping as it
         * starts the dump, and a check after it missed the dump in 1 of 8 runs. */
        __atomic_store_n(&term_served, hs_triggers_running() ? 1 : 2, __ATOMIC_RELEASE);
        hs_triggers_wake_term();
    }
    uint32_t served;
    while ((served = __atomic_load_n(&term_served, __ATOMIC_ACQUIRE)) == 0)
        ; /* a second signal on another thread, between the first's two steps above */
    if (served == 1)
        term_wait();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until this handler returns, then the default action */
    errno = saved;
}

static bool term_is_ours(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == term_on_signal;
}

HS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
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
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = term_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
        sigaddset(&sa.sa_mask, term_sigs[i]); /* one at a time on a thread */
    for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++) {
        struct sigaction old;
        if (__sigaction(term_sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL || (int)hs_opt.signal == term_sigs[i])
            continue; /* the program's (or HEAPSIFT_SIGNAL's), or ignored */
        if (__sigaction(term_sigs[i], &sa, NULL) == 0)
            term_armed = true;
    }
}

bool hs_termsig_armed(void)
{
    return term_armed;
}

void hs_termsig_dump(void)
{
    if (!__atomic_load_n(&term_requested, __ATOMIC_ACQUIRE))
        return;
    hs_exit_dumps();
    __atomic_store_n(&term_done, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &term_done, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
}
