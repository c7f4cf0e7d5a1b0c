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

#include "model/spool_fmt.h"

/* Whether the process that wrote spool header h still runs: its pid exists and started
 * before the spool was made (a pid reused later started after). A pid of a PID namespace
 * other than the reader's (pid_ns) names another process here: taken for ended. */
bool hs_spool_alive(const hs_spool_header_t *h);
/* Whether h's pid is of a PID namespace other than the reader's. */
bool hs_spool_pid_foreign(const hs_spool_header_t *h);

/* Reads the spool data[0..len); mtime_ns is the file's modification time (0: unknown),
 * the later of it and the spool's own last update naming when the process ended. The
 * profile's comments say whether the process is still running (a snapshot) or ended
 * without exiting (recovered). Returns 0, -EINVAL for a truncated, corrupted or foreign
 * file (err says what and where) or -ENOMEM. */
int hs_spool_parse(const uint8_t *data, size_t len, int64_t mtime_ns, hs_profile_t **out, char *err,
                   size_t errlen);

#endif
