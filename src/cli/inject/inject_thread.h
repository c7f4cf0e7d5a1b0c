/*
 * Running code in a target without ever leaving it dependent on this command (x86-64):
 * the engine `heapsift attach` and `detach` use (inject_thread.c; the stubs are
 * inject_stub.c's, the safe-point check inject_safe.c's).
 *
 * One program thread at a time is seized and held stopped for a few milliseconds (the
 * unwind of its stack, for a call, and a stub's set-up): its registers are pointed at a
 * stub that saves what it touches, makes one system call or one function call, restores
 * everything and returns to where the thread was. The thread
 * is let go before the stub runs (or, for a system call whose result is needed, once that
 * call has returned), so a command killed at any moment leaves a thread that finishes the
 * stub and goes on with the program. A thread stopped inside an interrupted system call
 * is first let into it again (PTRACE_SYSCALL) and taken at its entry, so that the call is
 * made afresh after the stub, as if the stub ran just before it.
 *
 * The stubs live in the unused tail of an executable mapping's last page (the bytes past
 * its PT_LOAD segment: a "cave"), written through ptrace. The box the attach thread works
 * in is an anonymous mapping made by the syscall stub. A function call that allocates
 * (pthread_create) is made only on a thread found outside the allocator and the loader
 * (inject_safe.c); the other threads run on, so any lock held is released. A thread
 * refused while running its own code runs on to its next system call's entry (a few,
 * within bounds), where it is checked again: a program busy in the allocator makes its own
 * calls outside it.
 */
#ifndef HS_CLI_INJECT_THREAD_H
#define HS_CLI_INJECT_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

typedef struct hs_safe hs_safe_t;

typedef struct {
    pid_t pid;
    uintptr_t cave;              /* where the stubs are in the target */
    size_t off[3];               /* each stub's offset in the cave (hs_stub_kind_t) */
    bool cave_written;           /* this session wrote it (or found it written) */
    uint64_t xroom;              /* the call stub's xsave room */
    hs_safe_t *safe;             /* the unwinder, opened on the first safe-point check */
    int64_t paused_us;           /* the longest time one thread was stopped */
    unsigned tries;              /* threads stopped to find one outside the allocator */
    unsigned unmoved;            /* times a refused thread that had not moved was left alone */
    int sigsys;                  /* (kept for the messages: seccomp traps seen) */
    bool died;                   /* the target ended meanwhile */
    pid_t child;                 /* the thread the call created, traced until it ends (0: none) */
    volatile sig_atomic_t *stop; /* set by a signal: stop trying (-EINTR), nothing changed */
    char why[256];               /* the last refusal of a safe point, for the message */
} hs_thr_t;

/* Finds a cave of the target. 0, -ESRCH (gone), -ENOSPC (no mapping has room). */
int hs_thr_open(hs_thr_t *s, pid_t pid);
void hs_thr_close(hs_thr_t *s);
/* Makes system call nr with a[6] on a program thread (any: a system call takes no lock of
 * the program's) and returns its result in *ret. 0 or -errno of the injection itself. */
int hs_thr_syscall(hs_thr_t *s, long nr, const uint64_t a[6], uint64_t *ret);
/* Calls fn(a[6]) on a program thread found outside the allocator and the loader, trying
 * threads in turn for ms milliseconds and at least stops stops, but for no more than
 * max_ms (a loaded machine makes each stop slower, not each stop less likely to find a
 * safe point), and not for ms after the last stop of a thread that could have moved: a
 * refused thread is stopped again only once it has moved (inject_moved.h), so a starved
 * or blocked target does not use up the stops in one place. The call stub stores its
 * result at res (then 1 at res + 8), which the caller polls. 0, -ETIMEDOUT (no thread was
 * found at a safe point: s->why says the last reason), or -errno. */
int hs_thr_call(hs_thr_t *s, uintptr_t fn, const uint64_t a[6], uintptr_t res, int ms,
                unsigned stops, int max_ms);
/* (hs_thr_syscall and hs_thr_call return -EINTR once *s->stop is set, before the next
   thread is stopped: nothing was changed in the target by that call.) */

/* The thread created by hs_thr_call's function (followed through PTRACE_O_TRACECLONE):
 * services its stops (a SIGSYS of a seccomp filter's SECCOMP_RET_TRAP is the command's:
 * dropped, the call sees -ENOSYS; other signals are delivered). 0 while it runs; 1 when it
 * has ended (*st its wait status: the group's exit status when the process ended with it);
 * -1 when none is followed. */
int hs_thr_child_poll(hs_thr_t *s, int *st);
/* Stops following it (it runs on untraced). */
void hs_thr_child_release(hs_thr_t *s);

#endif
