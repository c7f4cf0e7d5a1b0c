/*
 * Unit test of stopworld.c's stops back to back, as reach.c makes them when several
 * libraries are loaded at once, or reachscan.c at consecutive checks: a thread stopped
 * and released must be stopped again by the next stop, however soon it comes. After its
 * handler has left, the thread's mask blocks the signal until its sigreturn; a stop in
 * that window took it for a thread that blocks the signal and left it running
 * (test_patch_live crashed in the patched bytes, 8 runs in 300 under load). The window
 * is made wide here: the handler spins 1 ms after it has left (hs_sw_test_left). A last
 * stop follows one whose handler spins 3 s, as a thread starved on a loaded machine can
 * take that long to reach its sigreturn: the release waits for it (10 s at most), so that
 * stop too finds the thread and stops it.
 */
#define _GNU_SOURCE
#include "check.h"
#include "runtime/stopworld.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static int spin_stop;
static uint64_t spins;
static long left_spin_ns = 1000000;

void hs_sw_test_left(void)
{
    struct timespec t0, t;
    long ns = __atomic_load_n(&left_spin_ns, __ATOMIC_RELAXED);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* One stop and release; what it found. */
static void stop_once(uint32_t *blocked, uint32_t *stopped)
{
    hs_sw_t w;
    *blocked = *stopped = 0;
    if (hs_sw_prepare(&w) != 0) {
        CHECK(0, "hs_sw_prepare failed");
        return;
    }
    /* 10 s: the bound for a thread starved on a loaded machine, not a wait */
    hs_sw_stop(&w, 10000);
    *blocked = w.blocked;
    *stopped = w.stopped;
    hs_sw_free(&w);
}

static void *spinner(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED))
        __atomic_add_fetch(&spins, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    pthread_t th;
    int rounds = 500, blocked = 0, stopped = 0, other = 0;
    uint32_t nb, ns;
    CHECK(pthread_create(&th, NULL, spinner, NULL) == 0, "thread");
    while (__atomic_load_n(&spins, __ATOMIC_RELAXED) == 0) {
    }
    for (int i = 0; i < rounds; i++) {
        stop_once(&nb, &ns);
        blocked += nb > 0;
        stopped += ns == 1;
        other += ns != 1 && nb == 0;
    }
    printf("test_stopworld_again: %d stops back to back: %d stopped the thread, %d took it for "
           "one that blocks the signal, %d neither\n",
           rounds, stopped, blocked, other);
    CHECK(blocked == 0, "%d of %d stops left the thread running as 'blocked'", blocked, rounds);
    CHECK(stopped == rounds, "the thread was stopped in %d of %d stops", stopped, rounds);

    /* A release whose thread takes 3 s to reach its sigreturn, then a stop at once. */
    __atomic_store_n(&left_spin_ns, 3000000000L, __ATOMIC_RELAXED);
    stop_once(&nb, &ns);
    CHECK(ns == 1, "the stop before the slow sigreturn stopped %u threads, want 1", ns);
    __atomic_store_n(&left_spin_ns, 1000000L, __ATOMIC_RELAXED);
    stop_once(&nb, &ns);
    printf("test_stopworld_again: after a handler that left 3 s before its sigreturn: %u "
           "stopped, %u taken for blocking the signal\n",
           ns, nb);
    CHECK(nb == 0 && ns == 1,
          "after a sigreturn 3 s late, the next stop took the thread for one that blocks the "
          "signal (%u) or did not stop it (%u stopped)",
          nb, ns);
    __atomic_store_n(&spin_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    return hs_check_done("test_stopworld_again");
}
