/*
 * Stack capture for the sampled allocation path. One small table of unwinder variants
 * (unwind_dwarf.c, unwind_libgcc.c, unwind_fp.c), chosen once by
 * HEAPSIFT_UNWIND.
 * Called with the reentrancy guard held (a variant may allocate on first use), before
 * any profiler lock is taken. Never called on the non-sampled path.
 */
#ifndef HS_UNWIND_H
#define HS_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define HS_MAX_DEPTH 256

/* Selects the variant by name ("dwarf", "libgcc", "fp"; NULL or "" = the
 * default, dwarf). Returns 0, or -EINVAL for an unknown name. */
int hs_unwind_init(const char *method);

/* Frames whose return address lies in [lo, hi) are dropped from the top of every
 * captured stack (the profiler's own code), together with the few frames of the unwinder
 * itself that may precede them. lo == hi disables it. */
void hs_unwind_set_skip_range(uintptr_t lo, uintptr_t hi);
/* A function of another object that allocates through a hooked entry point (libstdc++'s
 * operator new calling malloc, when attached): its frame, right after ours, is dropped
 * too, so the allocation's site is its caller, as when heapsift's own operator new is
 * called. [lo, hi) is its code; up to 16 ranges, the others ignored. */
void hs_unwind_add_wrapper(uintptr_t lo, uintptr_t hi);

/* The range last set (read with relaxed loads). */
extern uintptr_t hs_unwind_skip_lo __attribute__((visibility("hidden")));
extern uintptr_t hs_unwind_skip_hi __attribute__((visibility("hidden")));

/* Captures up to max return addresses of the calling thread, innermost first, after
 * dropping the leading frames inside the skip range. Returns the number stored. */
size_t hs_unwind_capture(uintptr_t *pcs, size_t max);

/* Runs one capture with the selected variant so that its one-time work (libgcc_s lookup,
 * also for dwarf's fallback; this thread's stack bounds) happens now
 * rather than inside the first sampled allocation. Call with the reentrancy guard held. */
void hs_unwind_warmup(void);

/* The variants, each filling pcs innermost first (the variant's own frame included or
 * not: the skip range removes it). Exposed for the unit test that runs all of them. */
size_t hs_unwind_dwarf(uintptr_t *pcs, size_t max);
size_t hs_unwind_libgcc(uintptr_t *pcs, size_t max);
/* Looks libgcc_s's functions up, once (what hs_unwind_libgcc's first call does first). */
void hs_unwind_libgcc_resolve(void);
size_t hs_unwind_fp(uintptr_t *pcs, size_t max);

/* Captures the dwarf variant sent to hs_unwind_libgcc since start-up (a frame it cannot
 * follow, or a stack it does not know). */
uint64_t hs_unwind_dwarf_fallbacks(void);

/* Forgets the dwarf variant's cached rules. Call when the loader has unloaded objects
 * (dlpi_subs moved): code loaded later at the same addresses must not inherit them.
 * Lock-free; captures running meanwhile may still use a rule read before. */
void hs_unwind_dwarf_invalidate(void);

/* Prefetches the dwarf variant's cached rules for the return addresses the calling
 * thread's last walk looked up first (8 lines, no loads beyond this thread's own list).
 * Call at the start of a sampled allocation; with another variant the list stays empty
 * and the request is for one line. */
void hs_unwind_dwarf_prefetch(void);

#endif
