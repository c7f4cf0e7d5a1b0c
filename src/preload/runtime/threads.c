/*
 * Thread registry and exact counters. Every thread that reaches the slow path links its
 * TLS block into a list, so a reader (a dump, stats) can sum the counters the fast paths
 * keep without any atomic on those paths: allocation and free calls, and requested bytes
 * (derived from the sampling countdown, see hs_countdown_reset). A pthread key's
 * destructor folds an exiting thread's counters into the totals and unlinks it.
 */
#define _GNU_SOURCE
#include "debugcheck.h"
#include "core.h"
#include "threads.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_tls_t *threads_head;
static hs_counters_t threads_dead; /* folded-in counters of exited threads */
static pthread_key_t threads_key;
static bool threads_key_ok;

static uint64_t threads_load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* A thread's counters, read from any thread. */
static void threads_add(hs_counters_t *out, hs_tls_t *t)
{
    int64_t drawn = __atomic_load_n(&t->drawn, __ATOMIC_RELAXED);
    int64_t left = __atomic_load_n(&t->countdown, __ATOMIC_RELAXED);
    uint64_t allocs = threads_load(&t->allocs), frees = threads_load(&t->frees);
    /* While the thread holds the guard its counters move with profiler allocations that
     * are later undone; the saved values are the application's. */
    if (__atomic_load_n(&t->guard, __ATOMIC_RELAXED)) {
        left = __atomic_load_n(&t->saved, __ATOMIC_RELAXED);
        allocs = threads_load(&t->saved_allocs);
        frees = threads_load(&t->saved_frees);
    }
    out->allocs += allocs;
    out->frees += frees;
    out->bytes += threads_load(&t->bytes);
    out->samples += threads_load(&t->samples);
    if (drawn > left)
        out->bytes += (uint64_t)(drawn - left);
}

static void threads_unlink(hs_tls_t *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        threads_head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
    t->registered = 0;
}

static void threads_exit(void *arg)
{
    hs_tls_t *t = arg;
    hs_lock(&threads_lock, HS_RANK_THREADS);
    if (t->registered) {
        threads_add(&threads_dead, t);
        threads_unlink(t);
    }
    hs_unlock(&threads_lock, HS_RANK_THREADS);
}

int hs_threads_init(void)
{
    int rc = pthread_key_create(&threads_key, threads_exit);
    threads_key_ok = rc == 0;
    return -rc;
}

void hs_thread_register(hs_tls_t *t)
{
    if (t->registered || !threads_key_ok)
        return;
    hs_lock(&threads_lock, HS_RANK_THREADS);
    t->prev = NULL;
    t->next = threads_head;
    if (threads_head)
        threads_head->prev = t;
    threads_head = t;
    t->registered = 1;
    hs_unlock(&threads_lock, HS_RANK_THREADS);
    pthread_setspecific(threads_key, t);
}

void hs_counters_read(hs_counters_t *out)
{
    hs_lock(&threads_lock, HS_RANK_THREADS);
    *out = threads_dead;
    out->threads = 0;
    for (hs_tls_t *t = threads_head; t; t = t->next) {
        threads_add(out, t);
        out->threads++;
    }
    hs_unlock(&threads_lock, HS_RANK_THREADS);
}

void hs_threads_lock(void)
{
    hs_lock(&threads_lock, HS_RANK_THREADS);
}

void hs_threads_unlock(void)
{
    hs_unlock(&threads_lock, HS_RANK_THREADS);
}

/* In a forked child only the forking thread survives: the others' counters become
 * history. Called with threads_lock held (taken in the prepare handler). */
void hs_threads_after_fork_child(void)
{
    hs_assert_held(HS_RANK_THREADS);
    hs_tls_t *self = &hs_tls;
    hs_tls_t *t = threads_head;
    while (t) {
        hs_tls_t *next = t->next;
        if (t != self) {
            threads_add(&threads_dead, t);
            threads_unlink(t);
        }
        t = next;
    }
    hs_unlock(&threads_lock, HS_RANK_THREADS);
}

/* The stacks of heapsift's own threads (hs_thread_start's), live or kept for reuse: the
 * reachability scan leaves them out of its roots. A thread starts with its creator's
 * callee-saved registers, which its first frames push on its stack: a copy of a program
 * pointer the creator held (a sampled allocation starting the I/O thread) would outlive
 * it there and make a lost block look reachable. An entry is claimed with a CAS on lo and
 * complete once hi is set; readers skip an entry whose hi is 0. */
