/*
 * The trigger thread (triggers.c): heapsift's one background thread and every reason it
 * dumps but an API call or an HTTP request.
 */
#ifndef HS_TRIGGERS_H
#define HS_TRIGGERS_H

#include "runtime/core.h"

#include <stdbool.h>
#include <stdint.h>

/* Installs the signal handler and starts the thread when a trigger needs it (once;
 * the caller must not hold the guard); without one, prepares its start for the exit
 * profiles (hs_triggers_start_term). Returns 0 or -errno (triggers then stay off). */
int hs_triggers_start(void);
/* At exit: no trigger dumps from now on; the thread is woken to leave (not joined). */
void hs_triggers_stop(void);
/* heapsift detach (attach.c, guard held): the thread, if it runs, ends (waited for, at
 * most 5 s, until it has left /proc/self/task) and the signal handler is put back, so a
 * detached process has no thread of heapsift's. */
void hs_triggers_pause(void);
/* A re-attach: the thread starts again, if pause ended it. 0 or -errno (logged). */
int hs_triggers_resume(void);
/* From termsig.c's handler (async-signal-safe): write the exit profiles now. */
void hs_triggers_wake_term(void);
/* From termsig.c (a terminating signal's handler, _exit), when no trigger thread runs:
 * starts one that writes the exit profiles (hs_termsig_dump), or calls hs_termsig_finish
 * if it cannot. Async-signal-safe; the calling thread must then wait until
 * hs_termsig_dump or hs_termsig_finish says so (or its timeout), and never return to the
 * program: the starter runs with its thread pointer meanwhile. 0 or -errno (then nothing
 * started). */
int hs_triggers_start_term(void);
/* Whether the trigger thread runs in this process and will serve a wake-up. */
bool hs_triggers_running(void);
/* What the parts below call without knowing the triggers is registered by triggers.c's
 * constructor: the peak's waker (record/peak.h), the files written (output/dump.h), the
 * heap the kept names take (output/accounting.h) and the child's restart after a fork
 * (record/fork.h). */

#endif
