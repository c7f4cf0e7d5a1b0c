/*
 * Sandboxes (sandbox.c): whether a seccomp filter was installed in this process after
 * heapsift started, as a browser's content and utility processes do once they have set
 * themselves up. Such a filter refuses, and reports, the calls heapsift's file route makes
 * (unshare, clone, getgroups, open): once it is there, heapsift makes none of them and
 * leaves its spool instead (spool.h). A filter already there at start (a container's) is
 * not a sandbox in this sense: the I/O thread's own fallbacks handle it.
 */
#ifndef HS_SANDBOX_H
#define HS_SANDBOX_H

#include <stdbool.h>

/* Constructor, before the program runs: opens /proc/self/status and notes the filters
 * present at start. */
void hs_sandbox_init(void);
/* A forked child's descriptor names its parent's status: reopened (before any filter of
 * the child's own; left unknown where the child cannot open it). */
void hs_sandbox_after_fork_child(void);
/* Whether a filter was installed since start. Two system calls (fstat, pread) that every
 * sandbox allows, until the answer is yes; then none. Any thread, no lock, no allocation. */
bool hs_sandbox_entered(void);
/* Whether hs_sandbox_entered's yes was read in the status (a filter's count grew), not
 * assumed: a raw clone's child, or a forked child that could not open its own status (in
 * a chroot), is taken for sandboxed without knowing. */
bool hs_sandbox_seen(void);
/* The sampled path: notes that this process took a sample of its own (one store to a
 * page that reads 0 again in any child, however made). */
void hs_sandbox_note_sample(void);
/* Whether it did since it began (true when that cannot be known): a raw clone's child
 * that took none (a browser's chroot helper) has nothing of its own to lose. */
bool hs_sandbox_sampled(void);
/* The token page (MADV_WIPEONFORK, 4 KiB), or NULL: the leak check's snapshot
 * (snapshot.c) knows it for heapsift's own, holding no pointer of the program's. */
const void *hs_sandbox_token(void);
/* The process's threads (Threads: of the status), or -1 when it cannot be read. Same
 * calls and context as hs_sandbox_entered. */
int hs_sandbox_threads(void);

#endif
