/*
 * The exit profile of a program ended by SIGINT, SIGTERM or SIGHUP (termsig.c).
 */
#ifndef HS_TERMSIG_H
#define HS_TERMSIG_H

#include <stdbool.h>

/* Catches SIGINT, SIGTERM and SIGHUP where the program leaves them at their default
 * action (HEAPSIFT_DUMP_ON_TERM=1, the default). Before the trigger thread starts. */
void hs_termsig_install(void);

/* On the trigger thread, when woken for it: the exit dumps, then the waiting handlers
 * re-raise the signal. */
void hs_termsig_dump(void);

/* On a thread ending the process (exit's destructors, _exit): if a terminating signal's
 * exit profiles are being written, waits for them and dies of that signal (as the process
 * would have without heapsift); else returns at once. */
void hs_termsig_exiting(void);

/* From _exit in a process of several threads of the program's: has the trigger thread
 * write the exit profiles, as for a terminating signal, and waits for them (at most
 * 20 s: a dump hung by a lock this thread holds, as in a crash handler, does not keep the
 * process from ending). Dies of a terminating signal that came first. */
void hs_termsig_exit_call(void);

/* heapsift detach: puts back the default action of each signal heapsift stands in for;
 * hs_termsig_install (a later attach) stands in again. */
void hs_termsig_uninstall(void);

/* The exit profiles are written, or none will be (no thread could be started for them):
 * the waiting handlers re-raise the signal. Async-signal-safe. */
void hs_termsig_finish(void);

#endif
