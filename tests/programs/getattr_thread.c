/*
 * getattr_thread: threads whose first allocation is the calloc that pthread_getattr_np
 * makes while it holds the thread's lock, as Rust's std does in every thread it starts.
 * At HEAPSIFT_RATE=1 that calloc is sampled, and the unwinder must find the thread's stack
 * without calling pthread_getattr_np again (which waited for the same lock forever).
 * tests/integration/unwind_getattr.sh runs it. Prints "getattr_thread: done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8

void *volatile getattr_kept[THREADS]; /* read by nobody: kept live, not elided */

/* A site of known size after the call, so the stack through the thread is checked too
 * (stores, not tail calls, keep both frames on it). */
__attribute__((noinline)) static void getattr_site(int i)
{
    getattr_kept[i] = malloc(4000);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void *getattr_run(void *arg)
{
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0)
        pthread_attr_destroy(&attr);
    getattr_site((int)(long)arg);
    __asm__ volatile("" ::: "memory");
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, getattr_run, (void *)i) != 0)
            return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    puts("getattr_thread: done");
    return 0;
}
