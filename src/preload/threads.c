/*
 * Thread registry and exact counters. Every thread that reaches the slow path links its
 * TLS block into a list, so a reader (a dump, stats) can sum the counters the fast paths
 * keep without any atomic on those paths: allocation and free calls, and requested bytes
 * (derived from the sampling countdown, see hs_countdown_reset). A pthread key's
 * destructor folds an exiting thread's counters into the totals and unlinks it.
 */
#define _GNU_SOURCE
#include "core.h"

#include <errno.h>
#include <pthread.h>
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
    pthread_mutex_lock(&threads_lock);
    if (t->registered) {
        threads_add(&threads_dead, t);
        threads_unlink(t);
    }
    pthread_mutex_unlock(&threads_lock);
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
    pthread_mutex_lock(&threads_lock);
    t->prev = NULL;
    t->next = threads_head;
    if (threads_head)
        threads_head->prev = t;
    threads_head = t;
    t->registered = 1;
    pthread_mutex_unlock(&threads_lock);
    pthread_setspecific(threads_key, t);
}

void hs_counters_read(hs_counters_t *out)
{
    pthread_mutex_lock(&threads_lock);
    *out = threads_dead;
    out->threads = 0;
    for (hs_tls_t *t = threads_head; t; t = t->next) {
        threads_add(out, t);
        out->threads++;
    }
    pthread_mutex_unlock(&threads_lock);
}

void hs_threads_lock(void)
{
    pthread_mutex_lock(&threads_lock);
}

void hs_threads_unlock(void)
{
    pthread_mutex_unlock(&threads_lock);
}

/* In a forked child only the forking thread survives: the others' counters become
 * history. Called with threads_lock held (taken in the prepare handler). */
void hs_threads_after_fork_child(void)
{
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
    pthread_mutex_unlock(&threads_lock);
}
