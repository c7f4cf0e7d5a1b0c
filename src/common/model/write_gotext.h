/*
 * Writer of Go's legacy heap text (`/debug/pprof/heap?debug=1`): the `heap profile:`
 * header, one record per sample with the sampled (unscaled) counts and return addresses,
 * `#` comment lines naming each frame, and the mappings as a MAPPED_LIBRARIES section.
 * pprof's legacy parser and read_legacy.c read it back, unscaling with the same formula,
 * so a rate-1 profile round-trips exactly. Used by the HTTP endpoint in the profiled
 * process (guard held, so malloc is the real allocator); owns only what it appends.
 */
#ifndef HS_WRITE_GOTEXT_H
#define HS_WRITE_GOTEXT_H

#include "base/buf.h"
#include "profile.h"

/* Appends p (a heap profile with alloc_objects, alloc_space, inuse_objects and
 * inuse_space; its period is the sampling rate) as Go's debug=1 text. Comments of p are
 * written as "# " lines after the records. Returns 0, -ENOMEM, or -EINVAL when p lacks a
 * heap sample type. */
int hs_write_gotext(const hs_profile_t *p, hs_buf_t *out);

#endif
