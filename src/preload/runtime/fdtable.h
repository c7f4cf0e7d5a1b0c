/*
 * Descriptor tables of heapsift's own (fdtable.c), so that the files its threads open
 * never share numbers with the program's.
 */
#ifndef HS_FDTABLE_H
#define HS_FDTABLE_H

#include <stdbool.h>

/* Gives the calling thread (one of heapsift's) a descriptor table of its own, emptied but
 * for /dev/null on 0, 1, 2. Returns 0 or -errno (it then shares the program's, as any
 * thread does). */
int hs_fd_private(void);
/* Whether unshare was refused once (then it always will be: a seccomp filter). */
bool hs_fd_refused(void);

/* Runs fn(arg) on a thread with a descriptor table of its own (a new one, joined before
 * this returns, unless the caller already has one), or on the caller where none can be
 * had. For work that reaches libraries making descriptor calls of their own. Guard held
 * or not; no lock of the table's is needed. */
void hs_fdtable_run(void (*fn)(void *), void *arg);

#endif
