/*
 * Stopping the program's other threads for the reachability scan (stopworld.c): each is
 * sent a realtime signal whose handler saves the thread's general registers in a slot
 * and waits on a futex until the scan releases it. heapsift's own threads (every signal
 * blocked) are left running. See docs/leaks.md.
 */
#ifndef HS_STOPWORLD_H
#define HS_STOPWORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HS_SW_SIGNAL_FROM_MAX 2 /* the signal: SIGRTMAX - 2 (62 on Linux/glibc) */
#define HS_SW_REGS 23           /* x86-64's gregs: NGREG */

/* One thread of the program. regs and sp are valid when state is HS_SW_STOPPED. */
typedef struct {
    pid_t tid;
    uint32_t state;  /* HS_SW_* */
    uintptr_t sp;    /* its stack pointer when the signal came */
    uintptr_t pc_to; /* set by the stopper before the release: resume there (0: where it was) */
    uint64_t regs[HS_SW_REGS];
} hs_sw_slot_t;

enum { HS_SW_SENT = 1, HS_SW_STOPPED, HS_SW_BLOCKED, HS_SW_GONE };

typedef struct {
    hs_sw_slot_t *slots; /* mmap'd: cap slots */
    size_t n, cap, map_len;
    uint32_t stopped;    /* threads that answered */
    uint32_t blocked;    /* threads with the signal blocked (heapsift's own, or the program's) */
    uint32_t unanswered; /* signalled, no answer within the timeout: left running */
    uint32_t overflow;   /* threads beyond cap: left running */
    int64_t stop_ns;     /* from the first signal to the last answer (or the timeout) */
    int64_t pause_ns;    /* from the first signal to the release (set by hs_sw_resume) */
    int64_t t0;
    bool active;
} hs_sw_t;

/* Installs the handler (once per process) and maps room for the slots. May allocate and
 * take locks: call it before anything is stopped. 0 or -errno (then nothing stops). */
int hs_sw_prepare(hs_sw_t *w);
/* Stops every thread of the process but the caller and those blocking the signal; waits
 * at most timeout_ms for them to answer. Takes no lock and allocates nothing. */
void hs_sw_stop(hs_sw_t *w, int timeout_ms);
/* Lets them go; waits (bounded) until every handler has left. */
void hs_sw_resume(hs_sw_t *w);
void hs_sw_free(hs_sw_t *w);
/* Tests only (test_stopworld_again): when defined, the handler calls it after it has left,
 * before it returns: the window sw_wait_unmasked (stopworld.c) waits out, made wide.
 * Hidden: only a definition linked into the same object can bind it. */
extern void hs_sw_test_left(void) __attribute__((weak, visibility("hidden")));
/* The slot range, so the scan can leave it out of the roots and read the registers. */
bool hs_sw_owns(const hs_sw_t *w, uintptr_t lo, uintptr_t hi);

#endif
