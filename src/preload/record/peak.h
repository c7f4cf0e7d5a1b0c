/*
 * The kept peak: the running estimate of the sampled live heap, kept by the sampled
 * paths, and a copy of the live set per stack at its highest, taken by the trigger thread
 * when the estimate passes the armed threshold (HEAPSIFT_PEAK) and written as the "peak"
 * profile. The copy is guarded by the peak lock (HS_RANK_PEAK, a leaf: only copies and
 * swaps under it).
 */
#ifndef HS_PEAK_H
#define HS_PEAK_H

#include "runtime/core.h"
#include "runtime/options.h"
#include "runtime/threads.h"

#include <stdbool.h>
#include <stdint.h>

/* Weighted live bytes of the sampled objects (sum of weight * size), kept by the
 * sampled alloc and free paths; the peak trigger resynchronises it with the table. */
extern int64_t hs_live_est HS_HIDDEN;
/* hs_live_est above this wakes the profiler thread (INT64_MAX: disarmed). */
extern int64_t hs_peak_arm HS_HIDDEN;

/* The estimate passed the arm: disarms it and calls the waker registered (the trigger
 * thread's, triggers.c), which snapshots. Cold: once per arm. */
void hs_peak_poke(void) HS_COLD;
/* Registers what hs_peak_poke calls (one waker; from triggers.c's constructor). */
void hs_peak_set_waker(void (*wake)(void));

/* Sampled path only: adds d to the live estimate and wakes the peak trigger when armed.
 * Without HEAPSIFT_PEAK (fixed at start) nothing reads the estimate, and the add is
 * skipped: one line fewer that every sample and sampled free of every thread writes. */
static inline void hs_live_add(int64_t d)
{
    if (!hs_opt.peak)
        return;
    int64_t v = __atomic_add_fetch(&hs_live_est, d, __ATOMIC_RELAXED);
    if (HS_UNLIKELY(v > __atomic_load_n(&hs_peak_arm, __ATOMIC_RELAXED)))
        hs_peak_poke();
}

/* Considers the live set now as a peak (before writing the kept peak; guard held). */
void hs_peak_now(void);
/* Forgets the kept peak (heapsift_reset). */
void hs_peak_reset(void);
/* The trigger thread, woken by the armed estimate: snapshot the live set, keep it if it
 * is a new peak, and resynchronise the running estimate with the table. Guard held. */
void hs_peak_check(void);
/* Re-arms the sampled path's wake-up a little above the kept peak. */
void hs_peak_rearm(void);
/* Live bytes of the kept peak (0: none), read without the lock. */
int64_t hs_peak_bytes(void);
/* Bytes the kept peak holds on the heap. */
uint64_t hs_peak_mem(void);
/* Fork handlers (fork.c's): the peak lock. */
void hs_peak_lock(void);
void hs_peak_unlock(void);

/* The kept peak: per stack id, alloc_objects, alloc_space, inuse_objects, inuse_space
 * as of the peak. */
typedef struct {
    double (*v)[4];
    uint32_t n;
    uint64_t samples;       /* live samples at the peak */
    double objects, bytes;  /* live totals at the peak */
    int64_t time_ns;        /* wall clock of the peak */
    hs_counters_t counters; /* exact counters at the peak */
} hs_peak_t;
/* Copies the kept peak into *out (out->v from malloc; the caller frees it; guard held).
 * Returns false when no peak was kept yet. */
bool hs_peak_copy(hs_peak_t *out);

#endif
