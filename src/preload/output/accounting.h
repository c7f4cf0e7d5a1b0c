/*
 * Accounting (accounting.c): what the process really holds, for the profile's comments
 * and the stats endpoint: RSS by kind of mapping, the allocator's own figures, and the
 * profiler's overhead.
 */
#ifndef HS_ACCOUNTING_H
#define HS_ACCOUNTING_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

enum { HS_ALLOC_UNKNOWN, HS_ALLOC_GLIBC, HS_ALLOC_JEMALLOC, HS_ALLOC_TCMALLOC };
/* Their names in the comments and the stats JSON, by HS_ALLOC_*. */
extern const char *const hs_alloc_names[4];

typedef struct {
    /* /proc/self/smaps_rollup */
    uint64_t rss, anon, file, swap;
    /* /proc/self/smaps, resident bytes by kind of mapping */
    uint64_t heap;       /* the allocator's own mappings (glibc: [heap], arenas, mmapped
                          * chunks; jemalloc: stats.resident) */
    uint64_t stacks;     /* [stack] and thread stacks (an rw mapping above a guard page) */
    uint64_t code;       /* file-backed mappings: code, read-only data, mapped files */
    uint64_t other_anon; /* every other anonymous mapping: the program's own mmaps, data */
    /* the profiler: its mmap'd tables (inside other_anon) and what it keeps on the heap */
    uint64_t prof_maps, prof_heap;
    uint64_t threads; /* the process's threads (/proc/self/status), 0 if unread */
    int allocator;    /* HS_ALLOC_* */
    bool unread;      /* the allocator's statistics were not read (hs_acct_read_maps_ex) */
    /* glibc (mallinfo2): arena, mmap, mmap_chunks, in_use, free, releasable;
     * jemalloc (mallctl stats.*): allocated, active, metadata, resident, retained, mapped;
     * tcmalloc (MallocExtension's numeric properties): allocated, heap_size, pageheap_free,
     * unmapped, central_free (central and transfer caches), thread_free */
    uint64_t a[6];
} hs_acct_t;

/* Reads /proc and the allocator's statistics. Guard held; no lock held (mallinfo2 takes
 * the allocator's). Fields it cannot read stay 0. */
void hs_acct_read(hs_acct_t *a);
/* The same from maps, the text of /proc/self/maps the caller read just before (NULL: read
 * it here), in own bytes of its own memory, counted as the profiler's. */
void hs_acct_read_maps(hs_acct_t *a, const char *maps, size_t len, uint64_t own);
/* The same, the allocator's statistics read only when stats: not when a thread of the
 * program's may be stopped inside the allocator holding its locks (mallinfo2 and
 * jemalloc's stats take them all), as in the exit profile of a terminating signal. */
void hs_acct_read_maps_ex(hs_acct_t *a, const char *maps, size_t len, uint64_t own, bool stats);
/* Formats the accounting as profile comments, one per line; returns the count. */
int hs_acct_format(const hs_acct_t *a, char lines[][200], int max);
/* Fills a->prof_maps and a->prof_heap (and takes prof_maps out of a->other_anon). */
void hs_acct_profiler(hs_acct_t *a);
/* Registers the heap a part above counts for itself, added to prof_heap (triggers.c's
 * kept file names, from its constructor). */
void hs_acct_own_mem(uint64_t (*fn)(void));
/* The comment naming the process: "process: pid=N cmdline=ARGS" (its /proc/self/cmdline,
 * arguments separated by spaces, cut at cap with "..."), so that the profiles of a tree
 * of processes (a browser's renderers, a shell's helpers) can be told apart. */
void hs_acct_process(char *line, size_t cap);
/* The process's resident set size in bytes (/proc/self/statm), 0 if unreadable. */
uint64_t hs_acct_rss_fast(void);

#endif
