/*
 * The recorder (recorder.c): initialisation, the sampled path's shared steps (decide,
 * capture, record), forgetting freed samples. Called by slowpath.c and the hooks on
 * application threads, never on the non-sampled path.
 */
#ifndef HS_RECORDER_H
#define HS_RECORDER_H

#include "runtime/core.h"
#include "livetab.h"

#include <stdbool.h>
#include <stdint.h>

/* Called once the thread's countdown went <= 0 for an allocation of n bytes. Sets the
 * thread (and, the first time, the library) up; returns true when this allocation is to
 * be sampled. Never allocates itself except through hs_init under the guard. */
bool hs_sample_begin(hs_tls_t *t, uint64_t n);
/* Records a sampled allocation p of n requested bytes (no-op when p is NULL). */
void hs_sample_end(hs_tls_t *t, void *p, uint64_t n);
/* Forgets p if it was sampled. Must run before the real free of p. */
void hs_forget(void *p);
/* realloc of p, which the live filter said may be sampled, before the real realloc:
 * takes p's entry out of the tables, into *old, and returns true if p was sampled. */
bool hs_realloc_forget(void *p, hs_live_t *old);
/* After the real realloc of an old block hs_realloc_forget took out, q its result for n
 * bytes: a failed realloc (q NULL, n not 0) leaves the block, which is put back; else its
 * lifetime ends. */
void hs_realloc_done(const hs_live_t *old, const void *q, size_t n);

/* heapsift_set_active(false) sets it: sampled paths then take no new sample. */
extern int hs_inactive HS_HIDDEN;
/* A fake return address standing for "stack table full": the profile names it. */
extern const uintptr_t hs_overflow_pc HS_HIDDEN;

/* Initialises the library once. Safe to call from any allocation or the constructor.
 * Held off (returns at once) while heapsift attach holds the library (runtime/hold.h). */
void hs_init(void);
/* hs_options_load's verdict at hs_init (0: the options were good), for HEAPSIFT_PROBE
 * (triggers/lifecycle.c). */
int hs_init_options_rc(void);
/* Registers what each sample calls before its stack is taken (reach.c's look at objects
 * loaded since, once one can find something); NULL: nothing. */
void hs_recorder_on_sample(void (*fn)(void));

#endif
