/*
 * Threads (threads.c): the registry of the program's threads, which sums the exact
 * counters every thread's fast paths keep, and the start of heapsift's own threads.
 */
#ifndef HS_THREADS_H
#define HS_THREADS_H

#include "core.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    uint64_t allocs, frees, bytes; /* calls and requested bytes, all threads */
    uint64_t threads;              /* threads registered now */
    uint64_t samples;              /* allocations sampled, all threads */
} hs_counters_t;

/* Registers t (its counters are then summed by hs_counters_read; its exit folds them
 * into the totals). Call once per thread, from the slow path, outside any lock. */
void hs_thread_register(hs_tls_t *t);
/* Sums every thread's counters; reads other threads' counters racily (each word is
 * read atomically, the sum is as of "about now"). */
void hs_counters_read(hs_counters_t *out);
/* Sets the registry up (pthread key). 0 or -errno. */
int hs_threads_init(void);
/* Fork handlers: the registry lock; in the child, other threads are folded in. */
void hs_threads_lock(void);
void hs_threads_unlock(void);
void hs_threads_after_fork_child(void);

/* heapsift's own threads. */
#define HS_THREAD_STACK (8u << 20) /* reserved, not committed: pages count once touched */
typedef struct {
    pthread_t th;
    void *stack;
    size_t size;
} hs_thread_t;

/* Starts fn(arg) with every signal blocked, on a stack of its own (threads.c says why);
 * detached or not. 0 or -errno. */
int hs_thread_start(hs_thread_t *t, void *(*fn)(void *), void *arg, bool detach);
/* Starts fn(arg) detached on the stack of t's earlier thread (which must be gone:
 * hs_thread_wait_gone), or on a new one if t has none yet. 0 or -errno. */
int hs_thread_restart(hs_thread_t *t, void *(*fn)(void *), void *arg);
/* Calls fn with the range of every stack hs_thread_start mapped and that is still mapped
 * (its thread running, or gone and the stack kept for hs_thread_restart). Lock-free. */
void hs_thread_stacks(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);
/* Joins a thread hs_thread_start made joinable, and unmaps its stack. */
void hs_thread_join(hs_thread_t *t);
/* Waits until task tid of this process is gone from /proc/self/task: heapsift's thread
 * ended, the program sees as many threads as without heapsift (Chromium's zygote, and any
 * program that must be single-threaded to fork or to unshare a user namespace, counts
 * them). At most 2 s. */
void hs_thread_wait_gone(pid_t tid);

#endif
