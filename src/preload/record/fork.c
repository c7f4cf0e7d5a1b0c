/*
 * The fork handlers (fork.h): take every table lock in rank order (runtime/core.h), so the
 * child inherits them in a consistent state; the dump lock is not taken (a dump may be
 * long) but re-created in the child (output/dump.c's restart hook), where no dump runs.
 * The symbol cache, which outlives dumps, has a lock of its own that is held only while
 * it changes (its INNER hook). Knows the recorder's tables and the runtime's threads; the
 * parts above register their hooks here and are never named.
 */
#include "fork.h"
#include "labels.h"
#include "livetab.h"
#include "modules.h"
#include "peak.h"
#include "spool.h"
#include "stacktab.h"
#include "trackers.h"
#include "runtime/iothread.h"
#include "runtime/orphan.h"
#include "runtime/sandbox.h"
#include "runtime/threads.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

typedef struct {
    int where;
    void (*prepare)(void);
    void (*parent)(void);
    void (*child)(void);
} fork_hook_t;

static fork_hook_t fork_hooks[HS_FORK_MAX];
static int fork_nhooks;
static bool fork_child_of_fork;

int hs_fork_register(int where, void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    if (fork_nhooks == HS_FORK_MAX)
        return -ENOSPC;
    fork_hooks[fork_nhooks++] = (fork_hook_t){where, prepare, parent, child};
    return 0;
}

bool hs_forked(void)
{
    return fork_child_of_fork;
}

static void fork_prepare_at(int where)
{
    for (int i = 0; i < fork_nhooks; i++)
        if (fork_hooks[i].where == where && fork_hooks[i].prepare)
            fork_hooks[i].prepare();
}

/* Parent or child hooks of OUTER and INNER: in reverse registration order. */
static void fork_release_at(int where, bool child)
{
    for (int i = fork_nhooks - 1; i >= 0; i--) {
        void (*fn)(void) = child ? fork_hooks[i].child : fork_hooks[i].parent;
        if (fork_hooks[i].where == where && fn)
            fn();
    }
}

static void fork_prepare(void)
{
    fork_prepare_at(HS_FORK_OUTER); /* first: a look at new objects may take the patcher's lock */
    hs_trackers_lock();
    hs_stacktab_lock();
    hs_livetab_lock_all();
    hs_threads_lock();
    hs_peak_lock();
    hs_labels_lock();
    hs_modules_lock();
    fork_prepare_at(HS_FORK_INNER);
}

static void fork_parent(void)
{
    fork_release_at(HS_FORK_INNER, false);
    hs_modules_unlock();
    hs_labels_unlock();
    hs_peak_unlock();
    hs_threads_unlock();
    hs_livetab_unlock_all();
    hs_stacktab_unlock();
    hs_trackers_unlock();
    fork_release_at(HS_FORK_OUTER, false);
}

/* The restart hooks (the trigger thread's last) run once every table is usable again. */
static void fork_child(void)
{
    fork_release_at(HS_FORK_INNER, true);
    hs_modules_unlock();
    hs_labels_unlock();
    hs_peak_unlock(); /* before the spool's copy, which may take the live table's locks */
    hs_threads_after_fork_child();
    hs_livetab_unlock_all();
    hs_stacktab_unlock();
    hs_trackers_unlock();
    fork_release_at(HS_FORK_OUTER, true);
    hs_spool_after_fork_child();
    hs_sandbox_after_fork_child();
    fork_child_of_fork = true;
    hs_orphan_after_fork();
    hs_iothread_after_fork();
    hs_spool_fork_copy();
    for (int i = 0; i < fork_nhooks; i++)
        if (fork_hooks[i].where == HS_FORK_RESTART && fork_hooks[i].child)
            fork_hooks[i].child();
}

int hs_fork_install(void)
{
    return pthread_atfork(fork_prepare, fork_parent, fork_child);
}
