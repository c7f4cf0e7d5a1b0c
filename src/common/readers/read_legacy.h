/*
 * Readers of the legacy text heap profiles: gperftools (`heap profile: ... @ heapprofile`,
 * `@ heap_v2/RATE`, `@ heap/RATE`), Go's ?debug=1 text (`@ heap/2*RATE` with `# 0x...`
 * frame comments) and jemalloc's threaded `heap_v2/RATE`, each with its MAPPED_LIBRARIES
 * section. They produce the one model (profile.h) with the values unsampled the way the
 * reference tool for the format does it: pprof's legacy_profile.go for the `heap profile:`
 * family, jeprof for jemalloc. Pure functions of their input: no I/O, no globals.
 */
#ifndef HS_READ_LEGACY_H
#define HS_READ_LEGACY_H

#include "model/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when data (already inflated) starts like a legacy heap profile. */
bool hs_legacy_detect(const uint8_t *data, size_t len);

/* Parses a legacy heap profile. Returns 0 and a new profile in *out, or -EINVAL with
 * "line N: <what is wrong>" in err, or -ENOMEM. */
int hs_legacy_parse(const uint8_t *data, size_t len, hs_profile_t **out, char *err, size_t errlen);

/* Go ?debug=1 text, once read (read_legacy_go.c): names the unnamed root frames
 * runtime.goexit and prunes the allocator's frames as pprof does. 0 or -ENOMEM. */
int hs_legacy_go_finish(hs_profile_t *p);

/* The regular expressions pprof puts in drop_frames / keep_frames of legacy heap
 * profiles, so that allocator frames are pruned from the leaf side of every stack. */
extern const char hs_legacy_alloc_drop_rx[];
extern const char hs_legacy_alloc_keep_rx[];
/* jeprof's allocator frames (its RemoveUninterestingFrames), the drop_frames of a jemalloc
 * heap_v2 file: jeprof is that format's reference reader. */
extern const char hs_legacy_jeprof_drop_rx[];

#endif
