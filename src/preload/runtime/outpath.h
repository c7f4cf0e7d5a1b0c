/*
 * The output path pattern (outpath.c): what a dump's file is called.
 */
#ifndef HS_OUTPATH_H
#define HS_OUTPATH_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this process puts its pid into a pattern that lacks %p: a forked child
 * (forked), or an exec'd descendant under `heapsift run` (HEAPSIFT_ROOT_PID). */
bool hs_outpath_needs_pid(bool forked);

/* Expands %p, %n, %k and %% of pat into out (any other %X is kept). A pattern without
 * them still names every file apart: ".<pid>" where hs_outpath_needs_pid, ".<kind>" unless
 * the kind is heap, and ".<n>" (seq) unless this is an exit dump (final). */
void hs_outpath_expand(const char *pat, const char *kind, unsigned seq, bool final, bool forked,
                       char *out, size_t cap);

/* Inserts text into a path out made by hs_outpath_expand, before its ".pb.gz" (or at
 * its end). */
void hs_outpath_mark(char *out, size_t cap, const char *text);

#endif
