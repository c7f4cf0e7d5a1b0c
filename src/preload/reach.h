/*
 * Reach (reach.c): the allocation entry points a program's calls reach without passing
 * through heapsift, found at start (and for objects loaded later) and reported.
 */
#ifndef HS_REACH_H
#define HS_REACH_H

/* Finds them, hooks what hooks.c can, and says what it found and did in one line on
 * stderr. Once, from the constructor, while one thread runs. */
void hs_reach_detect(void);

/* Objects loaded since the last look (dlopen): their Rust #[global_allocator] hooked, and
 * said on stderr and appended to the line. From the sampled path (no heapsift lock held,
 * outside the guard); cheap when nothing was loaded (one dl_iterate_phdr step). */
void hs_reach_recheck(void);

/* The line for the profiles' comments ("reach: ..."), or NULL when nothing bypasses. */
const char *hs_reach_comment(void);

#endif
