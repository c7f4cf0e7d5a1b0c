/*
 * Fork (fork.c): the handlers pthread_atfork runs, installed by hs_init. They take the
 * recorder's table locks in rank order (runtime/core.h) so that a child inherits them
 * consistent, and run what the parts above the recorder registered, at fixed places
 * around those locks, so the recorder never names them. Registrations come from the
 * constructors of those parts (static tables, no allocation), before anything of theirs
 * runs that a fork could catch half-done.
 */
#ifndef HS_FORK_H
#define HS_FORK_H

#include <stdbool.h>

enum {
    /* prepare before the tables' locks are taken; parent and child after they are
     * released (reach.c: no look at new objects across a fork) */
    HS_FORK_OUTER,
    /* prepare after the tables' locks; parent and child before they are released (locks
     * ranked after the tables', the symbol cache's) */
    HS_FORK_INNER,
    /* child only, last, once every table is usable again: what starts again in the child
     * (the dump lock and numbering, then the trigger thread), in registration order */
    HS_FORK_RESTART,
};

/* Registers hooks (any may be NULL) at place where. Prepare hooks run in registration
 * order, parent and child hooks of OUTER and INNER in reverse. Returns 0, or -ENOSPC
 * past HS_FORK_MAX registrations. Constructors only (no lock: before any thread). */
#define HS_FORK_MAX 8
int hs_fork_register(int where, void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* Installs the handlers (pthread_atfork): 0 or its error. Once, from hs_init. */
int hs_fork_install(void);
/* True in a process forked from the one heapsift started in: it never writes the
 * parent's files (dump.c, outpath.c's suffixes). */
bool hs_forked(void);

#endif
