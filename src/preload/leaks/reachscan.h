/*
 * Reachability of the sampled blocks: a conservative scan of the process's writable
 * memory for words that point into a sampled live block (at its start or inside it),
 * then from the blocks found through the blocks they point to. See reachscan.c and
 * docs/leaks.md. Runs at exit (leaks.c) with the guard held; never on an allocation path.
 */
#ifndef HS_REACHSCAN_H
#define HS_REACHSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One sampled block as the scan copied it from the live table. */
typedef struct {
    uintptr_t addr, end; /* [addr, end); end = addr + max(size, 1) */
    uint64_t size;       /* requested bytes */
    double weight;       /* objects this sample stands for */
    int32_t stack_id;
    uint32_t reached; /* 1: some pointer from a root or a reached block points into it */
} hs_rs_block_t;

typedef struct {
    hs_rs_block_t *blocks; /* sorted by addr; mmap'd, hs_reachscan_free unmaps it */
    size_t n;
    size_t reached;           /* blocks reached */
    uint64_t root_bytes;      /* bytes of roots read (mappings minus the sampled blocks) */
    uint64_t block_bytes;     /* bytes of reached blocks read */
    uint64_t skipped_bytes;   /* bytes that could not be read (changed or gone) */
    uint64_t untouched_bytes; /* bytes not read: pages neither present nor swapped (zeros) */
    uint32_t mappings;        /* mappings scanned as roots */
    int64_t ns;               /* wall time of the whole scan */
    int64_t cpu_ns;           /* CPU time of the scanning thread during it */
    /* The other threads (stopworld.c): stopped, left running because they block the
     * signal (heapsift's own, or the program's), or left running because they did not
     * answer in time; the time to stop them and the whole pause (first signal to release).
     * stop_rc: why none was stopped (-errno), 0 if they were. */
    uint32_t threads_stopped, threads_blocked, threads_unanswered;
    int stop_rc;
    int64_t stop_ns, pause_ns;
    /* The snapshot (snapshot.c): scanned a fork's copy, the fork's time; why not if not. */
    bool snapshot;
    int64_t fork_ns;
    char snap_why[200];
    size_t map_len; /* internal: bytes mapped for blocks + worklist */
    uint32_t *work; /* internal: the worklist */
} hs_reachscan_t;

/* Stops the other threads (stopworld.c), copies the live table and classifies every
 * block: in a fork's copy-on-write snapshot taken while they are stopped (snapshot.c),
 * released once it exists, or, where no snapshot can be taken, with the threads stopped
 * until the scan ends (r->snap_why says why). Guard held, no lock held but the dump lock; one of
 * heapsift's own threads or the exiting thread, never an allocation path. Returns 0, or -errno
 * (-ENOMEM, or the error of process_vm_readv when the kernel refuses it: then no block is
 * classified). On success the caller frees r with hs_reachscan_free. at_exit: the process is
 * ending and no thread needs to go on, so no snapshot is taken (a child's scan costs
 * several times the CPU of one in place) and the comment says so. */
int hs_reachscan_run(hs_reachscan_t *r, bool at_exit);
void hs_reachscan_free(hs_reachscan_t *r);

/* Adds the weight (objects) and weight * size (bytes) of each unreached block to
 * objects[stack_id] and bytes[stack_id]; ids >= nstacks are ignored. */
void hs_reachscan_unreached(const hs_reachscan_t *r, double *objects, double *bytes,
                            size_t nstacks);

#endif