#define THREADS_OWN_MAX 32
static uintptr_t threads_own[THREADS_OWN_MAX][2];

static void threads_own_add(void *stack, size_t size)
{
    for (int i = 0; i < THREADS_OWN_MAX; i++) {
        uintptr_t zero = 0;
        if (__atomic_compare_exchange_n(&threads_own[i][0], &zero, (uintptr_t)stack, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_store_n(&threads_own[i][1], (uintptr_t)stack + size, __ATOMIC_RELEASE);
            return;
        }
    }
}

static void threads_own_remove(void *stack)
{
    for (int i = 0; i < THREADS_OWN_MAX; i++) {
        if (__atomic_load_n(&threads_own[i][0], __ATOMIC_ACQUIRE) == (uintptr_t)stack) {
            __atomic_store_n(&threads_own[i][1], 0, __ATOMIC_RELEASE);
            __atomic_store_n(&threads_own[i][0], 0, __ATOMIC_RELEASE);
            return;
        }
    }
}

void hs_thread_stacks(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
    for (int i = 0; i < THREADS_OWN_MAX; i++) {
        uintptr_t lo = __atomic_load_n(&threads_own[i][0], __ATOMIC_ACQUIRE);
        uintptr_t hi = __atomic_load_n(&threads_own[i][1], __ATOMIC_ACQUIRE);
        if (lo && hi > lo)
            fn(lo, hi, arg);
    }
}

/* pthread_create on t's stack with every signal blocked (the mask is inherited at
 * creation). 0 or -errno. */
static int threads_spawn(hs_thread_t *t, void *(*fn)(void *), void *arg, bool detach)
{
    pthread_attr_t attr;
    sigset_t all, old;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, t->stack, t->size);
    if (detach)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t->th, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return -rc;
}

/* Creates one of heapsift's threads: every signal blocked from its first instruction, on
 * a stack mapped for it rather than one from glibc's cache. In a forked child that cache
 * holds the stacks of the parent's other threads, whose memory the child may still reach:
 * glibc's dprintf links a FILE on its caller's stack into the stdio list, and a child
 * forked meanwhile flushes it at exit; a new thread on that stack overwrote it
 * (stress/fork_storm: "glibc detected an invalid stdio handle"). A detached thread's stack
 * is the process's for good (one per process and kind: hs_thread_restart reuses it);
 * hs_thread_join unmaps a joined one's. 0 or -errno. */
int hs_thread_start(hs_thread_t *t, void *(*fn)(void *), void *arg, bool detach)
{
    long page = sysconf(_SC_PAGESIZE);
    t->size = HS_THREAD_STACK;
    t->stack = mmap(NULL, t->size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (t->stack == MAP_FAILED) {
        t->stack = NULL;
        return -ENOMEM;
    }
    mprotect(t->stack, (size_t)page, PROT_NONE); /* a guard page below it */
    threads_own_add(t->stack, t->size);
    int rc = threads_spawn(t, fn, arg, detach);
    if (rc != 0) {
        threads_own_remove(t->stack);
        munmap(t->stack, t->size);
        t->stack = NULL;
    }
    return rc;
}

int hs_thread_restart(hs_thread_t *t, void *(*fn)(void *), void *arg)
{
    if (t->stack == NULL)
        return hs_thread_start(t, fn, arg, true);
    return threads_spawn(t, fn, arg, true);
}

void hs_thread_join(hs_thread_t *t)
{
    pthread_join(t->th, NULL);
    threads_own_remove(t->stack);
    munmap(t->stack, t->size);
    t->stack = NULL;
}

/* tgkill with signal 0 finds the task until the kernel releases it, which is when it
 * leaves /proc/self/task (and its st_nlink); pthread_join and CLONE_CHILD_CLEARTID
 * report the exit a little before that. The wait is bounded: a thread that never ends
 * (a tid reused at once) costs 2 s, not a hang. */
void hs_thread_wait_gone(pid_t tid)
{
    pid_t pid = getpid();
    for (int i = 0; i < 20000 && syscall(SYS_tgkill, pid, tid, 0) == 0; i++) {
        if (i < 16) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}
