/*
 * The copy-on-write snapshot a leak check scans (snapshot.c): a fork of the process, made
 * while the other threads are stopped, whose child scans its own copy of the memory and
 * hands its answer back through a page shared with the parent; the threads go again as
 * soon as the copy exists. Called by reachscan.c only. See docs/leaks.md.
 */
#ifndef HS_SNAPSHOT_H
#define HS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The child's answer, in memory shared with the parent (mapped before the fork). */
typedef struct {
    uint32_t done; /* 1 once the child wrote the rest */
    int rc;        /* its scan: 0 or -errno */
    uint64_t root_bytes, block_bytes, skipped_bytes, untouched_bytes;
    uint32_t mappings;
    int64_t cpu_ns;     /* the child's CPU time */
    uint8_t reached[8]; /* one byte per block (n of them; the mapping has room) */
} hs_snap_out_t;

typedef struct {
    hs_snap_out_t *out;
    size_t out_len;
    pid_t pid;       /* the child; 0: none */
    int64_t fork_ns; /* the clone system call, in the pause */
    char test[200];  /* HEAPSIFT_TEST_SNAPSHOT's path prefix ("": none) */
    bool lost;       /* forked, but no answer came: the scan is made again, stopped */
    char why[200];   /* why the scan did not use a snapshot ("": it did) */
} hs_snap_t;

/* Whether a snapshot may be taken: HEAPSIFT_LEAKS_SNAPSHOT, MADV_DONTFORK memory (smaps
 * "dc"), MADV_WIPEONFORK memory not heapsift's ("wf"), the memory.max of the cgroup and its
 * ancestors against the copy's page tables. Before anything stops (reads files). 0, or -errno with
 * why set. */
int hs_snap_check(hs_snap_t *s);
/* The least room (memory.max - memory.current, 0 when over) of cgroup v2 directory dir
 * ("/a/b", as /proc/self/cgroup's "0::" line names it) and of each ancestor, as the files
 * under root ("/sys/fs/cgroup") show them; *at gets the directory of that least room.
 * False when no level has both files with a number (no limit: "max"). Reads files. */
bool hs_snap_cgroup_room(const char *root, const char *dir, unsigned long long *room, char *at,
                         size_t cap);
/* Maps the answer for n blocks. 0, or -ENOMEM with why set. */
int hs_snap_map(hs_snap_t *s, size_t n);
/* The fork (raw clone, exit signal 0: no SIGCHLD, no atfork handler, invisible to the
 * program's waitpid(-1)), every signal blocked around it. Threads stopped. Returns 0 in
 * the child, the child's pid in the parent, -errno (why set) when refused. */
pid_t hs_snap_fork(hs_snap_t *s);
/* In the child, before its scan: closes its copies of the descriptors, offers itself
 * first to the OOM killer, dies with its parent; the test hook waits here. */
void hs_snap_child_begin(const hs_snap_t *s);
/* In the child: exit_group, nothing of the program's exit runs. */
__attribute__((noreturn)) void hs_snap_child_exit(int status);
/* In the parent, threads released: waits for the child (reaped with __WCLONE). 0 when it
 * answered (s->out), or -errno with why set. */
int hs_snap_wait(hs_snap_t *s);
void hs_snap_free(hs_snap_t *s);

#endif
