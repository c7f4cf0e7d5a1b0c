/*
 * The spool (spool.c; docs/postmortem.md): with HEAPSIFT_SPOOL set, the live samples, the
 * stacks they name and the executable mappings are mirrored into a file-backed shared
 * mapping, so a process killed without warning (SIGKILL, the OOM killer) leaves a file
 * `heapsift recover` turns into a profile. Called on the sampled path and at the free of
 * a sampled block only; every function is a no-op returning at once when no spool is
 * open.
 */
#ifndef HS_SPOOL_H
#define HS_SPOOL_H

#include "livetab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens the spool HEAPSIFT_SPOOL names (from the constructor, before the program runs;
 * never from inside an allocation). On any failure it says so once and the process goes
 * on with its tables in memory only. */
void hs_spool_open(void);

/* A new live sample e: its slot (1-based, kept in e->spool), or 0 when there is no spool
 * or it is full. Sampled path, guard held, no lock held. */
uint32_t hs_spool_put(const hs_live_t *e);
/* The sampled block of slot (hs_spool_put's answer) is freed: the slot is cleared. */
void hs_spool_drop(uint32_t slot);
/* Stack id is being interned: appends it. Called by the stack table under its lock,
 * before the id is published. Never allocates. */
void hs_spool_stack(int32_t id, const uintptr_t *pcs, size_t depth);
/* A new stack's addresses: lists the loaded objects' executable segments again when one of
 * them lies in none listed (a library loaded since), at most 64 times, from the dynamic
 * loader's list (dl_iterate_phdr) and the build ids in memory: no file is read, so neither
 * the I/O thread (whose start needs the loader's lock, which a dlopen sampled here holds)
 * nor a sandbox's refusal is in the way. Sampled path, guard held, no lock held. */
void hs_spool_maps(const uintptr_t *pcs, size_t depth);

/* Calls fn with each spool mapping of the process, [lo, hi): its own, its spares, and the
 * parent's that a raw clone's child took a spare in place of. Their live slots hold the
 * address of every sampled block, so the leak check's scan must not count them as roots. */
void hs_spool_ranges(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg);

/* The owner token's page (MADV_WIPEONFORK, 4 KiB), or NULL: the leak check's snapshot
 * knows it for heapsift's own, holding no pointer of the program's. */
const void *hs_spool_token(void);

/* Normal exit, after the exit profiles: removes the file unless HEAPSIFT_KEEP_SPOOL=1. The
 * mapping stays (other threads may still free sampled blocks). */
void hs_spool_exit(void);
/* Exit under a sandbox (sandbox.h), where no profile can be written: marks the spool as
 * the process's profile, with no system call but the clock's (vDSO), and says whether
 * there is one. The file stays for `heapsift run` or `heapsift recover`. */
bool hs_spool_sandboxed(void);
/* A process that writes no exit profile (no sample, or ended by _exit alone): the spool
 * is removed, or under a sandbox marked so (filtered_ns -1) for heapsift run to remove. */
void hs_spool_discard(void);
/* A forked child writes nothing into its parent's spool. */
void hs_spool_after_fork_child(void);
/* Later in the same child, once descriptors work again (iothread.h): a child of a process
 * with a rescue spool (heapsift run's) gets one of its own, a copy of its parent's as the
 * fork left it, so that a child that is sandboxed next (Firefox's content processes come
 * from its fork server) still leaves its profile. A sample its parent's other threads took
 * or freed while it was being copied may be counted wrongly there. */
void hs_spool_fork_copy(void);

#endif
