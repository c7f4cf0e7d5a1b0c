/*
 * The library's start and end (lifecycle.c): the constructor that starts what the
 * options ask for, the destructor, and the exit profiles however the process ends (its
 * destructor, _exit, a terminating signal).
 */
#ifndef HS_LIFECYCLE_H
#define HS_LIFECYCLE_H

#include <stdbool.h>

/* The exit profiles (the live heap, then the kept peak), once per process: from the
 * destructor, from _exit (procexit.c), or from the trigger thread for a terminating signal
 * (termsig.c). A second caller waits until the first one's are written (at most 20 s). */
void hs_exit_dumps(bool interrupted);
/* From _exit and _Exit in a process of threads threads (all of /proc/self/task, more
 * than one): the exit profiles when more than one of them is the program's, written by
 * the trigger thread (termsig.c), the caller waiting for them. */
void hs_exit_call(int threads);
/* _exit in a single-threaded process (procexit.c). The process the library started in,
 * an exec'd image (Firefox's crashhelper forks its daemon and ends so), writes its exit
 * profiles as at exit (none without a sample). A forked child (a shell's subshell, the
 * child of a fork whose exec failed), a vfork child or a raw clone's child writes none,
 * and its rescue spool is discarded: it touches no memory in a vfork child. */
void hs_exit_single(void);
/* _exit under a sandbox where the threads cannot be counted (sandbox.h: a raw clone's
 * child, a process that could not open its status): what the exit under a sandbox does,
 * with no system call, the spool kept as the profile of a process that sampled. A
 * single-threaded one (a shell) is not told apart: it leaves an extra profile. */
void hs_exit_uncounted(void);

#endif
