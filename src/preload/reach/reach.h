/*
 * Reach (reach.c): the allocation entry points a program's calls reach without passing
 * through heapsift, found at start (and for objects loaded later) and reported.
 */
#ifndef HS_REACH_H
#define HS_REACH_H

#include <stdbool.h>

#include <stddef.h>

/* Finds them, hooks what hooks.c can, and keeps what it found and did in one line for the
 * profiles (said on stderr too with HEAPSIFT_VERBOSE=1). Once, from the constructor, while
 * one thread runs. */
void hs_reach_detect(void);

/* Objects loaded since the last look (dlopen): their Rust #[global_allocator] hooked, and
 * appended to the line (said on stderr with HEAPSIFT_VERBOSE=1). From the sampled path (no heapsift
 * lock held, outside the guard), which it is registered with once a look can find
 * something (hs_recorder_on_sample); cheap when nothing was loaded (one load, no lock). */
void hs_reach_recheck(void);

/* Fork handlers (record/fork.c, registered by reach.c): prepare waits for a look at loaded objects
 * in progress and holds off others; release, in the parent and the child, lets them run again. */
void hs_reach_fork_prepare(void);
void hs_reach_fork_release(void);

/* dl_iterate_phdr for heapsift's other callers (dumps), held off by a fork in progress
 * and holding it off, as a look at new objects does. */
struct dl_phdr_info;
int hs_reach_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);

/* The executable's own mallctl (a static jemalloc's, not exported), read from its .symtab
 * at start; NULL if none. */
void *hs_reach_mallctl(void);

/* The line for the profiles' comments ("reach: ..."), or NULL when nothing bypasses. */
const char *hs_reach_comment(void);

/* Quiet: the line goes only into the profiles and to whoever asks hs_reach_comment (attach
   prints it in the command, not in the target's stderr). */
void hs_reach_set_quiet(bool quiet);

#endif
