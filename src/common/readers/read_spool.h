/*
 * The spool reader (read_spool.c): a spool that HEAPSIFT_SPOOL left (spool_fmt.h,
 * docs/postmortem.md) as a heap profile, its frames left for hs_profile_symbolize.
 */
#ifndef HS_READ_SPOOL_H
#define HS_READ_SPOOL_H

#include "model/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether data starts with the spool's magic. */
bool hs_spool_detect(const uint8_t *d, size_t len);

/* Reads the spool data[0..len); mtime_ns is the file's modification time (0: unknown),
 * the later of it and the spool's own last update naming when the process ended. The
 * profile's comments say whether the process is still running (a snapshot) or ended
 * without exiting (recovered). Returns 0, -EINVAL for a truncated, corrupted or foreign
 * file (err says what and where) or -ENOMEM. */
int hs_spool_parse(const uint8_t *data, size_t len, int64_t mtime_ns, hs_profile_t **out, char *err,
                   size_t errlen);

#endif
