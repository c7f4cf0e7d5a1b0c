/*
 * The library's start and end: the constructor (hs_init, then what the options ask for:
 * the sandbox check, hooks, spool, terminating signals, triggers), the destructor and the
 * exit profiles however the process ends (lifecycle.h). The one place that starts and
 * stops the parts below in order; the fork handlers are record/fork.c's, with the hooks
 * each part registered. Never on an allocation path.
 */
#define _GNU_SOURCE
#include "lifecycle.h"
#include "termsig.h"
#include "triggers.h"
#include "base/dwload.h"
#include "leaks/leaks.h"
#include "output/dump.h"
#include "reach/reach.h"
#include "record/fork.h"
#include "record/recorder.h"
#include "record/spool.h"
#include "record/stacktab.h"
#include "runtime/core.h"
#include "runtime/fdtable.h"
#include "runtime/iothread.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/orphan.h"
#include "runtime/sandbox.h"

#include <stdint.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The trigger thread, when a trigger needs one, starts here rather than in hs_init
 * (record/recorder.c), which may run inside the first malloc call: creating a thread
 * there is best avoided. */
static pid_t lifecycle_pid; /* the process the library started in (its constructor's) */

HS_CTOR(HS_CTOR_START) static void lifecycle_ctor(void)
{
    lifecycle_pid = getpid();
    hs_init();
    /* heapsift run's check before it starts the program (run.c): the options as the
     * library reads them, and the library loaded at all. Nothing else is started. */
    if (getenv("HEAPSIFT_PROBE"))
        _exit(hs_init_options_rc() == 0 ? 0 : 1);
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON) {
        /* One I/O thread for the files read here, ended before the program starts: it
         * then has no thread of heapsift's unless a trigger needs one. */
        hs_sandbox_init(); /* before any filter: opening a file later is what one refuses */
        hs_iothread_hold_start();
        hs_reach_detect();
        /* Where the I/O thread (started by the reach scan's reads) found unshare refused,
         * heapsift's threads share the program's descriptor table, and the loader's opens
         * of libdw and its libraries would show in it if libdw were loaded at the first
         * symbolization, while the program runs: loaded now, before the program starts. */
        if (hs_fd_refused())
            hs_dw_load();
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
static void lifecycle_exit_sandboxed(void)
{
    if (!(hs_dump_is_root() || hs_stacktab_count() > 1) ||
        (!hs_sandbox_seen() && !hs_sandbox_sampled())) {
        /* no sample: no profile, as outside a sandbox; nor for a raw clone's child (a
         * chroot helper) that took no sample of its own: its heap is its parent's */
        hs_spool_discard();
        return;
    }
    if (hs_spool_sandboxed())
        return;
    if (hs_sandbox_seen())
        hs_log("the profile of process %ld is lost: a seccomp filter installed after it started "
               "(a sandbox) refuses the calls that write files; under `heapsift run`, or with "
               "HEAPSIFT_SPOOL set, its spool keeps it",
               (long)getpid());
    else
        hs_log("the profile of process %ld is lost: made by a raw clone, or unable to open its "
               "own status, it cannot tell whether a sandbox refuses the calls that write files, "
               "and it has no spool of its own (under `heapsift run`, the init of a PID "
               "namespace keeps spares for its children: HEAPSIFT_SPOOL_SPARES)",
               (long)getpid());
}

void hs_exit_uncounted(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON)
        hs_exit_dumps(false); /* under a sandbox: the spool marked, on this thread */
}

/* A second thread ending the process waits at most this long for the first one's exit
 * profiles (a dump hung by a lock that thread holds). */
#define HS_EXIT_WAIT_MS 20000

/* Waits for *word to become non-zero, at most HS_EXIT_WAIT_MS. */
static void lifecycle_wait_set(uint32_t *word)
{
    struct timespec ts = {0, 10 * 1000000};
    for (int i = 0; i < HS_EXIT_WAIT_MS / 10 && !__atomic_load_n(word, __ATOMIC_ACQUIRE); i++)
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* The exit profiles, written as usual, and the spool removed. */
static void lifecycle_exit_write(bool interrupted)
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
        lifecycle_wait_set(&finished);
        return;
    }
    __atomic_store_n(&finished, 0, __ATOMIC_RELEASE); /* a forked child's own */
    hs_triggers_stop();
    if (hs_sandbox_entered())
        lifecycle_exit_sandboxed();
    else
        lifecycle_exit_write(interrupted);
    __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &finished, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* The exit profiles of a process that ends by _exit: written by the trigger thread
 * (termsig.c), the caller waiting; under a sandbox, which may refuse the thread's clone,
 * on the caller's thread, where only the spool is marked. */
static void lifecycle_exit_call(void)
{
    if (hs_sandbox_entered())
        hs_exit_dumps(false);
    else
        hs_termsig_exit_call();
}

void hs_exit_single(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    if (!hs_forked() && getpid() == lifecycle_pid)
        lifecycle_exit_call(); /* the exit profiles, as at exit */
    else
        hs_spool_discard();
}

void hs_exit_call(int threads)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    /* The program's own threads: heapsift's may be among those /proc/self/task lists. */
    if (threads - hs_orphan_own_alive() > 1)
        lifecycle_exit_call();
}

/* The exit dumps: the live heap, then the kept peak. Trigger dumps are refused from the
 * first one on, so none runs while the process is being torn down. */
__attribute__((destructor)) static void lifecycle_dtor(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    hs_termsig_exiting(); /* a terminating signal's profiles under way: dies of it */
    hs_exit_dumps(false);
    hs_leaks_exit(); /* HEAPSIFT_LEAKS=error: may end the process with status 23 */
}
