/*
 * heapsift's I/O thread (iothread.c): where the library's file operations run when the
 * calling thread shares the program's descriptor table.
 */
#ifndef HS_IOTHREAD_H
#define HS_IOTHREAD_H

#include <sys/types.h>

/* Installs the route of fdio.h: calls from a thread with a private table (fdtable.c) run
 * there; every other call runs in the I/O thread, started on first use. */
void hs_iothread_install(void);

/* A session: the thread, once a call started it, stays until the last session ends
 * (one start for a batch of calls; for life in a heapsift thread that shares the
 * program's table). Without one, each call starts and ends it. Any thread, no lock held
 * but the dump lock. */
void hs_iothread_hold(void);
void hs_iothread_release(void);
/* The constructor's session: in a process with one thread, the sandbox is looked at once
 * for all its calls, not before each (the next release ends that). */
void hs_iothread_hold_start(void);

/* Starts the thread now, keeping its copy of the program's descriptor 2 (HEAPSIFT_LEAKS:
 * the report reaches the stderr of the start even when a daemon closed its own). */
void hs_iothread_keep_stderr(void);

/* write(2) on that copy, from any thread: bytes written, or -1 with errno (EBADF: none
 * was kept). */
ssize_t hs_iothread_write_stderr(const void *p, size_t n);

/* In a forked child: the parent's I/O thread is not there; the next call starts one. */
void hs_iothread_after_fork(void);

#endif
